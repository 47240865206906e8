"""Block-sparse density chart: useful TFLOP/s and speedup over dense flash2 against
the mask's density, one figure per dtype.

Entries come from the `density` sweep group (harness/presets.cpp): one shape, masks `none` and
block-sparse masks (BigBird random blocks `random:b,r`, user layouts). Density of an entry = its
useful FLOPs / the dense FLOPs 4·d·Nq·Nkv·B·H, i.e. the fraction of visible (query, key) pairs
(the FLOP model counts exactly 4·d per visible pair). Speedup = time of the fastest dense
(`none`) flash2 entry of the same run, dtype and shape / time of the entry; the dotted line
1/density is what skipping every invisible pair would give at equal throughput.
"""
from __future__ import annotations

from . import style
from .chart import Built, Chart
from .data import Dataset, Entry, best_by

GROUP = "density"
DENSE = "none"
BASELINE = "flash2"


def density(e: Entry) -> float | None:
    dense = 4.0 * e.d * e.Nq * e.Nkv * e.B * e.H
    return e.flops / dense if e.flops and dense > 0 else None


def _shape(e: Entry) -> tuple:
    return (e.run, e.backend, e.B, e.H, e.Hkv, e.Nq, e.Nkv, e.d)


def build_dtype(ds: Dataset, dtype: str, notes: list[str]) -> Chart | None:
    sel = [e for e in ds.entries if e.ok and e.dtype == dtype and e.group == GROUP and not e.peer]
    if not sel:
        return None
    # The dense entry from any group: a sweep keeps a configuration under its first group only
    # (quick: the masks group's none is the density group's too).
    dense = best_by([e for e in ds.entries if e.ok and e.dtype == dtype and not e.peer
                     and e.variant == BASELINE and e.mask == DENSE], key=_shape)
    best = best_by(sel, key=lambda e: (e.variant, _shape(e), e.mask))
    colors = style.colors_for(ds)
    fig = style.new_figure(10.5, 3.6)
    ax_t, ax_s = fig.subplots(1, 2)
    summary: dict = {"dtype": dtype, "points": {}, "speedup": {}}
    for v in sorted({k[0] for k in best}):
        pts = sorted((density(e), e) for (vv, _, _), e in best.items() if vv == v and density(e) is not None)
        if not pts:
            continue
        xs = [x for x, _ in pts]
        ax_t.plot(xs, [e.tflops for _, e in pts], marker="o", color=colors.get(v), label=v)
        sp = [(x, dense[_shape(e)].time_ms / e.time_ms) for x, e in pts if _shape(e) in dense]
        if sp:
            ax_s.plot([x for x, _ in sp], [y for _, y in sp], marker="o", color=colors.get(v), label=v)
            summary["speedup"][v] = [[x, y] for x, y in sp]
        summary["points"][v] = len(pts)
    if not summary["points"]:
        return None
    if not dense:
        notes.append(f"density ({dtype}): no dense {BASELINE} entry (mask {DENSE}); speedup panel empty")
    xs_all = sorted({density(e) for e in best.values() if density(e)})
    ax_s.plot(xs_all, [1.0 / x for x in xs_all], ls=":", color="grey", label="1 / density")
    for ax in (ax_t, ax_s):
        ax.set_xscale("log")
        ax.set_xlabel("density (visible pairs / all pairs)")
        ax.grid(True, which="both", alpha=0.3)
    ax_t.set_ylabel("useful TFLOP/s")
    ax_s.set_ylabel(f"speedup over dense {BASELINE}")
    ax_s.set_yscale("log")
    ax_t.legend(fontsize=8)
    ax_s.legend(fontsize=8)
    fig.suptitle(f"Block-sparse masks against density ({dtype})")
    return Chart(f"density_{dtype}", f"Block-sparse density sweep ({dtype})", fig, summary)


def build(ds: Dataset) -> Built:
    out = Built()
    for dt in ds.dtypes:
        c = build_dtype(ds, dt, out.notes)
        if c:
            out.charts.append(c)
    return out

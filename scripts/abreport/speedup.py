"""Speedup of each variant over a baseline, and TFLOP/s, against sequence length.

One panel per head dim (rows) x mask (columns), one figure per dtype. Ratios pair
entries of the same run and the same problem (tiles collapse to the fastest); library
peers (dotted, hollow markers) pair with the rows of the backend they ran beside.
"""
from __future__ import annotations

from typing import Optional

from matplotlib.lines import Line2D

from . import style
from .chart import Built, Chart
from .data import Dataset
from .views import baselines, seq_view  # noqa: F401 (speedup.baselines: used by callers)


MAX_COLS = 3


def _layout(d_vals: list[int], masks: list[str]) -> tuple[int, int]:
    """Rows = head dims and columns = masks while that fits; else the panels wrap at MAX_COLS."""
    if len(masks) <= MAX_COLS:
        return len(d_vals), len(masks)
    n = len(d_vals) * len(masks)
    return (n + MAX_COLS - 1) // MAX_COLS, MAX_COLS


def _grid(fig, d_vals: list[int], masks: list[str]):
    """Panels keyed by (d, mask), and the axes that carry the x label (bottom of each column)."""
    nrows, ncols = _layout(d_vals, masks)
    axes = fig.subplots(nrows, ncols, squeeze=False, sharex=True, sharey=True)
    keys = [(d, m) for d in d_vals for m in masks]
    flat = list(axes.flat)
    for ax in flat[len(keys):]:
        ax.set_visible(False)
    panels = dict(zip(keys, flat))
    bottom = [max((a for a in panels.values() if a.get_subplotspec().colspan.start == c),
                  key=lambda a: a.get_subplotspec().rowspan.start) for c in range(ncols)
              if any(a.get_subplotspec().colspan.start == c for a in panels.values())]
    for ax in bottom:  # a wrapped grid's last row may be short: its column's x labels stay visible
        ax.xaxis.set_tick_params(labelbottom=True)
    return panels, bottom


def baseline_notes(ds: Dataset, bases: dict[str, Optional[str]]) -> list[str]:
    """Why a run has no baseline: its file lists no variant rows, or none is tagged baseline."""
    notes = []
    for r in ds.runs:
        if bases[r.label] is not None:
            continue
        if not r.variants:
            why = ("lists no variant rows (no context.variants: written before the harness recorded "
                   "its registry), so it has no default baseline")
        else:
            why = f"has no {r.backend} row tagged baseline in context.variants"
        notes.append(f"speedup: run {r.label} {why}; speedup chart not drawn for it "
                     "(pass --baseline VARIANT)")
    return notes


def build_dtype(ds: Dataset, dtype: str, baseline: Optional[str]) -> Built:
    out = Built()
    view = seq_view(ds, dtype, baseline)
    if view is None:
        out.notes.append(f"speedup ({dtype}): no self-attention entries (Nq = Nkv)")
        return out
    pts = view.pts
    colors = style.colors_for(ds)
    d_vals, masks, seqs = view.d_vals, view.masks, view.seqs
    multi_run = view.multi_run
    bases = view.bases
    rstyle = style.run_styles([r.label for r in ds.runs])
    series = view.series_key

    # Speedup pairs: same run, same problem (views.seq_view).
    ratios: dict[str, list[tuple[int, int, str, float]]] = {
        k: [(r.entry.d, r.entry.Nq, r.entry.mask, r.ratio) for r in rs] for k, rs in view.ratios.items()}
    series_run = {k: rs[0].entry.run for k, rs in view.ratios.items()}
    series_pass = {k: rs[0].entry.pass_ for k, rs in view.ratios.items()}
    peer_series = {series(e) for e in pts if e.peer}

    nrows, ncols = _layout(d_vals, masks)
    width, height = 4.0 * ncols + 2.6, 2.9 * nrows + 0.6
    base_names = view.base_names

    # TFLOP/s against sequence length
    fig = style.new_figure(width, height)
    panels, axes = _grid(fig, d_vals, masks)
    counts: dict[str, int] = {}
    handles: dict[str, Line2D] = {}
    for (d, m), ax in panels.items():
        sel = [e for e in pts if e.d == d and e.mask == m]
        for key in sorted({series(e) for e in sel}):
            s = sorted((e for e in sel if series(e) == key), key=lambda e: e.Nq)
            v = s[0].variant
            ls, mk = rstyle[s[0].run] if multi_run else ("--" if v == bases[s[0].run] else "-",
                                                          style.PASS_MARKER[s[0].pass_])
            line = style.peer_line() if s[0].peer else {"marker": mk, "markersize": 3.5, "linestyle": ls}
            h, = ax.plot([e.Nq for e in s], [e.tflops for e in s], color=colors[v], label=key, **line)
            handles.setdefault(key, h)
            counts[key] = counts.get(key, 0) + len(s)
        _decorate(ax, d, m, seqs, "TFLOP/s", sel)
    for ax in axes:
        ax.set_xlabel("sequence length N (= Nq = Nkv)")
    fig.suptitle(f"TFLOP/s vs sequence length — {ds.title_suffix(dtype)}")
    style.section_legend(style.top_right(fig), [("variant", [handles[k] for k in sorted(handles)])])
    out.charts.append(Chart(stem=f"tflops_seq_{dtype}", title=f"TFLOP/s vs sequence length ({dtype})",
                            fig=fig, summary={"dtype": dtype, "points": counts,
                                              "panels": [f"d={d} {m}" for d, m in panels]}))

    if not ratios:
        if not base_names:  # no run has a baseline: build() said why
            return out
        out.notes.append(f"speedup ({dtype}): baseline {base_names} has no entry sharing a problem "
                         "with another variant; speedup chart not drawn")
        return out
    fig = style.new_figure(width, height)
    panels, axes = _grid(fig, d_vals, masks)
    counts = {}
    handles = {}
    for (d, m), ax in panels.items():
        ax.axhline(1.0, color="#7F7F7F", linestyle="--", linewidth=1.0)
        any_pts = False
        for key in sorted(ratios):
            s = sorted((n, r) for dd, n, mm, r in ratios[key] if dd == d and mm == m)
            if not s:
                continue
            any_pts = True
            v = key.split(" ")[0]
            ls, mk = rstyle[series_run[key]] if multi_run else ("-", style.PASS_MARKER[series_pass[key]])
            line = style.peer_line() if key in peer_series else {"marker": mk, "markersize": 3.5, "linestyle": ls}
            h, = ax.plot([n for n, _ in s], [r for _, r in s], color=colors[v], label=key, **line)
            handles.setdefault(key, h)
            counts[key] = counts.get(key, 0) + len(s)
        _decorate(ax, d, m, seqs, f"speedup over {base_names} (×)", [None] if any_pts else [])
    for ax in axes:
        ax.set_xlabel("sequence length N (= Nq = Nkv)")
    fig.suptitle(f"Speedup over {base_names} (time ratio, >1 = faster) — {ds.title_suffix(dtype)}")
    base_handle = Line2D([], [], color="#7F7F7F", linestyle="--", label=f"{base_names} = 1")
    style.section_legend(style.top_right(fig), [("variant", [handles[k] for k in sorted(handles)]), ("baseline", [base_handle])])
    out.charts.append(Chart(stem=f"speedup_{dtype}", title=f"Speedup over {base_names} ({dtype})", fig=fig,
                            summary={"dtype": dtype, "baseline": base_names, "points": counts,
                                     "ratios": {k: sorted(v) for k, v in ratios.items()}}))
    return out


def _decorate(ax, d: int, mask: str, seqs: list[int], ylabel: str, sel: list) -> None:
    ax.set_title(f"d = {d}, mask {mask}")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    style.plain_log_ticks(ax, "x", seqs)
    style.plain_log_ticks(ax, "y")
    ax.set_ylabel(ylabel)
    if not sel:
        ax.text(0.5, 0.5, "no entries", transform=ax.transAxes, ha="center", va="center", color="#7F7F7F")


def build(ds: Dataset, baseline: Optional[str] = None) -> Built:
    out = Built()
    out.notes += baseline_notes(ds, baselines(ds, baseline))
    for dt in ds.dtypes:
        out.extend(build_dtype(ds, dt, baseline))
    return out

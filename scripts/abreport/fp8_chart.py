"""Chart `fp8_vs_bf16`: TFLOP/s against sequence length of every fp8 row (solid) and its
bf16 partner (dashed; fp16 or fp32 where the problem has no bf16, as in the report's table), one
panel per (backend, head dim, mask), with the e4m3 and the partner dtype's peaks of the run's
device as horizontal lines (measured solid, theoretical dashed; only on panels of the backend the
ceilings belong to). Self-attention problems only (Nq = Nkv); pairs as in fp8.tables.
"""
from __future__ import annotations

from matplotlib.lines import Line2D

from . import style
from .chart import Built, Chart
from .data import Dataset, Entry, Run
from .fp8 import FP8, Fp8Table, has_fp8, tables

MAX_PANELS = 9
MAX_COLS = 3
PEAK_COLORS = {FP8: "#B22222"}  # other dtypes: grey
PEAK_STYLE = {"measured": "-", "theoretical": "--"}

Point = tuple[int, float]  # (N, TFLOP/s)


def _panel(t: Fp8Table) -> tuple:
    e = t.problem
    return (e.run, e.platform, e.d, e.mask)


def _shape(t: Fp8Table) -> tuple:
    e = t.problem
    return (e.B, e.H, e.Hkv)


def _panel_label(p: tuple, multi_run: bool) -> str:
    run, platform, d, mask = p
    return f"{platform} d={d} {mask}" + (f" [{run}]" if multi_run else "")


def _series(t: Fp8Table, multi_shape: bool) -> list[tuple[str, Entry, bool]]:
    """(series label, entry, is fp8) of a table's ran fp8 rows and their ran partners."""
    e = t.problem
    shape = f" B{e.B} H{e.H} Hkv{e.Hkv}" if multi_shape else ""
    out = []
    for r in t.fp8:
        if not r.entry.ok:
            continue
        out.append((f"{r.entry.variant} ({FP8}){shape}", r.entry, True))
        if r.partner is not None and r.partner.ok:
            out.append((f"{r.partner.variant} ({r.partner.dtype}){shape}", r.partner, False))
    return out


def collect(ts: list[Fp8Table]) -> dict[tuple, dict[str, list[tuple[int, Entry, bool]]]]:
    """Per panel, per series: (N, entry, is fp8), sorted by N."""
    shapes: dict[tuple, set] = {}
    for t in ts:
        shapes.setdefault(_panel(t), set()).add(_shape(t))
    out: dict[tuple, dict[str, list[tuple[int, Entry, bool]]]] = {}
    for t in ts:
        p = _panel(t)
        for label, e, is_fp8 in _series(t, len(shapes[p]) > 1):
            out.setdefault(p, {}).setdefault(label, []).append((e.Nq, e, is_fp8))
    for series in out.values():
        for pts in series.values():
            pts.sort(key=lambda x: x[0])
    return out


def _peak_lines(ax, run: Run, platform: str, dtypes: list[str]) -> list[Line2D]:
    """Horizontal peaks of the run's device, on panels of the backend its ceilings were measured on."""
    if platform != run.backend:
        return []
    drawn: list[Line2D] = []
    for dt in dtypes:
        for kind, cs in (("measured", run.ceilings.measured), ("theoretical", run.ceilings.theoretical)):
            peak = cs.peak(dt)
            if peak is None:
                continue
            label = f"{kind} {dt} peak {peak:.4g} TFLOP/s"
            drawn.append(ax.axhline(peak, color=PEAK_COLORS.get(dt, "#7F7F7F"), linestyle=PEAK_STYLE[kind],
                                    linewidth=1.1, zorder=1, label=label))
    return drawn


def build(ds: Dataset) -> Built:
    out = Built()
    if not has_fp8(ds):
        return out
    ts = [t for t in tables(ds) if t.problem.Nq == t.problem.Nkv]
    panels = collect(ts)
    if not any(len(pts) >= 2 for s in panels.values() for pts in s.values() if pts[0][2]):
        out.notes.append("fp8_vs_bf16: no fp8 row ran at two or more sequence lengths (Nq = Nkv); "
                         "the report's FP8 tables have every problem")
        return out
    keys = sorted(panels, key=lambda p: (p[0], p[1], p[2], p[3] != "none", p[3]))
    if len(keys) > MAX_PANELS:
        out.notes.append(f"fp8_vs_bf16: {len(keys) - MAX_PANELS} of {len(keys)} panels left out "
                         "(the report's FP8 tables have every problem)")
        keys = keys[:MAX_PANELS]
    multi_run = len(ds.runs) > 1
    runs = {r.label: r for r in ds.runs}
    colors = style.colors_for(ds)
    ncols = min(MAX_COLS, len(keys))
    nrows = (len(keys) + ncols - 1) // ncols
    fig = style.new_figure(4.2 * ncols + 2.8, 3.1 * nrows + 0.6)
    axes = list(fig.subplots(nrows, ncols, squeeze=False).flat)
    for ax in axes[len(keys):]:
        ax.set_visible(False)
    summary: dict = {"panels": [], "points": {}, "peaks": {}, "ratios": {}}
    handles: dict[str, Line2D] = {}
    peak_handles: dict[str, Line2D] = {}
    for p, ax in zip(keys, axes):
        label = _panel_label(p, multi_run)
        summary["panels"].append(label)
        dtypes = [FP8]
        for name, pts in sorted(panels[p].items()):
            e0, is_fp8 = pts[0][1], pts[0][2]
            if e0.dtype not in dtypes:
                dtypes.append(e0.dtype)
            line = {"linestyle": "-", "marker": "o"} if is_fp8 else {"linestyle": "--", "marker": "s"}
            h, = ax.plot([n for n, _, _ in pts], [e.tflops for _, e, _ in pts], color=colors[e0.variant],
                         markersize=4, label=name, zorder=3, **line)
            handles.setdefault(name, h)
            summary["points"][name] = summary["points"].get(name, 0) + len(pts)
        for h in _peak_lines(ax, runs[p[0]], p[1], dtypes):
            peak_handles.setdefault(h.get_label(), h)
            summary["peaks"].setdefault(label, []).append(h.get_label())
        ax.set_title(label)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        style.plain_log_ticks(ax, "x", sorted({n for pts in panels[p].values() for n, _, _ in pts}))
        style.plain_log_ticks(ax, "y")
        ax.set_xlabel("sequence length N (= Nq = Nkv)")
        ax.set_ylabel("TFLOP/s")
    for t in ts:
        for r in t.fp8:
            if r.vs_partner is not None and _panel(t) in keys:
                summary["ratios"].setdefault(r.entry.variant, []).append([t.problem.Nq, r.vs_partner])
    refs = sorted({t.ref_dtype for t in ts if t.ref_dtype})
    fig.suptitle(f"FP8 (e4m3, solid) beside {', '.join(refs) or 'bf16'} (dashed) — {ds.device} · commit {ds.commit}")
    style.section_legend(style.top_right(fig), [("series", [handles[k] for k in sorted(handles)]),
                                                ("peaks", list(peak_handles.values()))])
    out.charts.append(Chart(stem="fp8_vs_bf16", title="FP8 beside BF16: TFLOP/s vs sequence length",
                            fig=fig, summary=summary))
    return out

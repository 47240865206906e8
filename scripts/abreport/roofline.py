"""Roofline chart: achieved TFLOP/s against arithmetic intensity, one chart per dtype.

Log-log. Measured ceilings (copy bandwidth, GEMM peak of the dtype) solid, theoretical
dashed; the ridge point (peak / bandwidth) marked. Library peers (scripts/peers.py) are
hollow markers, placed by their minimal-IO bytes (they publish no byte model of their own). Points left of the ridge are
memory-bound, right of it compute-bound; the gap to the roof is what is left. The third roof
(the exp roof): a point whose exp bound (exps / exp rate) is its tightest gets a purple tick at its
exp roof (useful FLOPs / exp bound, in TFLOP/s) joined to it by a dotted line: the roof that
caps it lies below the bandwidth/peak roof the lines draw.
"""
from __future__ import annotations

from typing import Optional

import numpy as np
from matplotlib.lines import Line2D

from . import style
from .chart import Built, Chart
from .data import Dataset, Entry
from .views import Roof, exp_marks, exp_rate_text, marker_axis, roofline_entries, roofs

MEASURED_STYLE = {"linestyle": "-", "linewidth": 1.6}
THEORETICAL_STYLE = {"linestyle": "--", "linewidth": 1.2}
RIDGE_FACE = {"measured": "#B22222", "theoretical": "white"}
EXP_COLOR = "#7B3294"  # the exp roof (purple), here and in the bound breakdown chart


def _marker_axis(entries: list[Entry]) -> tuple[str, dict]:
    """Markers distinguish head dims when several are present, else masks (views.marker_axis)."""
    key, values = marker_axis(entries)
    return key, style.markers_for(values)


def _ceiling_lines(ax, roof: Roof, dtype: str, xs: np.ndarray,
                   handles: list, ridges: list) -> list[str]:
    drawn = []
    kind = roof.kind
    st = MEASURED_STYLE if kind == "measured" else THEORETICAL_STYLE
    bw, peak = roof.bandwidth_gbps, roof.peak_tflops
    if bw:
        ys = bw * xs / 1e3
        if peak:
            ys = np.minimum(ys, peak)
        h, = ax.plot(xs, ys, color="#333333", **st, zorder=1, label=roof.label_bandwidth())
        handles.append(h)
        drawn.append(f"{kind}_bandwidth")
    if peak:
        ridge = roof.ridge
        x0 = ridge if ridge else xs[0]
        h, = ax.plot([x0, xs[-1]], [peak, peak], color="#B22222", **st, zorder=1,
                     label=roof.label_peak(dtype))
        handles.append(h)
        drawn.append(f"{kind}_peak")
        if ridge:
            ax.plot([ridge], [peak], marker="D", markersize=6, linestyle="none", zorder=4,
                    markerfacecolor=RIDGE_FACE[kind], markeredgecolor="#B22222")
            ridges.append((kind, ridge, peak))
    return drawn


def build_one(ds: Dataset, dtype: str) -> Optional[Chart]:
    # log axes: a zero rate (a run too slow to register) cannot be placed
    entries = roofline_entries(ds, dtype)
    if not entries:
        return None
    ceil = ds.ceilings
    colors = style.colors_for(ds)
    mkey, markers = _marker_axis(entries)

    xs_pts = np.array([e.roof_intensity for e in entries], dtype=float)
    ys_pts = np.array([e.tflops for e in entries], dtype=float)
    ridges_all = [r for r in (ceil.measured.ridge(dtype), ceil.theoretical.ridge(dtype)) if r]
    peaks_all = [p for p in (ceil.measured.peak(dtype), ceil.theoretical.peak(dtype)) if p]
    xlo = min([xs_pts.min()] + ridges_all) / 2.5
    xhi = max([xs_pts.max()] + ridges_all) * 2.5
    xs = np.geomspace(xlo, xhi, 200)

    fig = style.new_figure(9.0, 5.4)
    ax = fig.add_subplot()
    ax.set_xscale("log")
    ax.set_yscale("log")

    ceiling_handles: list = []
    ridges: list = []
    drawn = []
    for roof in roofs(ceil, dtype):
        drawn += _ceiling_lines(ax, roof, dtype, xs, ceiling_handles, ridges)

    points: dict[str, int] = {}
    n_measured = 0
    for v in sorted({e.variant for e in entries}):
        for mval, mk in markers.items():
            sel = [e for e in entries if e.variant == v and getattr(e, mkey) == mval]
            if not sel:
                continue
            for measured in (False, True):
                part = [e for e in sel if (e.measured_intensity is not None) == measured]
                if not part:
                    continue
                if part[0].peer:  # hollow: a library peer, placed by its minimal-IO bytes
                    ax.scatter([e.roof_intensity for e in part], [e.tflops for e in part],
                               facecolors="none", edgecolors=colors[v], marker=mk, s=44, linewidths=1.4,
                               zorder=3)
                    continue
                fwd = [e for e in part if e.pass_ == "fwd"]
                if fwd:
                    ax.scatter([e.roof_intensity for e in fwd], [e.tflops for e in fwd],
                               color=colors[v], marker=mk, s=36, alpha=0.85, zorder=3,
                               edgecolors="black" if measured else "white",
                               linewidths=1.1 if measured else 0.4)
                for pass_ in ("bwd", "fwd_bwd"):  # half-filled markers: scatter has no fill styles
                    pp = [e for e in part if e.pass_ == pass_]
                    if pp:
                        ax.plot([e.roof_intensity for e in pp], [e.tflops for e in pp], linestyle="none",
                                color=colors[v], marker=mk, markersize=6.5, alpha=0.85, zorder=3,
                                fillstyle=style.PASS_FILL[pass_], markerfacecoloralt="white",
                                markeredgecolor="black" if measured else colors[v],
                                markeredgewidth=1.1 if measured else 0.6)
                n_measured += len(part) if measured else 0
            points[v] = points.get(v, 0) + len(sel)

    # the exp roof where it binds: a tick at the point's exp roof, a dotted line down to the point
    marks = exp_marks(ds, entries)
    for m in marks:
        ax.plot([m.intensity / 1.3, m.intensity * 1.3], [m.exp_roof_tflops] * 2, color=EXP_COLOR,
                linewidth=2.2, solid_capstyle="butt", zorder=2)
        ax.plot([m.intensity] * 2, [m.entry.tflops, m.exp_roof_tflops], color=EXP_COLOR, linewidth=0.7,
                linestyle=":", zorder=2)
    if marks:
        rate = next((r for r in roofs(ceil, dtype) if r.exps_per_s), None)
        ceiling_handles.append(Line2D([], [], color=EXP_COLOR, linewidth=2.2,
                                      label="exp roof of a point it binds ("
                                            + (f"{rate.kind} {exp_rate_text(rate.exps_per_s)}" if rate else "exp rate")
                                            + ")"))

    # ran and timed, but O was outside the dtype's error tolerance: ringed, still plotted
    bad = [e for e in entries if e.err_ok is False]
    if bad:
        ax.scatter([e.roof_intensity for e in bad], [e.tflops for e in bad], s=120, facecolors="none",
                   edgecolors="#E41A1C", linewidths=1.4, zorder=5)
        mk_handles_extra = [Line2D([], [], marker="o", linestyle="none", markerfacecolor="none",
                                   markeredgecolor="#E41A1C", markersize=9, label="above error tolerance")]
    else:
        mk_handles_extra = []

    for kind, ridge, peak in ridges:
        ceiling_handles.append(Line2D([], [], marker="D", linestyle="none",
                                      markerfacecolor=RIDGE_FACE[kind], markeredgecolor="#B22222",
                                      label=f"ridge ({kind}) {ridge:.3g} FLOP/B"))
    if ridges:  # the measured ridge splits the plane into the two regimes
        r0 = ridges[0][1]
        ax.axvline(r0, color="#B22222", linestyle=":", linewidth=0.8, zorder=0)
        ax.text(r0 / 1.08, 0.015, "← memory-bound", transform=ax.get_xaxis_transform(),
                ha="right", va="bottom", fontsize=7.5, color="#B22222")
        ax.text(r0 * 1.08, 0.015, "compute-bound →", transform=ax.get_xaxis_transform(),
                ha="left", va="bottom", fontsize=7.5, color="#B22222")

    yhi = max([ys_pts.max()] + peaks_all + [m.exp_roof_tflops for m in marks]) * 2.0
    ax.set_xlim(xlo, xhi)
    ax.set_ylim(ys_pts.min() / 3, yhi)
    style.plain_log_ticks(ax, "x")
    style.plain_log_ticks(ax, "y")
    ax.set_xlabel("arithmetic intensity (FLOP / byte, " +
                  ("measured DRAM bytes where present)" if n_measured else "modeled bytes)"))
    ax.set_ylabel("achieved TFLOP/s")
    ax.set_title(f"Roofline — {ds.title_suffix(dtype)}")

    peers = {e.variant for e in entries if e.peer}
    var_handles = [Line2D([], [], marker="o", linestyle="none", color=colors[v], label=v)
                   for v in points if v not in peers]
    peer_handles = [Line2D([], [], marker="o", linestyle="none", markerfacecolor="none",
                           markeredgecolor=colors[v], markeredgewidth=1.4, label=v) for v in points if v in peers]
    passes = [p for p in ("fwd", "bwd", "fwd_bwd") if any(e.pass_ == p and not e.peer for e in entries)]
    # The backward's points are half-filled, fwd+bwd's bottom-filled (a legend only when they ran).
    pass_handles = [Line2D([], [], marker="o", linestyle="none", color="#555555", markerfacecoloralt="white",
                           fillstyle=style.PASS_FILL[p], label=p.replace("fwd_bwd", "fwd+bwd"))
                    for p in passes] if passes != ["fwd"] else []
    mk_handles = [Line2D([], [], marker=mk, linestyle="none", color="#555555",
                         label=f"d={mval}" if mkey == "d" else str(mval))
                  for mval, mk in markers.items() if any(getattr(e, mkey) == mval for e in entries)]
    if n_measured:
        mk_handles.append(Line2D([], [], marker="o", linestyle="none", color="#BBBBBB",
                                 markeredgecolor="black", label="measured DRAM bytes"))
    mk_handles += mk_handles_extra
    style.section_legend(ax, [("variant", var_handles),
                              ("library peers (hollow; minimal-IO bytes)", peer_handles),
                              ("head dim" if mkey == "d" else "mask", mk_handles),
                              ("pass", pass_handles),
                              ("ceilings", ceiling_handles)])
    if not ceiling_handles:
        ax.text(0.02, 0.97, "no ceilings in this run's context", transform=ax.transAxes,
                va="top", fontsize=8, color="#B22222")

    summary = {"dtype": dtype, "points": points, "ceilings": drawn,
               "ridges": {k: r for k, r, _ in ridges}, "measured_points": n_measured,
               "marker_by": mkey, "above_tolerance": len(bad), "peers": sorted(peers), "passes": passes,
               "exp_marks": {m.entry.name: m.exp_roof_tflops for m in marks}}
    return Chart(stem=f"roofline_{dtype}", title=f"Roofline ({dtype})", fig=fig, summary=summary)


def build(ds: Dataset) -> Built:
    out = Built()
    for dt in ds.dtypes:
        c = build_one(ds, dt)
        if c:
            out.charts.append(c)
    if not out.charts:
        out.notes.append("roofline: no entries ran (status ok)")
    return out

"""Bound breakdown — `bounds_<dtype>`: per variant, its best configuration (highest
TFLOP/s, as the report's table) and the three lower bounds on its time, each as a share of the
measured time: compute (useful FLOPs / peak), memory (modeled bytes / bandwidth), exp (exps / exp
rate). The longest bar is the roof that binds, its length the entry's % of bound, the rest to 100%
its headroom; an exp roof that cannot be known (a file without `exps`, or no exp rate in the
ceilings) is written out as unknown instead of a bar. A run none of whose entries records exps
(files from before the exp roof) gets no chart, only a note: its bounds are those of the roofline.

Why this and not only the roofline: the roofline places a point by FLOPs and bytes only, so an exp
bound has no axis there (it is a ceiling per point: useful FLOPs per exp x the exp rate). Bars on one
time scale answer "which roof, and how close" for every variant at a glance, without reading logs
of two axes.
"""
from __future__ import annotations

import numpy as np
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from . import style
from .chart import Built, Chart
from .data import Dataset
from .roofline import EXP_COLOR
from .roofs import ROOFS
from .views import bound_rows

COLORS = {"compute": "#B22222", "memory": "#333333", "exp": EXP_COLOR}
LABELS = {"compute": "compute: FLOPs / peak", "memory": "memory: bytes / bandwidth", "exp": "exp: exps / exp rate"}


def build_one(ds: Dataset, dtype: str) -> Chart | None:
    rows = bound_rows(ds, dtype)
    if not rows:
        return None
    n = len(rows)
    fig = style.new_figure(9.0, 1.2 + 0.62 * n)
    ax = fig.add_subplot()
    h = 0.26
    xmax = 100.0
    summary_rows = {}
    for i, r in enumerate(rows):
        y = n - 1 - i
        entry = {}
        for k, roof in enumerate(ROOFS):
            yy = y + (1 - k) * h
            v = r.pct(roof)
            entry[roof] = v
            if v is None:
                ax.text(1.0, yy, f"{roof}: unknown" + (" (no exps in this file)" if roof == "exp" and r.entry.exps is None
                                                       else ""),
                        va="center", ha="left", fontsize=7, color="#777777")
                continue
            binds = roof == r.binding
            ax.barh(yy, v, height=h * 0.9, color=COLORS[roof], alpha=0.95 if binds else 0.35,
                    edgecolor="black" if binds else "none", linewidth=0.8, zorder=2)
            ax.text(v + 1.0, yy, f"{v:.0f}%" + (f" ← {roof}-bound" if binds else ""), va="center", ha="left",
                    fontsize=7.5, fontweight="bold" if binds else "normal")
            xmax = max(xmax, v)
        summary_rows[r.entry.variant] = {"binding": r.binding, **entry, "config": r.entry.name}
    ax.axvline(100.0, color="#555555", linestyle="--", linewidth=1.0, zorder=1)
    ax.text(100.0, n - 0.45, " measured time", fontsize=7.5, color="#555555", va="bottom")
    ax.set_yticks(np.arange(n), [f"{r.entry.variant}\n{r.entry.shape_label} Br{r.entry.Br} Bc{r.entry.Bc}"
                                 for r in reversed(rows)], fontsize=7.5)
    ax.set_xlim(0, xmax * 1.25)
    ax.set_ylim(-0.6, n - 0.2)
    ax.set_xlabel("lower bound on the time, % of the measured time (the longest bar binds; 100% = at that roof)")
    ax.grid(axis="y", visible=False)
    ax.set_title(f"Bound breakdown — {ds.title_suffix(dtype)}")
    handles = [Patch(facecolor=COLORS[k], label=LABELS[k]) for k in ROOFS]
    handles.append(Line2D([], [], color="#555555", linestyle="--", label="measured time (100%)"))
    style.section_legend(ax, [("lower bounds", handles)])
    return Chart(stem=f"bounds_{dtype}", title=f"Bound breakdown ({dtype})", fig=fig,
                 summary={"dtype": dtype, "rows": summary_rows})


def build(ds: Dataset) -> Built:
    out = Built()
    if not any(e.exps is not None for e in ds.ok_entries):
        out.notes.append("bound breakdown: no entry records exps (a file written before the exp roof): "
                         "the exp roof is unknown, the report's bound column names compute or memory")
        return out
    for dt in ds.dtypes:
        c = build_one(ds, dt)
        if c:
            out.charts.append(c)
    if not out.charts:
        out.notes.append("bound breakdown: no entry has a ceiling to bound it (run without --no-ceilings)")
    return out

"""Tile-size heatmaps: TFLOP/s over Br x Bc, one panel per (variant, head dim), one figure per dtype.
Each panel has its own colour scale (which tile wins for that variant); cells print the value.

Entries come from the `tiles` group, or from any problem run at several (Br, Bc). Per
(variant, d) the problem with the most tile shapes is shown (ties: the largest). Cells
with no ok entry are grey; the best cell is outlined.
"""
from __future__ import annotations

import numpy as np
from matplotlib.colors import Normalize
from matplotlib.ticker import MaxNLocator
from matplotlib.patches import Rectangle

from . import style
from .chart import Built, Chart
from .data import Dataset, Entry


def _candidates(entries: list[Entry], dtype: str) -> dict[tuple[str, int], list[Entry]]:
    """Per (variant, d): entries of the chosen problem (run, problem key) with >= 2 tile shapes."""
    sel = [e for e in entries if e.dtype == dtype]
    # Problems of the tiles group (if any); their entries from every group (a tile shape
    # that is also in another group ran once, under that group).
    wanted = {(e.run, e.variant, e.problem_key) for e in sel if e.group == "tiles"}
    by_problem: dict[tuple, list[Entry]] = {}
    for e in sel:
        k = (e.run, e.variant, e.problem_key)
        if not wanted or k in wanted:
            by_problem.setdefault(k, []).append(e)
    chosen: dict[tuple[str, int], list[Entry]] = {}
    for (run, variant, pk), es in by_problem.items():
        shapes = {(e.Br, e.Bc) for e in es}
        if len(shapes) < 2:
            continue
        k = (variant, es[0].d)
        score = (len(shapes), es[0].Nq * es[0].Nkv * es[0].B * es[0].H)
        if k not in chosen or score > chosen[k][0]:
            chosen[k] = (score, es)  # type: ignore[assignment]
    return {k: v[1] for k, v in sorted(chosen.items())}  # type: ignore[index]


def build_dtype(ds: Dataset, dtype: str, notes: list[str]) -> Chart | None:
    panels = _candidates(ds.entries, dtype)
    for k in [k for k, es in panels.items() if not any(e.ok for e in es)]:
        reasons = sorted({e.error_message for e in panels[k] if e.error_message})
        notes.append(f"tiles ({dtype}): {k[0]} d={k[1]}: no tile shape ran"
                     + (f" ({'; '.join(reasons)})" if reasons else ""))
        del panels[k]
    if not panels:
        return None
    n = len(panels)
    ncols = min(3, n)
    nrows = (n + ncols - 1) // ncols
    fig = style.new_figure(3.9 * ncols + 1.0, 3.5 * nrows + 0.5)
    axes = fig.subplots(nrows, ncols, squeeze=False)
    cmap = style.plt.get_cmap("viridis").with_extremes(bad="#DDDDDD")
    summary: dict = {"dtype": dtype, "panels": {}}
    for ax, ((variant, d), es) in zip(axes.flat, panels.items()):
        brs = sorted({e.Br for e in es})
        bcs = sorted({e.Bc for e in es})
        grid = np.full((len(brs), len(bcs)), np.nan)
        status = {}
        for e in es:
            i, j = brs.index(e.Br), bcs.index(e.Bc)
            if e.ok and (np.isnan(grid[i, j]) or e.tflops > grid[i, j]):
                grid[i, j] = e.tflops
            status[(i, j)] = e.status
        # Per-panel colour scale: the question is which tile wins for this variant.
        vals = grid[np.isfinite(grid)]
        norm = Normalize(vmin=vals.min(), vmax=vals.max()) if vals.size and vals.max() > vals.min() else None
        im = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, norm=norm, origin="lower", aspect="auto")
        best = np.unravel_index(np.nanargmax(grid), grid.shape) if np.isfinite(grid).any() else None
        for i in range(len(brs)):
            for j in range(len(bcs)):
                v = grid[i, j]
                if np.isfinite(v):
                    lum = float(norm(v)) if norm else 0.5
                    ax.text(j, i, f"{v:.3g}", ha="center", va="center", fontsize=8,
                            color="black" if lum > 0.6 else "white")
                else:
                    ax.text(j, i, status.get((i, j), "—") if (i, j) in status else "—",
                            ha="center", va="center", fontsize=7, color="#555555")
        if best is not None:
            ax.add_patch(Rectangle((best[1] - 0.5, best[0] - 0.5), 1, 1, fill=False,
                                   edgecolor="#E41A1C", linewidth=2.4))
        ax.set_xticks(range(len(bcs)), [str(b) for b in bcs])
        ax.set_yticks(range(len(brs)), [str(b) for b in brs])
        ax.set_xlabel("Bc (keys per tile)")
        ax.set_ylabel("Br (queries per tile)")
        ax.grid(False)
        e0 = es[0]
        cb = fig.colorbar(im, ax=ax, shrink=0.85, pad=0.02)
        cb.ax.yaxis.set_major_locator(MaxNLocator(5))
        cb.ax.yaxis.set_major_formatter(style.FuncFormatter(lambda x, _: f"{x:.3g}"))
        cb.set_label("TFLOP/s", fontsize=8)
        ax.set_title(f"{variant}, d = {d}\nB{e0.B} H{e0.H} Hkv{e0.Hkv} Nq{e0.Nq} Nkv{e0.Nkv} {e0.mask}", fontsize=9)
        summary["panels"][f"{variant} d={d}"] = {
            "cells": int(np.isfinite(grid).sum()), "Br": brs, "Bc": bcs,
            "best": (brs[best[0]], bcs[best[1]]) if best is not None else None}
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    fig.suptitle(f"Tile size: achieved TFLOP/s (boxed: best per panel) — {ds.title_suffix(dtype)}")
    return Chart(stem=f"tiles_{dtype}", title=f"Tile size heatmap ({dtype})", fig=fig, summary=summary)


def build(ds: Dataset) -> Built:
    out = Built()
    for dt in sorted({e.dtype for e in ds.entries}):
        c = build_dtype(ds, dt, out.notes)
        if c:
            out.charts.append(c)
    if not out.charts and not out.notes:
        out.notes.append("tiles: no problem was run at several tile sizes (Br × Bc)")
    return out

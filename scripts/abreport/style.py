"""Shared look of every chart: Agg backend, colours by variant, markers, PNG+SVG output."""
from __future__ import annotations

import os
from typing import Iterable

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter  # noqa: E402

# Colours live in palette (no matplotlib: the HTML page shares them); re-exported here.
from .text import fmt_num  # noqa: E402,F401 (shared with the HTML page)
from .palette import GREYS, PALETTE, PEER_PALETTE, colors_for, marker_order, variant_colors  # noqa: E402,F401

FORMATS = ("png", "svg")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")
PEER_MARKER = "D"
# The backward pass in the charts (docs/backward.md): the forward's series filled, the backward's
# half-filled (roofline) and on square markers (against N), fwd+bwd bottom-filled on triangles.
PASS_FILL = {"fwd": "full", "bwd": "left", "fwd_bwd": "bottom"}
PASS_MARKER = {"fwd": "o", "bwd": "s", "fwd_bwd": "^"}


def peer_line() -> dict:
    """Line and marker style of a library peer's series."""
    return {"linestyle": ":", "marker": PEER_MARKER, "markersize": 4.5, "markerfacecolor": "none",
            "linewidth": 1.4}

plt.rcParams.update({
    "figure.dpi": 110,
    "savefig.dpi": 150,
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.6,
    "svg.fonttype": "none",
    "svg.hashsalt": "attnbench",  # reproducible SVG ids
})


def markers_for(values: Iterable) -> dict:
    return {v: MARKERS[i % len(MARKERS)] for i, v in enumerate(marker_order(values))}


def new_figure(width: float, height: float) -> Figure:
    return plt.figure(figsize=(width, height), layout="constrained")


def plain_log_ticks(ax, axis: str = "x", values: Iterable[float] | None = None, base: int = 2) -> None:
    """Log axis labelled with the actual values (128, 256, ...) instead of powers."""
    a = ax.xaxis if axis == "x" else ax.yaxis
    if values is not None:
        vals = sorted(set(values))
        a.set_major_locator(matplotlib.ticker.FixedLocator(vals))
        a.set_minor_formatter(NullFormatter())
        a.set_minor_locator(matplotlib.ticker.NullLocator())
    else:  # denser steps for narrow ranges (call after plotting), plain numbers
        lo, hi = ax.get_xlim() if axis == "x" else ax.get_ylim()
        span = hi / lo if lo > 0 and hi > lo else 10.0
        subs = (1.0, 1.5, 2.0, 3.0, 5.0, 7.0) if span < 8 else (1.0, 2.0, 5.0) if span < 300 else (1.0,)
        a.set_major_locator(LogLocator(base=10, subs=subs))
        a.set_minor_formatter(NullFormatter())
    a.set_major_formatter(FuncFormatter(lambda x, _: fmt_num(x)))


def save(fig: Figure, out_dir: str, stem: str, formats: tuple[str, ...] = FORMATS) -> list[str]:
    """Writes stem.png and stem.svg into out_dir; returns the paths. Closes nothing:
    callers (tests) may still inspect the figure; `close` releases it."""
    os.makedirs(out_dir, exist_ok=True)
    paths = []
    for ext in formats:
        p = os.path.join(out_dir, f"{stem}.{ext}")
        fig.savefig(p, format=ext, bbox_inches="tight", pad_inches=0.15,
                    metadata={"Date": None} if ext == "svg" else None)
        paths.append(p)
    return paths


def close(fig: Figure) -> None:
    plt.close(fig)


def legend_columns(fig: Figure, entries: int) -> int:
    """Columns a legend beside the axes needs to stay within the figure's height: taller, the
    constrained layout collapsed the axes (the quick sweep's roofline has ~40 entries)."""
    size = matplotlib.font_manager.FontProperties(size=plt.rcParams["legend.fontsize"]).get_size_in_points()
    rows = max(1, int(0.9 * fig.get_figheight() * 72 / (size * (1.0 + plt.rcParams["legend.labelspacing"]))))
    return max(1, -(-entries // rows))


def section_legend(target, sections: list[tuple[str, list]], **kw):
    """One legend outside the data with titled sections (variant, marker, ceilings):
    stacked in one box so sections never overlap each other."""
    from matplotlib.lines import Line2D

    handles, labels = [], []
    for title, hs in sections:
        if not hs:
            continue
        if handles:
            handles.append(Line2D([], [], linestyle="none"))
            labels.append("")
        handles.append(Line2D([], [], linestyle="none"))
        labels.append(title)
        for h in hs:
            handles.append(h)
            labels.append(h.get_label())
    ncol = legend_columns(target.figure, len(handles))
    if ncol > 1 and "ncol" not in kw:  # the axes keep their width: the figure grows by the columns
        target.figure.set_figwidth(target.figure.get_figwidth() + 3.2 * (ncol - 1))
    args = dict(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0,
                handlelength=2.2, frameon=True, ncol=ncol)
    args.update(kw)
    args = {k: v for k, v in args.items() if v is not None}
    leg = target.legend(handles, labels, **args)
    for text, (h, lab) in zip(leg.get_texts(), zip(handles, labels)):
        if lab and any(lab == t for t, _ in sections):
            text.set_fontweight("bold")
    return leg


def top_right(fig: Figure):
    """The axes in the top-right corner: figure legends hang outside it, so the
    constrained layout makes room for them and they never cover a title."""
    axes = [a for a in fig.axes if a.get_visible()]
    return max(axes, key=lambda a: (a.get_position().y1, a.get_position().x1))


RUN_STYLES = (("-", "o"), ("--", "s"), (":", "^"), ("-.", "D"))


def run_styles(labels) -> dict[str, tuple[str, str]]:
    """(linestyle, marker) per run when several runs share a chart; colour stays the variant's."""
    return {r: RUN_STYLES[i % len(RUN_STYLES)] for i, r in enumerate(labels)}

"""Shared look of every chart: Agg backend, colours by variant, markers, PNG+SVG output."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Collection, Iterable

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter  # noqa: E402

from .variants import UNFUSED  # noqa: E402

if TYPE_CHECKING:
    from .data import Dataset

FORMATS = ("png", "svg")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")
# Colour-blind-friendly (Okabe-Ito, then tab10 extras) for fused rows; greys for the rows
# tagged unfused in context.variants (the reference points every other curve is read against).
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9",
           "#8C564B", "#000000", "#BCBD22", "#17BECF")
GREYS = ("#7F7F7F", "#4D4D4D", "#A6A6A6", "#262626", "#BFBFBF")
# Library peers (scripts/peers.py) take their own colours, so attnbench's keep theirs, and
# their own marks: hollow markers, dotted lines.
PEER_PALETTE = ("#8B0000", "#6A3D9A", "#B15928", "#FF1493", "#006400", "#4B0082", "#808000", "#DC143C")
PEER_MARKER = "D"


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


def variant_colors(variants: Iterable[str], grey: Collection[str] = (),
                   peers: Collection[str] = ()) -> dict[str, str]:
    """Stable colours by sorted name: names in `grey` take the greys, `peers` the peer
    palette, the others the palette."""
    out: dict[str, str] = {}
    i = g = k = 0
    for v in sorted(set(variants)):
        if v in peers:
            out[v] = PEER_PALETTE[k % len(PEER_PALETTE)]
            k += 1
        elif v in grey:
            out[v] = GREYS[g % len(GREYS)]
            g += 1
        else:
            out[v] = PALETTE[i % len(PALETTE)]
            i += 1
    return out


def colors_for(ds: "Dataset") -> dict[str, str]:
    """Colours of the variants that ran in ds, the same in every chart of a report; the
    rows tagged unfused in the runs' context.variants are grey, library peers their own."""
    return variant_colors((e.variant for e in ds.ok_entries), grey=ds.tagged(UNFUSED), peers=ds.peers)


def markers_for(values: Iterable) -> dict:
    return {v: MARKERS[i % len(MARKERS)] for i, v in enumerate(sorted(set(values), key=_sort_key))}


def _sort_key(v):
    return (0, v, "") if isinstance(v, (int, float)) else (1, 0, str(v))


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


def fmt_num(x: float) -> str:
    if x == 0:
        return "0"
    if abs(x) >= 1024 and float(x).is_integer() and int(x) % 1024 == 0:
        return f"{int(x) // 1024}k"  # sequence lengths: 1k, 4k, 64k
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    if abs(x) >= 100:
        return f"{x:.0f}"
    if abs(x) >= 1:
        return f"{x:.3g}"
    return f"{x:.2g}"


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
    args = dict(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0,
                handlelength=2.2, frameon=True)
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

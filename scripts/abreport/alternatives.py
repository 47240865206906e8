"""Attention against its alternatives (docs/alternatives.md): the crossover chart and table.

A scan is a row tagged `scan` in the run's context.variants (Mamba-1's selective_scan, RWKV-4's
wkv). Each runs on the attention problem of the same width (B, H, d, L = Nq = Nkv, causal), so a
scan entry pairs with the softmax entries of the same run, platform, dtype, B, H, d and mask at
the same L, taken from any group (a sweep keeps a configuration under its first group only).
Per L the attention time is the fastest softmax row's; ratio = attention time / scan time, so
above 1 the scan is faster. The crossover of a scan is where the ratio passes 1 for good: the
first measured L from which every longer measured L has ratio > 1, interpolated on log L and
log ratio between it and the L before; "below the measured range" when the scan is faster at
every L, "not reached in the measured range" when it is slower at the longest.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from matplotlib.lines import Line2D

from . import style
from .chart import Built, Chart
from .data import Dataset, Entry, best_by
from .text import fmt

SCAN = "scan"


@dataclass(frozen=True)
class Point:
    L: int
    attention: Entry  # the fastest softmax entry at this L
    scan: Entry

    @property
    def ratio(self) -> float:
        return self.attention.time_ms / self.scan.time_ms


@dataclass(frozen=True)
class Crossover:
    text: str  # one sentence for the report
    length: Optional[float]  # the interpolated crossover length, None outside the measured range


def _shape(e: Entry) -> tuple:
    return (e.run, e.platform, e.dtype, e.B, e.H, e.d, e.mask)


def scan_label(e: Entry) -> str:
    """The scan's name, with its state size and groups when the entry records them (the selective
    scan's `dstate`, `ngroups`): a sweep over --state gives one series per N."""
    raw = e.raw or {}
    if "dstate" in raw:
        return f"{e.variant} N{raw['dstate']}" + (f" G{raw['ngroups']}" if raw.get("ngroups", 1) != 1 else "")
    return e.variant


def series(ds: Dataset) -> dict[tuple, dict[str, list[Point]]]:
    """Per shape (run, platform, dtype, B, H, d, mask), per scan (scan_label): its points over L."""
    scans = ds.tagged(SCAN)
    softmax = {r.name for run in ds.runs for r in run.variants if r.math == "softmax"}
    ok = [e for e in ds.ok_entries if not e.peer and e.Nq == e.Nkv and e.time_ms]
    attention = best_by([e for e in ok if e.variant in softmax and e.mask == "causal"],
                        key=lambda e: _shape(e) + (e.Nq,))
    out: dict[tuple, dict[str, list[Point]]] = {}
    for e in sorted((e for e in ok if e.variant in scans), key=lambda e: (_shape(e), scan_label(e), e.Nq)):
        a = attention.get(_shape(e) + (e.Nq,))
        if a is not None:
            out.setdefault(_shape(e), {}).setdefault(scan_label(e), []).append(Point(e.Nq, a, e))
    return out


def crossover(points: list[Point]) -> Crossover:
    """Where attention time / scan time passes 1 for good (module docstring)."""
    pts = sorted(points, key=lambda p: p.L)
    first = len(pts)
    while first > 0 and pts[first - 1].ratio > 1:
        first -= 1
    if first == len(pts):
        last = pts[-1]
        return Crossover(f"not reached in the measured range (L ≤ {last.L}; at L = {last.L} attention takes "
                         f"{last.ratio:.2f}× the scan's time)", None)
    if first == 0:
        return Crossover(f"below the measured range: the scan is faster at every L from {pts[0].L} "
                         f"(ratio {pts[0].ratio:.2f}× there)", None)
    lo, hi = pts[first - 1], pts[first]
    t = -math.log(lo.ratio) / (math.log(hi.ratio) - math.log(lo.ratio))
    length = math.exp(math.log(lo.L) + t * (math.log(hi.L) - math.log(lo.L)))
    return Crossover(f"L ≈ {length:.0f} (between the measured {lo.L}, ratio {lo.ratio:.2f}×, and {hi.L}, "
                     f"ratio {hi.ratio:.2f}×; log-interpolated)", length)


def _shape_text(shape: tuple) -> str:
    run, platform, dtype, B, H, d, mask = shape
    return f"B{B} H{H} d{d} (width H·d = {H * d}) {mask}, {dtype} on {platform}"


def section(ds: Dataset) -> list[str]:
    """The report's section: per shape the table over L and each scan's crossover."""
    data = series(ds)
    if not data:
        return []
    lines = ["", "## Attention against its alternatives", "",
             "Causal attention (the fastest softmax row at each L) against each scan on the problem of the "
             "same width: B, H·d channels, L = Nq = Nkv (docs/alternatives.md). Ratio = attention time / scan "
             "time: above 1 the scan is faster. Crossover: where the ratio passes 1 for good."]
    for shape, rows in data.items():
        scans = sorted(rows)
        by_l = {v: {p.L: p for p in pts} for v, pts in rows.items()}
        lengths = sorted({p.L for pts in rows.values() for p in pts})
        lines += ["", f"**{_shape_text(shape)}**", "",
                  "| L | attention | time (ms) | " + " | ".join(f"{v} (ms) | attention / {v}" for v in scans) + " |",
                  "|---:|---|---:|" + "---:|---:|" * len(scans)]
        for L in lengths:
            a = next(by_l[v][L].attention for v in scans if L in by_l[v])
            cells = [f"{fmt(by_l[v][L].scan.time_ms)} | {by_l[v][L].ratio:.2f}×" if L in by_l[v] else "— | —"
                     for v in scans]
            lines.append(f"| {L} | {a.variant} | {fmt(a.time_ms)} | " + " | ".join(cells) + " |")
        lines.append("")
        lines += [f"- crossover of **{v}**: {crossover(rows[v]).text}" for v in scans]
    return lines


def build(ds: Dataset) -> Built:
    out = Built()
    data = series(ds)
    if not data and ds.tagged(SCAN) & {e.variant for e in ds.ok_entries}:
        out.notes.append("alternatives: scan entries ran, but no causal softmax entry of the same run, "
                         "shape and L to pair them with")
    colors = style.colors_for(ds)
    for i, (shape, rows) in enumerate(data.items()):
        fig = style.new_figure(13.5, 3.6)
        ax_t, ax_f, ax_r = fig.subplots(1, 3)
        handles: dict[str, Line2D] = {}
        attention = best_by([p.attention for pts in rows.values() for p in pts], key=lambda e: (e.variant, e.Nq))
        for v in sorted({e.variant for e in attention.values()}):
            s = sorted((e for e in attention.values() if e.variant == v), key=lambda e: e.Nq)
            h, = ax_t.plot([e.Nq for e in s], [e.time_ms for e in s], color=colors[v], marker="o", markersize=4,
                           linestyle="--", label=f"{v} (attention)")
            ax_f.plot([e.Nq for e in s], [e.tflops for e in s], color=colors[v], marker="o", markersize=4,
                      linestyle="--")
            handles[h.get_label()] = h
        marks = {}
        markers = style.markers_for(sorted(rows))
        for v, pts in sorted(rows.items()):
            pts = sorted(pts, key=lambda p: p.L)
            ls, color, mk = [p.L for p in pts], colors[pts[0].scan.variant], markers[v]
            h, = ax_t.plot(ls, [p.scan.time_ms for p in pts], color=color, marker=mk, markersize=4, label=v)
            ax_f.plot(ls, [p.scan.tflops for p in pts], color=color, marker=mk, markersize=4)
            ax_r.plot(ls, [p.ratio for p in pts], color=color, marker=mk, markersize=4)
            handles[v] = h
            c = crossover(pts)
            marks[v] = c.length
            if c.length is not None:
                ax_r.axvline(c.length, color=color, linestyle=":", linewidth=1.2)
                ax_r.annotate(f"{c.length:.0f}", (c.length, 1.0), textcoords="offset points", xytext=(3, 6),
                              color=color, fontsize=8)
        ax_r.axhline(1.0, color="#555555", linewidth=1.0)
        lengths = sorted({p.L for pts in rows.values() for p in pts})
        for ax, what in ((ax_t, "time (ms)"), (ax_f, "TFLOP/s (each row's own FLOPs)"),
                         (ax_r, "attention time / scan time")):
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            style.plain_log_ticks(ax, "x", lengths)
            style.plain_log_ticks(ax, "y")
            ax.set_xlabel("sequence length L (= Nq = Nkv)")
            ax.set_ylabel(what)
        ax_r.set_title("above 1: the scan is faster; dotted: crossover", fontsize=9)
        style.section_legend(style.top_right(fig), [("row", [handles[k] for k in sorted(handles)])])
        fig.suptitle(f"Attention against its alternatives — {_shape_text(shape)} · {ds.device} · commit {ds.commit}")
        out.charts.append(Chart(
            stem=f"alternatives_{shape[2]}" + (f"_{i}" if i else ""),
            title=f"Attention against its alternatives ({_shape_text(shape)})", fig=fig,
            summary={"shape": _shape_text(shape), "lengths": lengths,
                     "scans": {v: [p.L for p in pts] for v, pts in rows.items()},
                     "attention": sorted({e.variant for e in attention.values()}),
                     "crossover": marks}))
    return out

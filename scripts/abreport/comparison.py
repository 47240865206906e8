"""The comparison section (docs/approximations.md): per problem, the exact attnbench rows beside
the comparison rows (tag `comparison`: Linformer and Performer, which approximate softmax
attention, and Bahdanau's additive score, exact but another function) with time, useful TFLOP/s,
the distance to exact softmax attention and the binding roof.

The distance is the entry's `approx_err_vs_exact` (rel-L2 of the sampled rows against fp64
softmax attention), information only: an approximation is checked against the fp64 evaluation of
the same approximation (`rel_err`, held to the tolerance). Exact softmax rows are at distance 0
by their own check; rows of another function (linear attention, additive scoring) have none.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .data import Dataset, Entry
from .roofs import position
from .text import fmt, md_escape

TAG = "comparison"


@dataclass(frozen=True)
class Row:
    entry: Entry
    kind: str  # "exact" | "approximation" | "another function"
    distance: Optional[float]  # to exact softmax attention; None when not defined
    bound: str
    vs_exact: Optional[float]  # time of the fastest exact row of the problem / this time


def math_of(ds: Dataset, variant: str) -> str:
    for r in ds.runs:
        for v in r.variants:
            if v.name == variant:
                return v.math
    return "unknown"


def approx_distance(e: Entry) -> Optional[float]:
    x = e.raw.get("approx_err_vs_exact") if e.raw else None
    return float(x) if isinstance(x, (int, float)) else None


def _math(ds: Dataset, e: Entry) -> str:
    """The entry's math: its row's; a library peer's is softmax (SDPA, FlexAttention, flash-attn),
    or that of the attnbench row whose model it takes (bytes_model "attnbench:<row>": the PyPI
    approximations, the scan libraries)."""
    if not e.peer_device:
        return math_of(ds, e.variant)
    model = str((e.raw or {}).get("bytes_model") or "")
    return math_of(ds, model.split(":", 1)[1]) if model.startswith("attnbench:") else "softmax"


def _kind(ds: Dataset, e: Entry) -> str:
    if approx_distance(e) is not None:
        return "approximation"
    return "exact" if _math(ds, e) == "softmax" else "another function"


def _bound(ds: Dataset, e: Entry) -> str:
    if e.roof_intensity is None or e.tflops is None:
        return "n/a"
    return position(e, ds.ceilings).bound


def comparison_problems(ds: Dataset) -> dict[tuple, list[Row]]:
    """Problems holding a comparison entry: every ok entry of that problem, each variant at its
    fastest, ordered exact first, then by time."""
    tagged = ds.tagged(TAG)
    ok = [e for e in ds.ok_entries if e.time_ms]
    keys = {e.problem_key for e in ok if e.variant in tagged or approx_distance(e) is not None}
    out: dict[tuple, list[Row]] = {}
    for key in sorted(keys, key=str):
        fastest: dict[str, Entry] = {}
        for e in ok:
            if e.problem_key == key and (e.variant not in fastest or e.time_ms < fastest[e.variant].time_ms):
                fastest[e.variant] = e
        kinds = {v: _kind(ds, e) for v, e in fastest.items()}
        exact = [e.time_ms for v, e in fastest.items() if kinds[v] == "exact"]
        best_exact = min(exact) if exact else None
        rows = [Row(e, kinds[v], 0.0 if kinds[v] == "exact" else approx_distance(e), _bound(ds, e),
                    best_exact / e.time_ms if best_exact else None) for v, e in fastest.items()]
        rows.sort(key=lambda r: (r.kind != "exact", r.entry.time_ms))
        out[key] = rows
    return out


def section(ds: Dataset) -> list[str]:
    """The report's comparison section; [] when the run has no comparison entry."""
    problems = comparison_problems(ds)
    if not problems:
        return []
    lines = ["", "## Approximations and other scores beside exact attention", "",
             "Per problem: each variant at its fastest tile. Distance = rel-L2 distance of the sampled rows to "
             "exact fp64 softmax attention (information, never a pass/fail: an approximation passes or fails "
             "against the fp64 evaluation of the same approximation, its `rel_err`); exact softmax rows are 0 "
             "by their own check, rows of another function (linear attention's elu+1, Bahdanau's additive "
             "score) have none. Speed = time of the fastest exact row / time (above 1 faster). Library peers "
             "use their own random features and projections: their distance comes from the same comparison "
             "with exact attention, not from a check of the same approximation (docs/approximations.md).", ""]
    for key, rows in problems.items():
        e0 = rows[0].entry
        lines += [f"### {md_escape(f'{e0.platform} {e0.dtype} B{e0.B} H{e0.H} Hkv{e0.Hkv} Nq{e0.Nq} Nkv{e0.Nkv} d{e0.d} {e0.mask}')}",
                  "", "| variant | kind | time (ms) | TFLOP/s | distance to exact | bound | speed vs exact |",
                  "|---|---|---:|---:|---:|---|---:|"]
        for r in rows:
            dist = "—" if r.distance is None else f"{r.distance:.2g}"
            speed = "—" if r.vs_exact is None else f"{r.vs_exact:.2f}×"
            lines.append(f"| {r.entry.variant} | {r.kind} | {fmt(r.entry.time_ms)} | {fmt(r.entry.tflops)} | {dist} "
                         f"| {r.bound} | {speed} |")
        lines.append("")
    return lines

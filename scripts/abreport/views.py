"""What each chart shows, computed once for both outputs: the matplotlib figures (roofline,
speedup) and the interactive page (html_report) draw these selections, ratios and roofs, so the
two views cannot disagree. No matplotlib here.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from .data import Ceilings, Dataset, Entry, best_by, dtype_order
from .palette import marker_order
from .seqsel import seq_entries
from .text import fmt_num


# ---- roofline ---------------------------------------------------------------------------

def roofline_entries(ds: Dataset, dtype: str) -> list[Entry]:
    """The roofline's points of one dtype: every entry that ran (log axes: a zero rate or
    intensity cannot be placed)."""
    return [e for e in ds.ok_entries if e.dtype == dtype and e.tflops > 0 and e.roof_intensity > 0]


def marker_axis(entries: list[Entry]) -> tuple[str, list]:
    """Markers distinguish head dims when several are present, else masks: (field, values in
    marker order)."""
    ds = {e.d for e in entries}
    if len(ds) > 1 or len({e.mask for e in entries}) <= 1:
        return "d", marker_order(ds)
    return "mask", marker_order({e.mask for e in entries})


@dataclass(frozen=True)
class Roof:
    """One set of ceilings of a dtype: bandwidth line up to the ridge, flat peak after it."""

    kind: str  # measured | theoretical
    bandwidth_gbps: Optional[float]
    peak_tflops: Optional[float]
    ridge: Optional[float]  # FLOP/byte where the two meet; None without both
    peak_is_fp32_compute: bool  # the CPU's fp32 GEMM standing in for a dtype computed in fp32

    def label_bandwidth(self) -> str:
        return f"{self.kind} bandwidth {fmt_num(self.bandwidth_gbps or 0)} GB/s"

    def label_peak(self, dtype: str) -> str:
        return (f"{self.kind} {dtype} peak {self.peak_tflops:.3g} TFLOP/s"
                + (" (fp32 GEMM: computed in fp32)" if self.peak_is_fp32_compute else ""))


def roofs(ceil: Ceilings, dtype: str) -> list[Roof]:
    """Measured, then theoretical ceilings of `dtype` that have a bandwidth or a peak."""
    out = []
    for kind, cs in (("measured", ceil.measured), ("theoretical", ceil.theoretical)):
        bw, peak = cs.bandwidth_gbps, cs.peak(dtype)
        if bw or peak:
            out.append(Roof(kind, bw or None, peak or None, cs.ridge(dtype), cs.peak_is_fp32_compute(dtype)))
    return out


# ---- speedup and TFLOP/s against sequence length -----------------------------------------

def baselines(ds: Dataset, baseline: Optional[str]) -> dict[str, Optional[str]]:
    """Baseline variant per run: --baseline, else the run's row of its backend tagged
    baseline in context.variants; None (no speedup for that run) without one."""
    return {r.label: baseline or r.default_baseline for r in ds.runs}


@dataclass(frozen=True)
class Ratio:
    """One speedup point: baseline time / entry time, both of one run and one problem."""

    entry: Entry
    base: Entry
    ratio: float


@dataclass
class SeqView:
    """Self-attention points of one dtype (fastest tile per run, variant and problem), the
    baselines and the speedup ratios, keyed by series (variant, + shape, + run when several)."""

    dtype: str
    pts: list[Entry]
    bases: dict[str, Optional[str]]
    multi_shape: bool
    multi_run: bool
    ratios: dict[str, list[Ratio]] = field(default_factory=dict)

    def series_key(self, e: Entry) -> str:
        k = e.variant
        if self.multi_shape:
            k += f" B{e.B} H{e.H} Hkv{e.Hkv}"
        if self.multi_run:
            k += f" [{e.run}]"
        return k

    @property
    def d_vals(self) -> list[int]:
        return sorted({e.d for e in self.pts})

    @property
    def masks(self) -> list[str]:
        return sorted({e.mask for e in self.pts}, key=lambda m: (m != "none", m != "causal", m))

    @property
    def seqs(self) -> list[int]:
        return sorted({e.Nq for e in self.pts})

    @property
    def base_names(self) -> str:
        return ", ".join(sorted({b for b in self.bases.values() if b is not None}))

    def is_baseline(self, e: Entry) -> bool:
        return e.variant == self.bases[e.run]


def seq_view(ds: Dataset, dtype: str, baseline: Optional[str]) -> Optional[SeqView]:
    """None when the dtype has no self-attention entry (Nq = Nkv)."""
    entries = seq_entries(ds.entries, dtype)
    if not entries:
        return None
    pts = list(best_by(entries, key=lambda e: (e.run, e.variant, e.problem_key)).values())
    v = SeqView(dtype, pts, baselines(ds, baseline),
                multi_shape=len({(e.B, e.H, e.Hkv) for e in pts}) > 1, multi_run=len(ds.runs) > 1)
    base = {(e.run, e.problem_key): e for e in pts if v.is_baseline(e)}
    for e in pts:
        b = base.get((e.run, e.problem_key))
        if b is None or v.is_baseline(e):
            continue
        v.ratios.setdefault(v.series_key(e), []).append(Ratio(e, b, b.time_ms / e.time_ms))
    return v


# ---- versus libraries -------------------------------------------------------------------

def library_row_names(ds: Dataset) -> set[str]:
    """attnbench rows that are one fused library call (cudnn_sdpa: tags library + fused) count
    as libraries here; cublas_unfused (library GEMMs around attnbench's own softmax) does not."""
    return ds.tagged("library") & ds.tagged("fused")


def _fastest(es: list[Entry]) -> Optional[Entry]:
    """The fastest entry whose output passed its check (one over tolerance never wins)."""
    good = [e for e in es if e.err_ok is not False]
    return min(good, key=lambda e: e.time_ms) if good else None


def versus_rows(ds: Dataset) -> list[tuple[Entry, Entry, float]]:
    """Per problem (dtype, shape, mask) with both: the fastest attnbench softmax entry (any
    variant, any tile), the fastest library peer, and attnbench time / library time, in one run."""
    other_math = {r.name for run in ds.runs for r in run.variants if r.math != "softmax"}  # linear: another function
    library_rows = library_row_names(ds)
    groups: dict[tuple, list[Entry]] = {}
    for e in ds.ok_entries:
        if e.variant not in other_math:
            groups.setdefault((e.run,) + e.problem_key, []).append(e)
    rows = []
    for k in sorted(groups, key=lambda k: (dtype_order(k[2]), k[1]) + k[3:]):
        ours = _fastest([e for e in groups[k] if not e.peer and e.variant not in library_rows])
        lib = _fastest([e for e in groups[k] if e.peer or e.variant in library_rows])
        if ours and lib:
            rows.append((ours, lib, ours.time_ms / lib.time_ms))
    return rows

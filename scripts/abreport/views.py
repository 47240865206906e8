"""What each chart shows, computed once for both outputs: the matplotlib figures (roofline,
speedup) and the interactive page (html_report) draw these selections, ratios and roofs, so the
two views cannot disagree. No matplotlib here.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from .data import Ceilings, Dataset, Entry, best_by, dtype_order
from .palette import marker_order
from .roofs import ROOFS, RoofPosition, position
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
    """One set of ceilings of a dtype: bandwidth line up to the ridge, flat peak after it, and
    the exp rate (the third roof: drawn per point where it binds, see exp_marks)."""

    kind: str  # measured | theoretical
    bandwidth_gbps: Optional[float]
    peak_tflops: Optional[float]
    ridge: Optional[float]  # FLOP/byte where the two meet; None without both
    peak_is_fp32_compute: bool  # the CPU's fp32 GEMM standing in for a dtype computed in fp32
    exps_per_s: Optional[float] = None

    def label_bandwidth(self) -> str:
        return f"{self.kind} bandwidth {fmt_num(self.bandwidth_gbps or 0)} GB/s"

    def label_peak(self, dtype: str) -> str:
        return (f"{self.kind} {dtype} peak {self.peak_tflops:.3g} TFLOP/s"
                + (" (fp32 GEMM: computed in fp32)" if self.peak_is_fp32_compute else ""))

    def label_exp(self) -> str:
        return f"{self.kind} exp rate {exp_rate_text(self.exps_per_s)}"


def exp_rate_text(rate: Optional[float]) -> str:
    """An exp rate for people: 3.87e12 -> "3.87 Texp/s", 9.1e9 -> "9.1 Gexp/s"."""
    if not rate:
        return "—"
    for div, unit in ((1e12, "Texp/s"), (1e9, "Gexp/s"), (1e6, "Mexp/s")):
        if rate >= div:
            return f"{rate / div:.3g} {unit}"
    return f"{rate:.3g} exp/s"


def roofs(ceil: Ceilings, dtype: str) -> list[Roof]:
    """Measured, then theoretical ceilings of `dtype` that have a bandwidth, a peak or an exp rate."""
    out = []
    for kind, cs in (("measured", ceil.measured), ("theoretical", ceil.theoretical)):
        bw, peak, ex = cs.bandwidth_gbps, cs.peak(dtype), cs.exps_per_s
        if bw or peak or ex:
            out.append(Roof(kind, bw or None, peak or None, cs.ridge(dtype), cs.peak_is_fp32_compute(dtype), ex or None))
    return out


# ---- the exp roof -------------------------------------------------------------------------

@dataclass(frozen=True)
class ExpMark:
    """A roofline point whose exp bound is the tightest of its three: its exp roof in the
    chart's units (useful FLOPs / (exps / exp rate), TFLOP/s) at its intensity."""

    entry: Entry
    intensity: float
    exp_roof_tflops: float
    pct: float  # % of the exp bound the point reaches


def exp_marks(ds: Dataset, entries: list[Entry]) -> list[ExpMark]:
    """The roofline's exp-roof ticks: every entry of `entries` bound by the exp roof."""
    out = []
    for e in entries:
        p = position(e, ds.ceilings)
        if p.bound == "exp" and p.exp_ms and p.pct_of_roof is not None:
            out.append(ExpMark(e, p.intensity, e.flops / (p.exp_ms * 1e-3) / 1e12, p.pct_of_roof))
    return out


@dataclass(frozen=True)
class BoundRow:
    """One variant's best configuration (highest TFLOP/s of its dtype) with its three lower bounds."""

    entry: Entry
    pos: RoofPosition

    def pct(self, roof: str) -> Optional[float]:
        """That roof's lower bound as % of the measured time (None: unknown)."""
        b = self.pos.bounds_ms.get(roof)
        return None if b is None or not self.entry.time_ms else 100.0 * b / self.entry.time_ms

    @property
    def binding(self) -> str:
        """compute | memory | exp (the bound's first word), or "" without ceilings."""
        w = self.pos.bound.split(" ")[0]
        return w if w in ROOFS else ""


def bound_rows(ds: Dataset, dtype: str) -> list[BoundRow]:
    """Per attnbench variant of `dtype` (library peers left out): its highest-TFLOP/s entry and
    where it stands under the three roofs, in variant order; [] when no entry has a bound."""
    best: dict[str, Entry] = {}
    for e in ds.ok_entries:
        if e.dtype != dtype or e.peer or not e.tflops:
            continue
        if e.variant not in best or e.tflops > best[e.variant].tflops:
            best[e.variant] = e
    rows = [BoundRow(e, position(e, ds.ceilings)) for _, e in sorted(best.items())]
    return [r for r in rows if r.pos.bound_ms is not None]


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
        k = e.variant + (f" {e.pass_label}" if e.pass_label else "")
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

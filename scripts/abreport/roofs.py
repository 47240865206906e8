"""Roofline arithmetic with three roofs: the lower bound on an entry's time is the
largest of FLOPs / peak (compute), bytes / bandwidth (memory) and exps / exp rate (exp); the
roof that gives it binds, and % of bound = that bound / measured time. The exp roof needs the
entry's `exps` (written since the exp roof) and an exp rate in the ceilings; without either it is
unknown and said so, never invented."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .data import Ceilings, Entry

ROOFS = ("compute", "memory", "exp")  # the binding-roof names, in the order the report lists them


@dataclass(frozen=True)
class RoofPosition:
    """Where one entry stands under its roofs."""

    intensity: float  # FLOP/byte used (measured bytes when present)
    intensity_source: str  # "measured" | "modeled"
    attainable_tflops: Optional[float]  # useful FLOPs / the largest bound; None without ceilings
    pct_of_roof: Optional[float]  # % of bound: largest bound / measured time * 100 (= achieved / attainable)
    ridge: Optional[float]  # FLOP/byte where bandwidth meets the compute peak
    bound: str  # "memory" | "compute" | "exp" | "n/a (...)" | "memory (no <dtype> peak)" | ...
    ceilings: str  # "measured" | "theoretical" | "none" | "measured bandwidth and theoretical <dtype> peak"
    # Lower bounds on the time (ms) from each roof; None when that roof is unknown.
    compute_ms: Optional[float] = None
    memory_ms: Optional[float] = None
    exp_ms: Optional[float] = None
    exp_rate: Optional[float] = None  # exps per second used for exp_ms
    exp_note: str = ""  # why the exp roof is unknown ("" when known), or which ceiling it took

    @property
    def bounds_ms(self) -> dict[str, Optional[float]]:
        return {"compute": self.compute_ms, "memory": self.memory_ms, "exp": self.exp_ms}

    @property
    def bound_ms(self) -> Optional[float]:
        known = [b for b in self.bounds_ms.values() if b is not None]
        return max(known) if known else None


def attainable(bw_gbps: Optional[float], peak_tflops: Optional[float], intensity: float) -> Optional[float]:
    roofs = []
    if bw_gbps:
        roofs.append(bw_gbps * intensity / 1e3)
    if peak_tflops:
        roofs.append(peak_tflops)
    return min(roofs) if roofs else None


def exp_rate(ceilings: Ceilings) -> tuple[Optional[float], str]:
    """The exp rate (exps/s) the exp roof takes: measured, else theoretical; with its kind."""
    if ceilings.measured.exps_per_s:
        return ceilings.measured.exps_per_s, "measured"
    if ceilings.theoretical.exps_per_s:
        return ceilings.theoretical.exps_per_s, "theoretical"
    return None, ""


def exp_unknown_note(e: Entry, ceilings: Ceilings) -> str:
    """Why an entry's exp roof is unknown ("" when it is known)."""
    if e.exps is None and e.peer:
        return "exp roof unknown: a library's exponentials are not modeled"
    if e.exps is None:
        return "exp roof unknown: the entry records no exps (a file written before the exp roof)"
    if exp_rate(ceilings)[0] is None:
        return "exp roof unknown: no exp rate in the run's ceilings"
    return ""


def position(e: Entry, ceilings: Ceilings) -> RoofPosition:
    assert e.ok and e.roof_intensity is not None and e.tflops is not None
    intensity = e.roof_intensity
    src = "measured" if e.measured_intensity is not None else "modeled"
    cs, kind = ceilings.primary(e.dtype)
    peak, bw = cs.peak(e.dtype), cs.bandwidth_gbps
    if peak is None and kind == "measured" and ceilings.theoretical.peak(e.dtype) is not None:
        # No GEMM of this dtype was measured (e4m3 on GPUs): the datasheet peak still caps the roof.
        peak = ceilings.theoretical.peak(e.dtype)
        kind = f"measured bandwidth and theoretical {e.dtype} peak"
    rate, rate_kind = exp_rate(ceilings)
    note = exp_unknown_note(e, ceilings)
    flops = e.flops if e.flops else e.tflops * 1e12 * e.time_ms * 1e-3 if e.time_ms else None
    compute_ms = flops / (peak * 1e12) * 1e3 if peak and flops else None
    memory_ms = flops / intensity / (bw * 1e9) * 1e3 if bw and flops and intensity > 0 else None
    exp_ms = e.exps / rate * 1e3 if not note and rate and e.exps is not None else None
    if not note and rate_kind and rate_kind != kind.split(" ")[0]:
        note = f"exp roof from the {rate_kind} exp rate"
    ridge = peak * 1e3 / bw if peak is not None and bw else None
    known = {k: v for k, v in (("compute", compute_ms), ("memory", memory_ms), ("exp", exp_ms)) if v is not None}
    if not known:
        return RoofPosition(intensity, src, None, None, None, "n/a (no ceilings)", "none",
                            exp_note=note)
    # compute or memory by the ridge (as the roofline's dotted line splits them), then exp when its
    # bound is longer still.
    if compute_ms is not None and memory_ms is not None:
        bound = "memory" if intensity < ridge else "compute"
    else:
        bound = "compute" if compute_ms is not None else "memory" if memory_ms is not None else "exp"
    if exp_ms is not None and exp_ms > known[bound]:
        bound = "exp"
    # The roof in TFLOP/s (useful FLOPs / the largest bound) and % of it = achieved / roof; for the
    # compute and memory roofs exactly min(peak, bandwidth x intensity), as before the exp roof.
    att = flops / (exp_ms * 1e-3) / 1e12 if bound == "exp" else attainable(bw, peak, intensity)
    pct = 100.0 * e.tflops / att if att else None
    if bound == "memory" and peak is None:
        bound = f"memory (no {e.dtype} peak)"
    elif bound == "compute" and not bw:
        bound = "compute (no bandwidth)"
    return RoofPosition(intensity, src, att, pct, ridge, bound, kind, compute_ms, memory_ms, exp_ms,
                        rate if exp_ms is not None else None, note)

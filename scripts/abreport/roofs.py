"""Roofline arithmetic: attainable TFLOP/s, % of roofline and memory/compute bound."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .data import Ceilings, Entry


@dataclass(frozen=True)
class RoofPosition:
    """Where one entry stands under its roof."""

    intensity: float  # FLOP/byte used (measured bytes when present)
    intensity_source: str  # "measured" | "modeled"
    attainable_tflops: Optional[float]  # min(peak, bw * intensity); None without ceilings
    pct_of_roof: Optional[float]  # achieved / attainable * 100
    ridge: Optional[float]  # FLOP/byte
    bound: str  # "memory" | "compute" | "n/a (...)"
    ceilings: str  # "measured" | "theoretical" | "none" | "measured bandwidth and theoretical <dtype> peak"


def attainable(bw_gbps: Optional[float], peak_tflops: Optional[float], intensity: float) -> Optional[float]:
    roofs = []
    if bw_gbps:
        roofs.append(bw_gbps * intensity / 1e3)
    if peak_tflops:
        roofs.append(peak_tflops)
    return min(roofs) if roofs else None


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
    if peak is None and bw is None:
        return RoofPosition(intensity, src, None, None, None, "n/a (no ceilings)", "none")
    att = attainable(bw, peak, intensity)
    pct = 100.0 * e.tflops / att if att else None
    ridge = peak * 1e3 / bw if peak is not None and bw else None
    if ridge is not None:
        bound = "memory" if intensity < ridge else "compute"
    elif peak is None:
        bound = f"memory (no {e.dtype} peak)"
    else:
        bound = "compute (no bandwidth)"
    return RoofPosition(intensity, src, att, pct, ridge, bound, kind)

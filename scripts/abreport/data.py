"""Typed view of an attnbench run (docs/json_schema.md): context, ceilings, entries."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Optional

from .variants import BACKENDS, VariantRow, baseline_of, names_tagged

# Problem fields that, with variant/backend/dtype/mask, identify a configuration.
SHAPE_FIELDS = ("B", "H", "Hkv", "Nq", "Nkv", "d")
TILE_FIELDS = ("Br", "Bc")


@dataclass(frozen=True)
class Entry:
    """One benchmark entry: one (variant, configuration) of one run."""

    run: str  # label of the run (file) the entry came from
    name: str
    variant: str
    backend: str
    dtype: str
    mask: str
    group: str
    status: str  # ok | skipped | failed | unplotted (ran, but the JSON has no model or time)
    B: int
    H: int
    Hkv: int
    Nq: int
    Nkv: int
    d: int
    Br: int
    Bc: int
    error_message: str = ""
    # Present (not None) for every ok entry.
    time_ms: Optional[float] = None
    tflops: Optional[float] = None
    gbps: Optional[float] = None
    intensity: Optional[float] = None
    flops: Optional[float] = None
    bytes: Optional[float] = None
    # Optional fields.
    time_cv: float = 0.0
    bytes_min: Optional[float] = None
    rel_err: Optional[float] = None
    err_ok: Optional[bool] = None
    tolerance: Optional[float] = None  # the dtype's sweep tolerance that err_ok gates rel_err with
    # FP8: rel_err is against the fp64 reference on the inputs the kernel saw (quantised
    # for e4m3); e2e_rel_err against the fp64 reference on the unrounded fp32 inputs. None when the
    # file does not record them (older files) or holds null.
    e2e_rel_err: Optional[float] = None
    out_dtype: Optional[str] = None  # dtype of O (bf16 for e4m3 entries)
    # The check of every output: rows whose error was measured (every row against the
    # backend's fp32 reference, or the fp64 sample), bad elements the scan of every row found, the
    # worst row's relative error, its (b, h, i) and its tolerance. None in files written before.
    rows_total: Optional[int] = None
    rows_checked: Optional[int] = None
    nonfinite_outputs: Optional[int] = None
    worst_row_err: Optional[float] = None
    worst_row: Optional[tuple[int, int, int]] = None
    row_tolerance: Optional[float] = None
    input_scales: Optional[tuple[float, float, float]] = None  # per-tensor e4m3 scales (q, k, v)
    # Exponentials the entry's kernel executes (model). None in files written before the
    # exp roof: its exp bound is then unknown (roofs.py), never invented.
    exps: Optional[float] = None
    dram_bytes_measured: Optional[float] = None
    l2_bytes_measured: Optional[float] = None
    kernel_time_ncu: Optional[float] = None
    # A library peer (scripts/peers.py): backend torch, flash_attn, ...; peer_device is the
    # attnbench backend it ran beside (cpu or cuda); Br = Bc = 0 (its tiles are its own).
    peer_device: Optional[str] = None
    library: str = ""
    # The pass (docs/backward.md): fwd, bwd or fwd_bwd ("fwd" in older files), and the
    # worst gradient's relative error of bwd / fwd_bwd entries (None otherwise).
    pass_: str = "fwd"
    grad_err: Optional[float] = None
    # The entry object as read from the file, every field (the HTML page shows it on hover);
    # None for entries built in code. Not part of equality or hashing.
    raw: Optional[dict] = field(default=None, compare=False, repr=False)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def peer(self) -> bool:
        return self.peer_device is not None

    @property
    def platform(self) -> str:
        """Where it ran: the attnbench backend, or the one a peer ran beside."""
        return self.peer_device or self.backend

    @property
    def problem_key(self) -> tuple:
        """The problem without variant and tiles: entries of different variants that
        share it solve the same problem (speedup pairs); a peer pairs with the attnbench
        rows of the backend it ran beside."""
        key = (self.platform, self.dtype, self.B, self.H, self.Hkv, self.Nq, self.Nkv, self.d, self.mask)
        return key if self.pass_ == "fwd" else key + (self.pass_,)  # forward keys as before the pass axis

    @property
    def config_key(self) -> tuple:
        """Variant, problem and tiles: what `compare` matches between two runs."""
        return (self.variant,) + self.problem_key + (self.Br, self.Bc)

    @property
    def pass_label(self) -> str:
        """'' for the forward, else how charts name the pass ('bwd', 'fwd+bwd')."""
        return {"fwd": "", "bwd": "bwd", "fwd_bwd": "fwd+bwd"}[self.pass_]

    @property
    def shape_label(self) -> str:
        text = f"B{self.B} H{self.H} Hkv{self.Hkv} Nq{self.Nq} Nkv{self.Nkv} d{self.d} {self.mask}"
        return text if self.pass_ == "fwd" else f"{text} pass:{self.pass_}"

    @property
    def measured_intensity(self) -> Optional[float]:
        """FLOPs per measured DRAM byte, when Nsight Compute measured them."""
        if self.flops is None or not self.dram_bytes_measured:
            return None
        return self.flops / self.dram_bytes_measured

    @property
    def roof_intensity(self) -> Optional[float]:
        """The intensity the roofline uses: measured bytes when present, else modeled."""
        m = self.measured_intensity
        return m if m is not None else self.intensity


@dataclass(frozen=True)
class CeilingSet:
    """One kind of ceilings (measured or theoretical): bandwidth and per-dtype peaks."""

    bandwidth_gbps: Optional[float] = None
    tflops: dict[str, float] = field(default_factory=dict)
    exps_per_s: Optional[float] = None  # the exp roof: exponentials per second
    # The CPU backend computes every dtype in fp32 (bf16/fp16/e4m3 inputs rounded, math in
    # fp32: docs/cpu.md), so its fp32 GEMM is every dtype's compute roof.
    fp32_compute: bool = False

    def peak(self, dtype: str) -> Optional[float]:
        p = self.tflops.get(dtype)
        return self.tflops.get("fp32") if p is None and self.fp32_compute else p

    def peak_is_fp32_compute(self, dtype: str) -> bool:
        """True when peak(dtype) is the fp32 GEMM standing in for a dtype computed in fp32."""
        return self.fp32_compute and dtype not in self.tflops and "fp32" in self.tflops

    def ridge(self, dtype: str) -> Optional[float]:
        """Intensity (FLOP/byte) where the bandwidth roof meets the compute roof."""
        p = self.peak(dtype)
        if p is None or not self.bandwidth_gbps:
            return None
        return p * 1e3 / self.bandwidth_gbps

    @property
    def empty(self) -> bool:
        return self.bandwidth_gbps is None and not self.tflops and self.exps_per_s is None


@dataclass(frozen=True)
class Ceilings:
    measured: CeilingSet = field(default_factory=CeilingSet)
    theoretical: CeilingSet = field(default_factory=CeilingSet)

    def primary(self, dtype: str) -> tuple[CeilingSet, str]:
        """The set used for % of roofline and bound: measured, else theoretical."""
        if self.measured.bandwidth_gbps is not None or self.measured.peak(dtype) is not None:
            return self.measured, "measured"
        return self.theoretical, "theoretical"


@dataclass
class Run:
    """One input file: its context and entries."""

    path: str
    label: str
    context: dict
    ceilings: Ceilings
    entries: list[Entry]
    # The harness's registry rows (context.variants); () for files written before it listed them.
    variants: tuple[VariantRow, ...] = ()

    def ctx(self, key: str, default: str = "unknown") -> str:
        v = self.context.get(key)
        return str(v) if v not in (None, "") else default

    @property
    def device(self) -> str:
        return self.ctx("device")

    @property
    def backend(self) -> str:
        b = self.context.get("backend")
        if isinstance(b, str) and b:
            return b
        backends = sorted({e.backend for e in self.entries})
        return ",".join(backends) if backends else "unknown"

    @property
    def default_baseline(self) -> Optional[str]:
        """The run's row of its backend tagged baseline; None without one (no default)."""
        return baseline_of(self.variants, self.backend)

    def rows_of_backend(self) -> tuple[VariantRow, ...]:
        """The rows of the run's backend, in registry order (every row when it is unknown)."""
        if self.backend not in BACKENDS:
            return self.variants
        return tuple(r for r in self.variants if r.backend == self.backend)

    @property
    def commit(self) -> str:
        c = self.ctx("git_commit")
        if c != "unknown" and len(c) > 12:
            c = c[:12]
        if self.context.get("git_dirty") is True:
            c += "-dirty"
        return c


@dataclass
class Dataset:
    """Entries of one or more runs, charted together. Ratios pair entries of one run only."""

    runs: list[Run]

    @property
    def entries(self) -> list[Entry]:
        return [e for r in self.runs for e in r.entries]

    @property
    def ok_entries(self) -> list[Entry]:
        return [e for e in self.entries if e.ok]

    @property
    def ceilings(self) -> Ceilings:
        """Ceilings of the first run that has any (runs charted together share a device)."""
        for r in self.runs:
            if not (r.ceilings.measured.empty and r.ceilings.theoretical.empty):
                return r.ceilings
        return Ceilings()

    @property
    def peers(self) -> set[str]:
        """Names of the library peers that ran (scripts/peers.py)."""
        return {e.variant for e in self.ok_entries if e.peer}

    def tagged(self, tag: str) -> set[str]:
        """Names of the variant rows carrying `tag` in any run."""
        return set().union(*(names_tagged(r.variants, tag) for r in self.runs))

    @property
    def dtypes(self) -> list[str]:
        return sorted({e.dtype for e in self.ok_entries}, key=dtype_order)

    @property
    def backend(self) -> str:
        return join_unique(r.backend for r in self.runs)

    @property
    def device(self) -> str:
        return join_unique(r.device for r in self.runs)

    @property
    def commit(self) -> str:
        return join_unique(r.commit for r in self.runs)

    def title_suffix(self, dtype: str) -> str:
        return f"{self.device} · {dtype} · commit {self.commit}"


DTYPE_ORDER = ("fp32", "tf32", "fp16", "bf16", "e4m3")


def dtype_order(d: str) -> tuple[int, str]:
    return (DTYPE_ORDER.index(d) if d in DTYPE_ORDER else len(DTYPE_ORDER), d)


def join_unique(values: Iterable[str]) -> str:
    seen: list[str] = []
    for v in values:
        if v not in seen:
            seen.append(v)
    return ", ".join(seen) if seen else "unknown"


def best_by(entries: Iterable[Entry], key) -> dict:
    """Per key, the fastest ok entry (minimum time): tiles and repeats collapse to one point."""
    best: dict = {}
    for e in entries:
        if not e.ok:
            continue
        k = key(e)
        if k not in best or e.time_ms < best[k].time_ms:
            best[k] = e
    return best

#!/usr/bin/env python3
"""Library peers on an attnbench sweep's problems, written as attnbench result entries.

What a user would call instead of writing a kernel, measured on the same problems as an
attnbench sweep (read from its JSON or .log.jsonl) with the same method:
  - PyTorch scaled_dot_product_attention: default dispatch (torch_sdpa) and each backend
    forced through torch.nn.attention.sdpa_kernel (torch_sdpa_flash, _efficient, _cudnn,
    _math); FlexAttention (torch_flex, compiled; block masks for causal / local / global;
    compile time excluded from the timing and reported as compile_ms);
  - flash-attn (flash_attn_func) and FlashInfer (single_prefill_with_kv_cache) when importable;
  - the PyPI approximations beside attnbench's comparison rows (docs/approximations.md), on the
    CPU, fp32, forward, on the problems where the sweep ran the matching row: performer-pytorch's
    FastAttention (pypi_performer: 256 features), linformer's LinformerSelfAttention
    (pypi_linformer: k = min(256, Nkv), its Q/K/V/out layers replaced by identities so it attends
    over the given Q, K, V) and routing-transformer's KmeansAttention (pypi_routing: c =
    round(sqrt(Nkv)) clusters, windows ceil(N / c), its k-means centroids initialised from the
    first call's Q and K, outside the timing, and never updated: eval mode). Their random
    features, projections and centroids are their own, so no fp64 check of the same
    approximation exists here: the entry carries approx_err_vs_exact (relative L2 to exact fp64
    softmax attention, as attnbench's rows do), rel_err and err_ok are null, and its flops and
    bytes are the attnbench row's model of the same problem (bytes_model "attnbench:<row>"). Only
    problems where the sweep ran the row get an entry (no skipped entry elsewhere);
  - the scan rows' libraries (scripts/peers_scans.py): mamba_ssm's selective_scan_fn and
    mamba_chunk_scan_combined, flash-linear-attention's chunk_rwkv6, beside selective_scan, ssd
    and wkv6 on the (shape, N, G) the sweep ran them on; CUDA only (skipped on the CPU saying so).
The backward (docs/backward.md): for the sweep's bwd and fwd_bwd entries, torch_sdpa
(default dispatch), each SDPA backend forced (torch_sdpa_flash, _efficient, _cudnn, _math: the
backend's forward and the backward autograd pairs with it; one the device lacks is skipped with
torch's reason) and torch_flex (on CUDA: FlexAttention has no CPU backward) time
torch.autograd.grad of the output for dO: bwd from one forward run
outside the timed calls (retain_graph), fwd_bwd the forward and the backward in one call;
autograd.grad returns fresh gradients, so nothing accumulates across runs. FLOPs 2.5 x (bwd)
and 3.5 x (fwd_bwd) the forward's; dQ, dK, dV checked against fp64 autograd of the masked
softmax (dq_err, dk_err, dv_err, grad_err). The other peers at those passes are skipped.
Masks follow core/mask.hpp: queries aligned to the end of the keys (i' = i + Nkv - Nq), so
SDPA gets is_causal only when Nq == Nkv, causal_lower_right (bottom-right causal, no mask
tensor) when Nq < Nkv, and an explicit boolean mask otherwise. Masks with sparse terms
(strided, random, layout) are the harness's own: `attnbench mask` writes their visibility
(--attnbench), SDPA gets it as a boolean mask ([H, Nq, Nkv] for a per-head layout) and
FlexAttention as its mask_mod (indexed by head where the layout has one per head).
Timing: CUDA events with the L2 flushed (a buffer of twice the L2 written) before every
launch, one event pair per launch; on the CPU wall time (steady clock), each run after an
LLC eviction (twice the last-level cache written) when the sweep evicted (--cpu-cache); the
median of the repetitions. FLOPs, bytes and the tolerance are the sweep's own, read from its
entries of the same problem (useful FLOPs `flops`, the minimal IO `bytes_min`: Q, K, V read
once and O written once, bytes_model "minimal_io"; `tolerance`): this script keeps no copy of
the models. Error: relative L2 over sampled rows against an fp64 reference computed here (the
independent check: a mask or layout the sweep and the library both got wrong shows), NaN never
passes. What cannot run is an entry with status skipped and the reason.

  python3 scripts/peers.py --problems results/<dev>/quick-<c>.json --out quick-<c>.peers.json
  attnbench merge quick-<c>.json quick-<c>.peers.json --out quick-<c>.json

Exit status: 0 done (also when entries were skipped), 2 bad input (one line on stderr).
"""
from __future__ import annotations

import argparse
import contextlib
import datetime
import functools
import json
import math
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

import peers_scans

PROG = "peers"
ATTNBENCH_BACKENDS = ("cpu", "cuda")
# (backend, variant) in the order they run; `--variants` selects among them.
VARIANTS = (("torch", "torch_sdpa"), ("torch", "torch_sdpa_flash"), ("torch", "torch_sdpa_efficient"),
            ("torch", "torch_sdpa_cudnn"), ("torch", "torch_sdpa_math"), ("torch", "torch_flex"),
            ("flash_attn", "flash_attn"), ("flashinfer", "flashinfer"),
            ("performer_pytorch", "pypi_performer"), ("linformer", "pypi_linformer"),
            ("routing_transformer", "pypi_routing"), ("mamba_ssm", "mamba_ssm_selective_scan"),
            ("mamba_ssm", "mamba_ssm_ssd"), ("fla", "fla_rwkv6"))
# The PyPI approximations: variant -> (distribution, the attnbench row whose problems and model they take).
APPROX_PEERS = {"pypi_performer": ("performer-pytorch", "performer"), "pypi_linformer": ("linformer", "linformer"),
                "pypi_routing": ("routing-transformer", "routing")}
SEED_APPROX = 26
SEED_INPUTS, SEED_ROWS = 1234, 7
PASSES = ("fwd", "bwd", "fwd_bwd")  # docs/backward.md


class InputFault(Exception):
    """Bad input: one line, exit 2."""


class Unsupported(Exception):
    """This peer cannot run this problem: the entry is skipped with the message."""


# ---- problems ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Mask:
    kind: str  # none | causal | local | sparse (strided, random or layout terms: `attnbench mask`)
    left: int = 0
    right: int = 0
    global_: int = 0


SPARSE_TERMS = ("strided:", "random:", "layout:")


def parse_mask(s: str) -> Mask:
    """core/problem.cpp: none, causal, local:L,R, each optionally +global:G; global:G alone.
    A mask with sparse terms is kind sparse: its visibility comes from `attnbench mask`
    (sparse_visibility), the harness's own definition, not a copy here."""
    if any(t.startswith(SPARSE_TERMS) for t in s.split("+")):
        return Mask("sparse")
    base, _, glob = s.partition("+")
    g = 0
    if base.startswith("global:") and not glob:
        base, glob = "none", base
    if glob:
        if not glob.startswith("global:") or not glob[7:].isdigit() or int(glob[7:]) <= 0:
            raise InputFault(f"bad mask '{s}' (expected ...+global:G with G > 0)")
        g = int(glob[7:])
    if base in ("none", "causal"):
        return Mask(base, 0, 0, g)
    if base.startswith("local:"):
        lr = base[6:].split(",")
        if len(lr) == 2 and all(x.isdigit() for x in lr):
            return Mask("local", int(lr[0]), int(lr[1]), g)
    raise InputFault(f"unknown mask '{s}' (expected none, causal, local:L,R, optionally +global:G)")


@dataclass(frozen=True)
class Problem:
    group: str
    dtype: str
    B: int
    H: int
    Hkv: int
    Nq: int
    Nkv: int
    d: int
    mask: str
    # From the sweep's entries of this problem (the harness's models and tolerance).
    flops: Optional[float] = None
    bytes_min: Optional[float] = None
    tolerance: Optional[float] = None
    grad_tolerance: Optional[float] = None  # bwd and fwd_bwd problems
    pass_: str = "fwd"  # fwd | bwd | fwd_bwd (docs/backward.md)

    @property
    def m(self) -> Mask:
        return parse_mask(self.mask)

    @property
    def mask_error(self) -> str:
        """Why this script cannot build the mask ('' when it can): the harness knows more masks."""
        try:
            parse_mask(self.mask)
            return ""
        except InputFault as f:
            return str(f)

    @property
    def key(self) -> tuple:
        return (self.dtype, self.B, self.H, self.Hkv, self.Nq, self.Nkv, self.d, self.mask, self.pass_)


def window(p: Problem, rows: np.ndarray, shift: Optional[int] = None) -> tuple[np.ndarray, np.ndarray]:
    """Window keys [lo, hi) of query rows (global ignored), clamped to [0, Nkv) (core/mask.hpp)."""
    m = p.m
    s = p.Nkv - p.Nq if shift is None else shift
    lo = np.zeros_like(rows)
    hi = np.full_like(rows, p.Nkv)
    if m.kind == "causal":
        hi = rows + s + 1
    elif m.kind == "local":
        lo = rows + s - m.left
        hi = rows + s + m.right + 1
    lo = np.clip(lo, 0, p.Nkv)
    hi = np.clip(hi, 0, p.Nkv)
    return lo, np.maximum(hi, lo)


ATTNBENCH_BIN: list[str] = []  # the binary `attnbench mask` runs from (main: --attnbench)


# The largest per-head visibility (heads x Nq x Nkv bytes) peers.py builds: the file, the array
# and its copy on the device; a mask the same for every head is one Nq x Nkv.
PER_HEAD_MASK_LIMIT = 1 << 30


@functools.lru_cache(maxsize=4)
def _sparse_visibility(mask: str, nq: int, nkv: int, heads: int) -> np.ndarray:
    if not ATTNBENCH_BIN:
        raise Unsupported("a mask with sparse terms comes from `attnbench mask`: no attnbench binary (--attnbench)")
    with tempfile.TemporaryDirectory(prefix="peers_mask_") as d:
        out = os.path.join(d, "vis.npy")
        try:
            r = subprocess.run([ATTNBENCH_BIN[0], "mask", "--mask", mask, "--nq", str(nq), "--nkv", str(nkv),
                                "--heads", str(heads), "--out", out], capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise Unsupported(f"attnbench mask: {one_line(str(e))}") from None
        if r.returncode != 0:
            raise Unsupported(f"attnbench mask: {one_line(r.stderr.strip())}")
        vis = np.load(out)
    return vis.astype(bool)


def sparse_visibility(p: Problem) -> np.ndarray:
    """Boolean [heads, Nq, Nkv] of a mask with sparse terms, from `attnbench mask` (core/mask.hpp
    is_visible): heads is 1 unless a block layout differs per head, then H. Unsupported without
    the binary, or for a per-head mask over PER_HEAD_MASK_LIMIT bytes."""
    per_head = mask_per_head(p.mask)
    if per_head and p.H * p.Nq * p.Nkv > PER_HEAD_MASK_LIMIT:
        raise Unsupported(f"mask '{p.mask}' differs per head: its visibility would take H Nq Nkv = "
                          f"{p.H * p.Nq * p.Nkv / 2**30:.1f} GiB (peers.py's limit {PER_HEAD_MASK_LIMIT / 2**30:g})")
    return _sparse_visibility(p.mask, p.Nq, p.Nkv, p.H if per_head else 1)  # one cache entry for every H


@functools.lru_cache(maxsize=16)
def mask_per_head(mask: str) -> bool:
    """A block layout of more than one head (the .npy's first dimension); only its header is read.
    Terms split at '+' except that layout:b:PATH takes the rest of the string (core/problem.cpp)."""
    rest = mask
    while rest and not rest.startswith("layout:"):
        rest = rest.partition("+")[2]
    if not rest:
        return False
    try:
        with open(rest.split(":", 2)[-1], "rb") as f:
            major, _ = np.lib.format.read_magic(f)
            read_header = np.lib.format.read_array_header_1_0 if major == 1 else np.lib.format.read_array_header_2_0
            shape = read_header(f)[0]
    except (OSError, ValueError):
        return False  # `attnbench mask` reports it
    return len(shape) == 3 and shape[0] > 1


def visible_matrix(p: Problem, rows: np.ndarray, misalign: bool = False, head: int = 0) -> np.ndarray:
    """Boolean [len(rows), Nkv]: key j visible to query row i of query head `head` (which matters
    only for a per-head layout). misalign (a negative control only) aligns the queries to the start
    of the keys (top-left) instead of the end, and shifts a sparse mask one key to the right."""
    if p.m.kind == "sparse":
        sv = sparse_visibility(p)
        vis = sv[head if sv.shape[0] > 1 else 0][rows]
        return np.roll(vis, 1, axis=1) if misalign else vis
    lo, hi = window(p, rows, shift=0 if misalign else None)
    j = np.arange(p.Nkv)[None, :]
    vis = (j >= lo[:, None]) & (j < hi[:, None])
    g = p.m.global_
    if g:
        vis |= j < g
        vis |= rows[:, None] < g
    return vis


def visible_pairs_per_head(p: Problem) -> float:
    """Exact visible (query, key) pairs of one (batch, head), like core/mask.hpp visible_keys
    (their mean over the heads for a per-head layout)."""
    if p.m.kind == "sparse":
        sv = sparse_visibility(p)
        return int(sv.sum()) / sv.shape[0]
    rows = np.arange(p.Nq, dtype=np.int64)
    lo, hi = window(p, rows)
    g = min(p.m.global_, p.Nkv)
    size = hi - lo
    overlap = np.where(size > 0, np.maximum(0, np.minimum(hi, g) - lo), 0)
    keys = size + g - overlap
    keys = np.where(rows < p.m.global_, p.Nkv, keys)
    return int(keys.sum())


def read_sweep(path: str) -> tuple[dict, list[dict]]:
    """(context, entries) of an attnbench JSON or .log.jsonl results log."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise InputFault(f"{path}: cannot read ({e.strerror or e})") from None
    try:
        if path.endswith(".jsonl"):
            context: dict = {}
            entries = []
            for n, line in enumerate(text.splitlines(), start=1):
                if not line.strip():
                    continue
                obj = json.loads(line)
                if isinstance(obj, dict) and isinstance(obj.get("context"), dict) and "name" not in obj:
                    context = obj["context"]
                elif isinstance(obj, dict):
                    entries.append(obj)
            return context, entries
        doc = json.loads(text)
    except (ValueError, RecursionError) as e:
        raise InputFault(f"{path}: not valid JSON ({str(e).splitlines()[0]})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list):
        raise InputFault(f"{path}: not an attnbench results file (needs 'context' and 'benchmarks')")
    ctx = doc.get("context")
    return (ctx if isinstance(ctx, dict) else {}), doc["benchmarks"]


def softmax_rows(context: dict) -> Optional[set[str]]:
    rows = context.get("variants")
    if not isinstance(rows, list):
        return None
    return {r.get("name") for r in rows if isinstance(r, dict) and r.get("math") == "softmax"}


def finite_number(v: Any) -> bool:
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        return False
    try:
        return math.isfinite(float(v))
    except OverflowError:  # a JSON integer beyond the float range
        return False


def problems_of(path: str) -> tuple[dict, list[Problem]]:
    """The sweep's distinct problems (tiles ignored), in order of first appearance; each in
    the first group it appears in other than `tiles` (a tile shape repeats another group's
    problem), with the useful FLOPs, minimal bytes and tolerance of its entries (every softmax
    row of one problem must report the same ones)."""
    context, entries = read_sweep(path)
    softmax = softmax_rows(context)
    order: dict[tuple, Problem] = {}
    figures: dict[tuple, dict[str, float]] = {}
    for i, e in enumerate(entries):
        if not isinstance(e, dict) or e.get("backend") not in ATTNBENCH_BACKENDS or e.get("peer"):
            continue
        try:
            p = Problem(group=str(e.get("group") or ""), dtype=str(e["dtype"]),
                        **{k: int(e[k]) for k in ("B", "H", "Hkv", "Nq", "Nkv", "d")}, mask=str(e["mask"]),
                        pass_=str(e.get("pass", "fwd")))
        except (KeyError, TypeError, ValueError):
            raise InputFault(f"{path}: benchmarks[{i}]: missing or bad problem fields "
                             "(dtype, B, H, Hkv, Nq, Nkv, d, mask)") from None
        if p.pass_ not in PASSES:
            raise InputFault(f"{path}: benchmarks[{i}].pass: '{p.pass_}' is not fwd, bwd or fwd_bwd")
        # core/problem.hpp's limits: max_batch, max_heads, max_seq; head dims up to 256
        if (min(p.B, p.H, p.Hkv, p.Nq, p.Nkv, p.d) <= 0 or p.H % p.Hkv or p.B > 1 << 20 or p.H > 1 << 16
                or max(p.Nq, p.Nkv) > 1 << 24 or p.d > 256):
            raise InputFault(f"{path}: benchmarks[{i}]: bad shape B{p.B} H{p.H} Hkv{p.Hkv} Nq{p.Nq} "
                             f"Nkv{p.Nkv} d{p.d}")
        have = order.get(p.key)
        if have is None or (have.group == "tiles" and p.group != "tiles"):
            order[p.key] = p if have is None else Problem(**{**have.__dict__, "group": p.group})
        known = figures.setdefault(p.key, {})
        for key in ("flops", "bytes_min", "tolerance", "grad_tolerance"):
            v = e.get(key)
            if v is None:
                continue
            if not finite_number(v):
                raise InputFault(f"{path}: benchmarks[{i}].{key}: expected a finite number")
            if key == "flops" and (softmax is None or e.get("variant") not in softmax):
                continue  # another math's FLOPs (linear attention) are not the softmax problem's
            if key in ("tolerance", "grad_tolerance") and (softmax is not None and e.get("variant") not in softmax):
                continue
            old = known.setdefault(key, float(v))
            if not math.isclose(old, float(v), rel_tol=1e-12):
                raise InputFault(f"{path}: benchmarks[{i}] ('{e.get('name')}'): {key} {v} differs from "
                                 f"{old} of another entry of the same problem")
    if not order:
        raise InputFault(f"{path}: no attnbench entries (backend cpu or cuda) to take problems from")
    # A problem whose entries all went unchecked (files before every entry carried one) takes
    # the tolerance of its dtype from the other problems: the harness's is per dtype.
    per_dtype = {k[0]: f["tolerance"] for k, f in figures.items() if "tolerance" in f}
    problems = []
    for k, p in order.items():
        f = {"tolerance": per_dtype.get(p.dtype), **figures[k]}
        if f["tolerance"] is None:
            raise InputFault(f"{path}: no entry of dtype {p.dtype} carries a tolerance")
        problems.append(Problem(**{**p.__dict__, **f}))
    return context, problems


def fmt_duration(s: float) -> str:
    """m:ss, as the sweep's progress line (harness/progress.cpp)."""
    s = max(0, int(round(s)))
    return f"{s // 60}:{s % 60:02d}"


def flex_class(p: Problem) -> str:
    """FlexAttention's compile class in --flex-problems per-mask: the mask kind (with +global)
    and decode (Nq <= 16) or not; dtype, head dim, GQA and lengths share one class."""
    m = p.m
    return f"{m.kind}{'+global' if m.global_ else ''}{', decode' if p.Nq <= 16 else ''}"


def flex_representatives(problems: list[Problem]) -> dict[str, Problem]:
    """Per class, the problem with the most FLOPs (the longest run, the least start-up noise);
    among equals a GQA one (it also exercises enable_gqa), then the first."""
    best: dict[str, Problem] = {}
    rank = lambda p: (p.flops or 0.0, p.Hkv != p.H)  # noqa: E731
    for p in problems:
        if p.mask_error or p.dtype not in TORCH_DTYPE or p.pass_ != "fwd":  # flex runs the forward only
            continue
        c = flex_class(p)
        if c not in best or rank(p) > rank(best[c]):
            best[c] = p
    return best


# ---- validation ------------------------------------------------------------------------------

def validation_rows(p: Problem) -> int:
    """harness/validation.cpp: ~3e8 fp64 multiply-adds of the reference per configuration."""
    return int(min(max(3e8 / (2.0 * p.Nkv * p.d), 16), 256))


def sample_rows(p: Problem, max_rows: int, seed: int = SEED_ROWS) -> np.ndarray:
    """Flat rows (b H + h) Nq + i, the policy of harness/tensors.cpp sample_rows: all rows when
    there are few, else the first and last row of each sampled head, rows i < global, and
    random rows (numpy's generator, not the harness's)."""
    rows = p.B * p.H * p.Nq
    if rows <= max_rows:
        return np.arange(rows, dtype=np.int64)
    rng = np.random.default_rng(seed)
    heads = p.B * p.H
    sampled = min(heads, max(1, max_rows // 8))
    picked: set[int] = set()
    for s in range(sampled):
        bh = s if sampled == heads else int(rng.integers(0, heads))
        picked.update((bh * p.Nq, bh * p.Nq + p.Nq - 1))
        for i in range(1, min(p.m.global_, p.Nq - 1, 4)):
            picked.add(bh * p.Nq + i)
    while len(picked) < max_rows:
        picked.add(int(rng.integers(0, rows)))
    return np.array(sorted(picked), dtype=np.int64)


def row_models(path: str) -> dict[tuple, dict]:
    """(problem key, attnbench row) -> that entry's model figures, for the approximation peers."""
    _, entries = read_sweep(path)
    out: dict[tuple, dict] = {}
    rows = {row for _, row in APPROX_PEERS.values()}
    for e in entries:
        if not isinstance(e, dict) or e.get("peer") or e.get("variant") not in rows:
            continue
        if not (finite_number(e.get("flops")) and finite_number(e.get("bytes"))):
            continue
        try:
            p = Problem(group="", dtype=str(e["dtype"]), **{k: int(e[k]) for k in ("B", "H", "Hkv", "Nq", "Nkv", "d")},
                        mask=str(e["mask"]), pass_=str(e.get("pass", "fwd")))
        except (KeyError, TypeError, ValueError):
            continue  # problems_of() has already refused a bad entry
        out[(p.key, e["variant"])] = {"flops": float(e["flops"]), "bytes": float(e["bytes"]),
                                      "flops_executed": e.get("flops_executed")}
    return out


def reference_rows(p: Problem, q, k, v, rows: np.ndarray):
    """fp64 softmax attention of the given rows (kernels/reference: no visible key gives zeros)."""
    import torch
    q64, k64, v64 = (t.detach().to("cpu", torch.float64) for t in (q, k, v))
    out = torch.zeros(len(rows), p.d, dtype=torch.float64)
    scale = 1.0 / math.sqrt(p.d)
    group = p.H // p.Hkv
    bh_of = rows // p.Nq
    for bh in np.unique(bh_of):
        sel = np.nonzero(bh_of == bh)[0]
        b, h = divmod(int(bh), p.H)
        i = rows[sel] % p.Nq
        s = (q64[b, h, torch.from_numpy(i)] @ k64[b, h // group].T) * scale
        vis = torch.from_numpy(visible_matrix(p, i, head=h))
        s = s.masked_fill(~vis, -math.inf)
        mx = s.max(dim=1, keepdim=True).values
        w = torch.exp(s - torch.where(torch.isfinite(mx), mx, torch.zeros_like(mx)))
        w = w.masked_fill(~vis, 0.0)
        l = w.sum(dim=1, keepdim=True)
        o = (w @ v64[b, h // group]) / torch.where(l > 0, l, torch.ones_like(l))
        out[torch.from_numpy(sel)] = o
    return out


def compare(p: Problem, o, rows: np.ndarray, ref) -> dict:
    """harness/tensors.cpp compare_rows: rel. L2 over the checked rows, max abs, NaN never passes."""
    import torch
    got = o.detach().to("cpu", torch.float64).reshape(-1, p.d)[torch.from_numpy(rows)]
    finite = torch.isfinite(got)
    nonfinite = int((~finite).sum())
    diff = torch.where(finite, (got - ref).abs(), torch.zeros_like(got))
    want = torch.where(finite, ref, torch.zeros_like(ref))
    num, den = float((diff ** 2).sum()), float((want ** 2).sum())
    rel = math.sqrt(num / den) if den > 0 else math.sqrt(num)
    tol = p.tolerance
    return {"rel_err": None if nonfinite else rel, "max_abs_err": float(diff.max()) if diff.numel() else 0.0,
            "checked_rows": int(len(rows)), "tolerance": tol, "err_ok": nonfinite == 0 and rel <= tol}


# ---- peers -------------------------------------------------------------------------------------

TORCH_DTYPE = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}


def make_inputs(p: Problem, device: str):
    """Q, K, V ~ N(0, 1) from a seed, rounded to the dtype (round to nearest even), [B, heads, N, d]."""
    import torch
    if p.dtype not in TORCH_DTYPE:
        raise Unsupported(f"dtype {p.dtype} has no PyTorch peer here (fp32, fp16, bf16)")
    g = torch.Generator().manual_seed(SEED_INPUTS)
    dt = getattr(torch, TORCH_DTYPE[p.dtype])
    q = torch.randn(p.B, p.H, p.Nq, p.d, generator=g).to(dt)
    k = torch.randn(p.B, p.Hkv, p.Nkv, p.d, generator=g).to(dt)
    v = torch.randn(p.B, p.Hkv, p.Nkv, p.d, generator=g).to(dt)
    return q.to(device), k.to(device), v.to(device)


def sdpa_call(p: Problem, q, k, v, misalign: bool) -> Callable[[], Any]:
    """SDPA arguments for the mask: nothing when every key is visible, is_causal when Nq == Nkv
    (PyTorch's is_causal aligns top-left, equal to bottom-right only then), causal_lower_right
    (torch.nn.attention.bias: bottom-right causal, which the efficient kernel takes without a
    mask tensor) when Nq < Nkv, else a boolean mask."""
    import torch
    import torch.nn.functional as F
    m = p.m
    gqa = {"enable_gqa": True} if p.Hkv != p.H else {}
    all_visible = visible_pairs_per_head(p) == p.Nq * p.Nkv and not misalign
    if m.kind == "none" and not m.global_ or all_visible:
        return lambda: F.scaled_dot_product_attention(q, k, v, **gqa)
    if m.kind == "causal" and not m.global_ and (p.Nq == p.Nkv or misalign):
        return lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True, **gqa)
    if m.kind == "causal" and not m.global_ and p.Nq < p.Nkv:
        try:
            from torch.nn.attention.bias import causal_lower_right
        except ImportError:  # torch < 2.3: the boolean mask below
            pass
        else:
            bias = causal_lower_right(p.Nq, p.Nkv)
            return lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=bias, **gqa)
    mask = torch.from_numpy(visible_heads(p, misalign)).to(q.device)  # [1 or H, Nq, Nkv]: broadcast over B
    return lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=mask, **gqa)


def visible_heads(p: Problem, misalign: bool = False) -> np.ndarray:
    """Boolean [heads, Nq, Nkv] of the whole mask: heads H for a per-head layout, else 1."""
    rows = np.arange(p.Nq)
    per_head = p.m.kind == "sparse" and sparse_visibility(p).shape[0] > 1
    return np.stack([visible_matrix(p, rows, misalign, h) for h in range(p.H if per_head else 1)])


def flex_mask_mod(p: Problem, misalign: bool, device: str):
    """FlexAttention's mask_mod of p's mask (core/mask.hpp: queries aligned to the end of the
    keys), the heads argument of create_block_mask (H for a per-head layout, else None: every
    head alike) and whether every pair is visible (no block mask)."""
    import torch
    m = p.m
    shift = 0 if misalign else p.Nkv - p.Nq
    left, right, g = m.left, m.right, m.global_
    vis_t = torch.from_numpy(visible_heads(p, misalign)).to(device) if m.kind == "sparse" else None
    per_head = vis_t is not None and vis_t.shape[0] > 1

    def mask_mod(b, h, qi, kj):
        if vis_t is not None:
            return vis_t[h, qi, kj] if per_head else vis_t[0, qi, kj]
        if m.kind == "causal":
            vis = kj <= qi + shift
        elif m.kind == "local":
            vis = (kj >= qi + shift - left) & (kj <= qi + shift + right)
        else:
            vis = kj >= 0
        if g:
            vis = vis | (kj < g) | (qi < g)
        return vis
    return mask_mod, (p.H if per_head else None), m.kind == "none" and not g


SDPA_BACKEND = {"torch_sdpa_flash": "FLASH_ATTENTION", "torch_sdpa_efficient": "EFFICIENT_ATTENTION",
                "torch_sdpa_cudnn": "CUDNN_ATTENTION", "torch_sdpa_math": "MATH"}
BACKWARD_PEERS = ("torch_sdpa", *SDPA_BACKEND, "torch_flex")  # peers timed at bwd and fwd_bwd


class Peers:
    """Prepares one peer for one problem: a call returning O [B, H, Nq, d], or Unsupported."""

    def __init__(self, device: str, misalign: bool, flex_budget_s: float):
        self.device = device
        self.misalign = misalign
        self.flex_budget_s = flex_budget_s
        self.flex_spent_s = 0.0
        self.flex_compiled = 0
        self._flex = None

    def prepare(self, variant: str, p: Problem, q, k, v) -> tuple[Callable[[], Any], dict]:
        if variant == "torch_sdpa":
            return sdpa_call(p, q, k, v, self.misalign), {}
        if variant in SDPA_BACKEND:  # forced by backend_scope() around the validation and timing
            return sdpa_call(p, q, k, v, self.misalign), {}
        if variant == "torch_flex":
            return self._flex_call(p, q, k, v)
        if variant == "flash_attn":
            return self._flash_attn_call(p, q, k, v), {}
        if variant == "flashinfer":
            return self._flashinfer_call(p, q, k, v), {}
        raise ValueError(variant)

    @staticmethod
    def backend_scope(variant: str):
        """The SDPA backend forced for the variant (entered once, not per timed call)."""
        if variant not in SDPA_BACKEND:
            return contextlib.nullcontext()
        from torch.nn.attention import SDPBackend, sdpa_kernel
        return sdpa_kernel(getattr(SDPBackend, SDPA_BACKEND[variant]))

    def _flex_call(self, p: Problem, q, k, v):
        import torch
        try:
            from torch.nn.attention.flex_attention import create_block_mask, flex_attention
        except ImportError as e:
            raise Unsupported(f"no FlexAttention in torch {torch.__version__} ({e})") from None
        if self.flex_spent_s >= self.flex_budget_s:
            raise Unsupported(f"FlexAttention compile budget of {self.flex_budget_s:g} s spent "
                              f"({self.flex_compiled} problems compiled in {self.flex_spent_s:.0f} s; "
                              "raise --flex-budget-s)")
        if self._flex is None:
            import torch._dynamo
            cfg = torch._dynamo.config
            for knob in ("cache_size_limit", "recompile_limit"):  # each mask and shape recompiles
                if hasattr(cfg, knob):
                    setattr(cfg, knob, 4096)
            if hasattr(cfg, "fail_on_recompile_limit_hit"):  # never fall back to eager silently
                cfg.fail_on_recompile_limit_hit = True
            self._flex = torch.compile(flex_attention, dynamic=False)
        mask_mod, heads, full = flex_mask_mod(p, self.misalign, self.device)
        block_mask = None if full else create_block_mask(mask_mod, None, heads, p.Nq, p.Nkv, device=self.device)
        gqa = p.Hkv != p.H
        fn = self._flex
        t0 = time.perf_counter()
        try:
            fn(q, k, v, block_mask=block_mask, enable_gqa=gqa)
            sync(self.device)
        except Exception as e:  # an inductor build failure: skipped with its reason
            self.flex_spent_s += time.perf_counter() - t0
            raise Unsupported(f"torch.compile(flex_attention) failed: {type(e).__name__}: "
                              f"{one_line(str(e))}") from None
        compile_s = time.perf_counter() - t0
        self.flex_spent_s += compile_s
        self.flex_compiled += 1
        return (lambda: fn(q, k, v, block_mask=block_mask, enable_gqa=gqa)), {
            "compile_ms": compile_s * 1e3, "compile_note": "first call (compile + one run), excluded from timing"}

    def _flash_attn_call(self, p: Problem, q, k, v):
        try:
            import flash_attn
            from flash_attn import flash_attn_func
        except Exception as e:  # noqa: BLE001 - ImportError or a broken build
            raise Unsupported(f"flash_attn not importable ({type(e).__name__}: {one_line(str(e))})") from None
        if self.device != "cuda" or p.dtype not in ("fp16", "bf16"):
            raise Unsupported(f"flash_attn {flash_attn.__version__} runs fp16/bf16 on CUDA only")
        m = p.m
        if m.global_ or m.kind == "sparse":
            raise Unsupported("flash_attn has no global-token or block-sparse mask")
        # flash-attn >= 2.1 aligns causal and local windows bottom-right, like attnbench.
        win = (m.left, m.right) if m.kind == "local" else (-1, -1)
        qt, kt, vt = (t.transpose(1, 2).contiguous() for t in (q, k, v))
        causal = m.kind == "causal"
        return lambda: flash_attn_func(qt, kt, vt, causal=causal, window_size=win).transpose(1, 2)

    def _flashinfer_call(self, p: Problem, q, k, v):
        try:
            import flashinfer
        except Exception as e:  # noqa: BLE001
            raise Unsupported(f"flashinfer not importable ({type(e).__name__}: {one_line(str(e))})") from None
        if self.device != "cuda" or p.dtype not in ("fp16", "bf16"):
            raise Unsupported(f"flashinfer {getattr(flashinfer, '__version__', '?')} runs fp16/bf16 on CUDA only")
        m = p.m
        if m.global_ or m.kind == "sparse" or (m.kind == "local" and m.right):
            raise Unsupported("flashinfer single prefill has causal and a left window only (no global, no right window)")
        if p.B != 1:
            raise Unsupported("flashinfer single prefill takes B = 1 (batched prefill needs paged KV)")
        qt, kt, vt = (t[0].transpose(0, 1).contiguous() for t in (q, k, v))  # [N, heads, d]
        causal = m.kind in ("causal", "local")
        left = m.left if m.kind == "local" else -1
        return lambda: flashinfer.single_prefill_with_kv_cache(
            qt, kt, vt, causal=causal, window_left=left).transpose(0, 1).unsqueeze(0)


def one_line(s: str, limit: int = 300) -> str:
    s = " ".join(s.split())
    return s if len(s) <= limit else s[: limit - 3] + "..."


def sync(device: str) -> None:
    if device == "cuda":
        import torch
        torch.cuda.synchronize()


# ---- timing --------------------------------------------------------------------------------------

@dataclass
class Timing:
    rep_ms: list[float]
    cpu_ms: list[float]
    iterations: int


def last_level_cache(root: str = "/sys/devices/system/cpu") -> tuple[int, str]:
    """Bytes of the highest cache level of the CPUs this process may run on, distinct
    instances summed (harness/cache_eviction.hpp's rule), and where the number came from."""
    best: dict[int, dict[str, int]] = {}
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = list(range(os.cpu_count() or 1))
    for c in cpus:
        base = f"{root}/cpu{c}/cache"
        try:
            names = os.listdir(base)
        except OSError:
            continue
        for idx in names:
            try:
                rd = lambda f: open(f"{base}/{idx}/{f}").read().strip()  # noqa: E731
                if rd("type") == "Instruction":
                    continue
                size = rd("size")
                mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(size[-1], 1)
                nbytes = int(size.rstrip("KMG")) * mult
                best.setdefault(int(rd("level")), {})[rd("shared_cpu_list")] = nbytes
            except (OSError, ValueError, IndexError):
                continue
    if best:
        level = max(best)
        inst = best[level]
        return sum(inst.values()), f"sysfs: {len(inst)} x L{level}"
    return 128 << 20, "assumed 128 MiB"


class CpuEvictor:
    """Cold CPU timing as the harness's: before each timed run a buffer of twice the LLC is
    written (by PyTorch's threads), outside the clock."""

    def __init__(self):
        import torch
        llc, self.source = last_level_cache()
        self.nbytes = -(-2 * llc // (1 << 20)) * (1 << 20)
        self.buf = torch.empty(self.nbytes, dtype=torch.uint8)
        self.value = 1

    def evict(self) -> None:
        self.buf.fill_(self.value)
        self.value = self.value % 250 + 1


def time_cpu(fn: Callable[[], Any], reps: int, rep_time_s: float, first_run_s: float,
             evictor: Optional[CpuEvictor] = None) -> Timing:
    """harness/timing.cpp (CPU): a slow problem times one run per repetition (the validation
    run was its warm-up); else a pilot run (with its eviction when cold) sets the iterations
    of a repetition to rep_time. Cold: each run after its own eviction, only the run timed."""
    if first_run_s > 3 * rep_time_s:
        iters = 1
    else:
        t0 = time.perf_counter()
        if evictor:
            evictor.evict()
        fn()
        pilot = time.perf_counter() - t0
        iters = int(min(max(round(rep_time_s / max(pilot, 1e-7)), 1), 10000))
    rep_ms, cpu_ms = [], []
    for _ in range(reps):
        if evictor is None:
            t0, c0 = time.perf_counter(), time.process_time()
            for _ in range(iters):
                fn()
            rep_ms.append((time.perf_counter() - t0) * 1e3 / iters)
            cpu_ms.append((time.process_time() - c0) * 1e3 / iters)
            continue
        wall = cpu = 0.0
        for _ in range(iters):
            evictor.evict()
            t0, c0 = time.perf_counter(), time.process_time()
            fn()
            wall += time.perf_counter() - t0
            cpu += time.process_time() - c0
        rep_ms.append(wall * 1e3 / iters)
        cpu_ms.append(cpu * 1e3 / iters)
    return Timing(rep_ms, cpu_ms, iters)


class CudaTimer:
    """Cold timing as harness/timing.cpp: each launch after its own L2 flush, its own event pair."""

    def __init__(self):
        import torch
        l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 0) or (64 << 20)
        self.flush_buf = torch.empty(2 * l2 // 4, dtype=torch.float32, device="cuda")

    def sample(self, fn, n: int) -> list[float]:
        import torch
        evs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(n)]
        for a, b in evs:
            self.flush_buf.zero_()
            a.record()
            fn()
            b.record()
        torch.cuda.synchronize()
        return [a.elapsed_time(b) for a, b in evs]

    def time(self, fn, reps: int, rep_time_s: float) -> Timing:
        fn()
        fn()
        torch_sync()
        pilot = self.sample(fn, 1)[0] / 1e3
        iters = int(min(max(round(rep_time_s / max(pilot, 1e-6)), 3), 100))
        rep_ms, cpu_ms = [], []
        for _ in range(reps):
            c0 = time.process_time()
            s = self.sample(fn, iters)
            rep_ms.append(sum(s) / len(s))
            cpu_ms.append((time.process_time() - c0) * 1e3 / iters)
        return Timing(rep_ms, cpu_ms, iters)


def torch_sync() -> None:
    import torch
    torch.cuda.synchronize()


# ---- entries -------------------------------------------------------------------------------------

def base_entry(p: Problem, backend: str, variant: str, device: str, library: str) -> dict:
    name = (f"{variant}/{backend}/{p.dtype}/B:{p.B}/H:{p.H}/Hkv:{p.Hkv}/Nq:{p.Nq}/Nkv:{p.Nkv}/d:{p.d}"
            f"/mask:{p.mask}{'' if p.pass_ == 'fwd' else '/pass:' + p.pass_}/on:{device}")
    flops, bytes_min = p.flops, p.bytes_min
    e: dict[str, Any] = {
        "name": name, "run_name": name, "run_type": "aggregate", "aggregate_name": "median",
        "repetitions": 0, "iterations": 0, "real_time": 0.0, "cpu_time": 0.0, "time_unit": "ms",
        "label": f"{variant} {backend} {p.dtype} mask:{p.mask} group:{p.group} on:{device}",
        "variant": variant, "backend": backend, "dtype": p.dtype, "mask": p.mask, "group": p.group,
        "status": "ok", "B": p.B, "H": p.H, "Hkv": p.Hkv, "Nq": p.Nq, "Nkv": p.Nkv, "d": p.d,
        # A library's tiles are its own business: 0 = not attnbench's Br x Bc.
        "Br": 0, "Bc": 0,
        "flops": flops, "flops_executed": None, "bytes": bytes_min, "bytes_min": bytes_min,
        "bytes_counted": None, "bytes_model": "minimal_io",
        "intensity": flops / bytes_min if flops and bytes_min else None,
        "time_ms": None, "time_ms_min": None, "time_ms_max": None, "time_cv": None,
        "tflops": None, "gbps": None, "batch": 1,
        "rel_err": None, "max_abs_err": None, "lse_err": None, "checked_rows": 0,
        "tolerance": p.tolerance, "err_ok": None,
        "peer": True, "peer_device": device, "library": library, "pass": p.pass_,
    }
    if p.pass_ != "fwd":
        e.update(dq_err=None, dk_err=None, dv_err=None, grad_err=None, grad_tolerance=p.grad_tolerance,
                 grad_nonfinite=None, grad_checked_rows=0)
    return e


def not_run(e: dict, status: str, why: str) -> dict:
    e.update(status=status, error_occurred=True, error_message=why)
    return e


def timed(e: dict, t: Timing, val: dict) -> dict:
    med = statistics.median(t.rep_ms)
    mean = statistics.fmean(t.rep_ms)
    cv = statistics.pstdev(t.rep_ms) / mean if len(t.rep_ms) > 1 and mean > 0 else 0.0
    e.update(val)
    e.update(repetitions=len(t.rep_ms), iterations=t.iterations, real_time=med,
             cpu_time=statistics.median(t.cpu_ms), time_ms=med, time_ms_min=min(t.rep_ms),
             time_ms_max=max(t.rep_ms), time_cv=cv,
             tflops=e["flops"] / (med * 1e-3) / 1e12 if med > 0 and e["flops"] else None,
             gbps=e["bytes"] / (med * 1e-3) / 1e9 if med > 0 and e["bytes"] else None)
    return e


def library_versions() -> dict[str, Optional[str]]:
    out: dict[str, Optional[str]] = {}
    for mod in ("torch", "flash_attn", "flashinfer"):
        try:
            out[mod] = __import__(mod).__version__
        except Exception:  # noqa: BLE001 - absent or broken: recorded as null
            out[mod] = None
    import importlib.metadata
    for dist in [d for d, _ in APPROX_PEERS.values()] + ["mamba-ssm", "flash-linear-attention"]:
        try:
            out[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            out[dist] = None
    return out


def run_one(peers: Peers, backend: str, variant: str, p: Problem, inputs, ref_cache: dict,
            args: argparse.Namespace, library: str, timer: Optional[CudaTimer],
            evictor: Optional[CpuEvictor] = None) -> dict:
    e = base_entry(p, backend, variant, peers.device, library)
    if isinstance(inputs, Unsupported):
        return not_run(e, "skipped", str(inputs))
    if p.pass_ != "fwd":
        if variant not in BACKWARD_PEERS:
            return not_run(e, "skipped", f"{variant} has no backward here: peers.py times the backward of "
                                         f"{', '.join(BACKWARD_PEERS)}")
        with peers.backend_scope(variant):  # the forward picks the backward's kernel; fwd_bwd times both
            return _run_backward(peers, variant, p, inputs, ref_cache, args, timer, evictor, e)
    if variant in APPROX_PEERS:
        return _run_approx(peers, variant, p, inputs, args, evictor, e)
    with peers.backend_scope(variant):
        return _run_one(peers, variant, p, inputs, ref_cache, args, timer, evictor, e)


def _heads(p: Problem, k, v):
    """K and V with a head per query head (the PyPI approximations take no GQA)."""
    g = p.H // p.Hkv
    return (k, v) if g == 1 else (k.repeat_interleave(g, dim=1), v.repeat_interleave(g, dim=1))


def approx_call(variant: str, p: Problem, q, k, v) -> Callable[[], Any]:
    """The PyPI approximation's call returning O [B, H, Nq, d]; Unsupported when it cannot run p."""
    import torch
    causal = p.m.kind == "causal" and not p.m.global_
    if p.m.kind in ("local", "sparse") or p.m.global_:
        raise Unsupported(f"{variant} has masks none and causal only, not '{p.mask}'")
    torch.manual_seed(SEED_APPROX)  # their own random features, projections, centroids: fixed per run
    k, v = _heads(p, k, v)
    if variant == "pypi_performer":
        from performer_pytorch import FastAttention
        if causal and p.Nq != p.Nkv:
            raise Unsupported("performer-pytorch's causal prefix sums take Nq == Nkv only")
        att = FastAttention(dim_heads=p.d, nb_features=256, causal=causal).eval()
        return lambda: _no_grad(att, q, k, v)
    if variant == "pypi_linformer":
        from linformer import LinformerSelfAttention
        if causal:
            raise Unsupported("Linformer mixes every key position (E^T K): no causal mask")
        width = p.H * p.d
        att = LinformerSelfAttention(dim=width, seq_len=p.Nkv, k=min(256, p.Nkv), heads=p.H, dim_head=p.d).eval()
        att.to_q, att.to_out = torch.nn.Identity(), torch.nn.Identity()
        att.to_k, att.to_v = _Columns(0, width), _Columns(width, 2 * width)
        x = q.transpose(1, 2).reshape(p.B, p.Nq, width)
        ctx = torch.cat((k, v), dim=3).transpose(1, 2).reshape(p.B, p.Nkv, 2 * width)
        return lambda: _no_grad(att, x, context=ctx).reshape(p.B, p.Nq, p.H, p.d).transpose(1, 2)
    if variant == "pypi_routing":
        from routing_transformer.routing_transformer import KmeansAttention
        if causal and p.Nq != p.Nkv:
            raise Unsupported("routing-transformer's causal mask compares positions top-left aligned: Nq == Nkv only")
        c = max(1, round(math.sqrt(p.Nkv)))
        att = KmeansAttention(c, -(-p.Nq // c), p.H, p.d, causal=causal, receives_context=True,
                              context_window_size=-(-p.Nkv // c)).eval()
        _no_grad(att, q, k, v)  # its k-means initialisation from this call's Q and K, untimed
        return lambda: _no_grad(att, q, k, v)[0]
    raise ValueError(variant)


def _no_grad(module, *a, **kw):
    import torch
    with torch.inference_mode():
        return module(*a, **kw)


def _columns_module():
    import torch

    class Columns(torch.nn.Module):
        """x[..., lo:hi]: linformer's to_k / to_v reading K or V from the packed context."""

        def __init__(self, lo: int, hi: int):
            super().__init__()
            self.lo, self.hi = lo, hi

        def forward(self, x):
            return x[..., self.lo:self.hi]

    return Columns


def _Columns(lo: int, hi: int):
    return _columns_module()(lo, hi)


def _run_approx(peers: Peers, variant: str, p: Problem, inputs, args: argparse.Namespace,
                evictor: Optional[CpuEvictor], e: dict) -> dict:
    """A PyPI approximation: the attnbench row's model, the distance to exact attention, no check."""
    dist, row = APPROX_PEERS[variant]
    model = args.row_models.get((p.key, row))
    e.update(approx_err_vs_exact=None, approx_check=f"none: {dist} draws its own random parameters; "
             "approx_err_vs_exact is its distance to exact fp64 softmax attention")
    if peers.device != "cpu":
        return not_run(e, "skipped", f"{variant} runs on the CPU here (the comparison rows are CPU only)")
    if model is None:  # main() makes no entry for such a problem; a direct call says why
        return not_run(e, "skipped", f"the sweep ran no attnbench '{row}' on this problem: {variant} takes its "
                                     "problems and model")
    if p.dtype != "fp32":
        return not_run(e, "skipped", f"{variant} runs fp32 only, as attnbench's '{row}'")
    e.update(flops=model["flops"], flops_executed=model["flops_executed"], bytes=model["bytes"],
             bytes_model=f"attnbench:{row}", intensity=model["flops"] / model["bytes"] if model["bytes"] else None)
    q, k, v = inputs
    try:
        fn = approx_call(variant, p, q, k, v)
        t0 = time.perf_counter()
        o = fn()
        first_s = time.perf_counter() - t0
    except Unsupported as u:
        return not_run(e, "skipped", str(u))
    except ImportError as x:
        return not_run(e, "skipped", f"{dist} not importable ({type(x).__name__}: {one_line(str(x))}; "
                                     "scripts/requirements.txt installs it)")
    except Exception as x:  # noqa: BLE001 - a library's API or build problem: this entry fails, not the run
        return not_run(e, "failed", f"{type(x).__name__}: {one_line(str(x))}")
    if tuple(o.shape) != (p.B, p.H, p.Nq, p.d):
        return not_run(e, "failed", f"output shape {tuple(o.shape)}, expected {(p.B, p.H, p.Nq, p.d)}")
    rows = sample_rows(p, validation_rows(p))
    val = compare(p, o, rows, reference_rows(p, q, k, v, rows))
    if val["rel_err"] is None:  # NaN never passes
        return not_run(e, "failed", "non-finite outputs")
    e["approx_err_vs_exact"] = val["rel_err"]
    e["checked_rows"] = val["checked_rows"]
    try:
        t = time_cpu(fn, args.reps, args.rep_time, first_s, evictor)
    except Exception as x:  # noqa: BLE001
        return not_run(e, "failed", f"while timing: {type(x).__name__}: {one_line(str(x))}")
    return timed(e, t, {})


def reference_grads(p: Problem, q, k, v, d_o):
    """fp64 dQ, dK, dV by autograd of the masked softmax, one (batch, head) at a time (memory:
    one [Nq, Nkv] score matrix); dK, dV summed over each KV head's group; rows without a visible
    key give zeros (kernels/reference/backward_reference.cpp). On the inputs' GPU when they have
    one: at 20cfac8 (H200 box, 16 cores) the first backward problem (B 4, H 16, N 2k, d 128)
    took 10 s of the peers' 18 s, most of it this reference on the CPU."""
    import torch
    dev = q.device if q.is_cuda else torch.device("cpu")
    q64, k64, v64, do64 = (t.detach().to(dev, torch.float64) for t in (q, k, v, d_o))
    dq, dk, dv = torch.zeros_like(q64), torch.zeros_like(k64), torch.zeros_like(v64)
    rows = np.arange(p.Nq)
    vis_heads = [torch.from_numpy(visible_matrix(p, rows, head=h)).to(dev)
                 for h in range(p.H if p.m.kind == "sparse" and sparse_visibility(p).shape[0] > 1 else 1)]
    group, scale = p.H // p.Hkv, 1.0 / math.sqrt(p.d)
    for b in range(p.B):
        for h in range(p.H):
            qh, kh, vh = (x.clone().requires_grad_() for x in (q64[b, h], k64[b, h // group], v64[b, h // group]))
            vis = vis_heads[h if len(vis_heads) > 1 else 0]
            s = (qh @ kh.T * scale).masked_fill(~vis, -math.inf)
            mx = s.max(dim=1, keepdim=True).values.detach()
            w = torch.exp(s - torch.where(torch.isfinite(mx), mx, torch.zeros_like(mx)))
            l = w.sum(dim=1, keepdim=True)
            o = (w @ vh) / torch.where(l > 0, l, torch.ones_like(l))
            g = torch.autograd.grad(o, (qh, kh, vh), do64[b, h])
            dq[b, h] += g[0]
            dk[b, h // group] += g[1]
            dv[b, h // group] += g[2]
    return dq, dk, dv


def compare_grads(p: Problem, got, want) -> dict:
    """Relative L2 of each gradient over every element; NaN never passes (harness/validation.cpp)."""
    import torch
    errs, bad = [], 0
    for g, w in zip(got, want):
        g64 = g.detach().to(w.device, torch.float64)
        finite = torch.isfinite(g64)
        bad += int((~finite).sum())
        num = float(((torch.where(finite, g64, torch.zeros_like(g64)) - w) ** 2).sum())
        den = float((w ** 2).sum())
        errs.append(None if not bool(finite.all()) else (math.sqrt(num / den) if den > 0 else math.sqrt(num)))
    tol = p.grad_tolerance
    if tol is None:
        raise Unsupported("the sweep's entries of this problem carry no grad_tolerance")
    worst = None if bad else max(errs)
    return {"dq_err": errs[0], "dk_err": errs[1], "dv_err": errs[2], "grad_err": worst, "grad_tolerance": tol,
            "grad_nonfinite": bad, "grad_checked_rows": p.B * (p.H * p.Nq + p.Hkv * p.Nkv),
            "err_ok": bad == 0 and worst is not None and worst <= tol}


def _run_backward(peers: Peers, variant: str, p: Problem, inputs, ref_cache: dict, args: argparse.Namespace,
                  timer: Optional[CudaTimer], evictor: Optional[CpuEvictor], e: dict) -> dict:
    """SDPA's (default dispatch or the backend in scope) or FlexAttention's backward: bwd times
    autograd.grad from one untimed forward, fwd_bwd both. FlexAttention's forward and backward
    are compiled by the first, untimed call (compile_ms: both compiles and one run)."""
    import torch
    q, k, v = (x.detach().requires_grad_() for x in inputs)
    g = torch.Generator().manual_seed(SEED_INPUTS + 3)  # dO: tensor 3, as make_grad_output
    d_o = torch.randn(p.B, p.H, p.Nq, p.d, generator=g).to(q.dtype).to(q.device)
    t_compile = time.perf_counter()
    if variant == "torch_flex":
        if peers.device == "cpu":  # torch raises NotImplementedError for requires_grad inputs on the CPU
            return not_run(e, "skipped", f"FlexAttention has no backward on the CPU (torch {torch.__version__}): "
                                         "a GPU run times it")
        try:
            forward, extra = peers.prepare(variant, p, q, k, v)
        except Unsupported as u:
            return not_run(e, "skipped", str(u))
    else:
        forward, extra = sdpa_call(p, q, k, v, peers.misalign), {}
    with warnings.catch_warnings(record=True) as caught:  # a forced backend's reason to refuse
        warnings.simplefilter("always")
        try:
            if p.pass_ == "bwd":
                o = forward()  # untimed; its graph serves every timed backward
                fn = lambda: torch.autograd.grad(o, (q, k, v), d_o, retain_graph=True)  # noqa: E731
            else:
                fn = lambda: torch.autograd.grad(forward(), (q, k, v), d_o)  # noqa: E731
            t0 = time.perf_counter()
            grads = fn()
            sync(peers.device)
            first_s = time.perf_counter() - t0
        except (RuntimeError, NotImplementedError) as x:
            msg = one_line(str(x))
            why = "; ".join(dict.fromkeys(one_line(str(w.message), 160) for w in caught))
            if "No viable backend" in msg or "No available kernel" in msg or isinstance(x, NotImplementedError):
                return not_run(e, "skipped", f"torch on {peers.device}: {msg}" + (f" ({why})" if why else ""))
            return not_run(e, "failed", f"{type(x).__name__}: {msg}")
    if extra:
        e.update(compile_ms=(time.perf_counter() - t_compile) * 1e3,
                 compile_note="first forward and backward (compiles + one run), excluded from timing")
    # One fp64 reference per problem for every peer and both passes (same inputs and dO): on the
    # CPU it costs more than a peer's timing.
    key = ("grads",) + p.key[:-1]
    if key not in ref_cache:
        ref_cache.clear()
        try:
            ref_cache[key] = reference_grads(p, q, k, v, d_o)
        except RuntimeError as x:  # e.g. out of memory for an fp64 score matrix: this entry, not the run
            ref_cache.clear()
            if peers.device == "cuda":
                torch.cuda.empty_cache()
            return not_run(e, "failed", f"the fp64 gradient reference: {type(x).__name__}: {one_line(str(x))}")
    val = compare_grads(p, grads, ref_cache[key])
    del grads
    try:
        t = (timer.time(fn, args.reps, args.rep_time) if timer
             else time_cpu(fn, args.reps, args.rep_time, first_s, evictor))
    except Exception as x:  # noqa: BLE001
        return not_run(e, "failed", f"while timing: {type(x).__name__}: {one_line(str(x))}")
    return timed(e, t, val)


def _run_one(peers: Peers, variant: str, p: Problem, inputs, ref_cache: dict, args: argparse.Namespace,
             timer: Optional[CudaTimer], evictor: Optional[CpuEvictor], e: dict) -> dict:
    q, k, v = inputs
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fn, extra = peers.prepare(variant, p, q, k, v)
            e.update(extra)
            t0 = time.perf_counter()
            o = fn()
            sync(peers.device)
            first_s = time.perf_counter() - t0
        except Unsupported as u:
            return not_run(e, "skipped", str(u))
        except RuntimeError as x:
            msg = one_line(str(x))
            why = "; ".join(dict.fromkeys(one_line(str(w.message), 160) for w in caught))
            if "No viable backend" in msg or "No available kernel" in msg:
                return not_run(e, "skipped", f"torch on {peers.device}: {msg}" + (f" ({why})" if why else ""))
            return not_run(e, "failed", f"{type(x).__name__}: {msg}")
        except Exception as x:  # noqa: BLE001 - a library's API or build problem: this entry fails, not the run
            return not_run(e, "failed", f"{type(x).__name__}: {one_line(str(x))}")
    if tuple(o.shape) != (p.B, p.H, p.Nq, p.d):
        return not_run(e, "failed", f"output shape {tuple(o.shape)}, expected {(p.B, p.H, p.Nq, p.d)}")
    if p.key not in ref_cache:
        rows = sample_rows(p, validation_rows(p))
        ref_cache.clear()
        ref_cache[p.key] = (rows, reference_rows(p, q, k, v, rows))
    rows, ref = ref_cache[p.key]
    val = compare(p, o, rows, ref)
    del o
    try:
        t = (timer.time(fn, args.reps, args.rep_time) if timer
             else time_cpu(fn, args.reps, args.rep_time, first_s, evictor))
    except Exception as x:  # noqa: BLE001
        return not_run(e, "failed", f"while timing: {type(x).__name__}: {one_line(str(x))}")
    return timed(e, t, val)


def scan_peer_entries(args: argparse.Namespace, device: str, library: dict, timer: Optional[CudaTimer],
                      evictor: Optional[CpuEvictor], t_start: float) -> list[dict]:
    """The scan rows' peers (scripts/peers_scans.py) on every scan problem the sweep ran."""
    wanted = [v for v in peers_scans.SCAN_PEERS if v in args.wanted]
    if not wanted:
        return []
    _, sweep_entries = read_sweep(args.problems)
    backend_of = dict((v, b) for b, v in VARIANTS)

    def time_fn(fn: Callable[[], Any]) -> Timing:
        if timer:
            return timer.time(fn, args.reps, args.rep_time)
        t0 = time.perf_counter()
        fn()
        return time_cpu(fn, args.reps, args.rep_time, time.perf_counter() - t0, evictor)

    out = []
    for sp in peers_scans.scan_problems(sweep_entries):
        for variant in wanted:
            if peers_scans.SCAN_PEERS[variant][1] != sp.row:
                continue
            p = Problem(group=sp.group, dtype=sp.dtype, B=sp.B, H=sp.H, Hkv=sp.H, Nq=sp.L, Nkv=sp.L, d=sp.d,
                        mask="causal", tolerance=sp.tolerance)
            e = base_entry(p, backend_of[variant], variant, device, library[backend_of[variant]])
            if sp.state_axes:
                e["name"] = e["run_name"] = e["name"].replace("/on:", f"/N:{sp.N}/G:{sp.G}/on:")
            if args.budget_s and time.perf_counter() - t_start > args.budget_s:
                e = not_run(e, "skipped", f"peers' time budget of {args.budget_s:g} s spent before this problem")
            else:
                e = peers_scans.run_scan_peer(variant, sp, device, e, time_fn, timed, not_run)
            shown = (f"{e['time_ms']:.4g} ms err {e['rel_err']:.1e}{'' if e['err_ok'] else ' ABOVE TOLERANCE'}"
                     if e["status"] == "ok" else f"{e['status']}: {e.get('error_message')}")
            print(f"{PROG}: {e['name']} {shown}", file=sys.stderr)
            out.append(e)
    return out


def git(*a: str) -> str:
    try:
        return subprocess.run(["git", *a], capture_output=True, text=True, check=True,
                              cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def context_of(sweep_ctx: dict, device: str, args: argparse.Namespace, versions: dict, threads: int,
               timer: Optional[CudaTimer], evictor: Optional[CpuEvictor]) -> dict:
    import torch
    if device == "cuda":
        dev_name = torch.cuda.get_device_name(0) if timer else "no CUDA device"
    else:
        dev_name = sweep_ctx.get("device") or platform.processor()
    ctx = {
        "backend": device, "device": str(dev_name), "peers": True,
        "libraries": versions, "problems_from": args.problems,
        "sweep_git_commit": sweep_ctx.get("git_commit"), "preset": sweep_ctx.get("preset"),
        "git_commit": git("rev-parse", "HEAD"), "git_dirty": bool(git("status", "--porcelain", "--untracked-files=no")),
        "date": datetime.datetime.now(datetime.timezone.utc).astimezone().isoformat(timespec="seconds"),
        "host": socket.gethostname(), "host_name": socket.gethostname(),
        "command_line": " ".join([os.path.relpath(sys.argv[0])] + sys.argv[1:]),
        "threads": threads, "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"),
        "timing": {"aggregate": "median", "repetitions": args.reps, "rep_time_s": args.rep_time,
                   "clock": "cuda_events" if timer else "perf_counter (steady)",
                   "l2_flush": (f"before every launch ({timer.flush_buf.numel() * 4} B written)" if timer else
                                f"LLC eviction before every run ({evictor.nbytes} B written; {evictor.source})"
                                if evictor else "none")},
        "bytes_model": "minimal_io: Q, K, V read once, O written once (the sweep's bytes_min)",
        "flops_model": "4 d per visible (query, key) pair x B x H (the sweep's flops)",
    }
    return {k: v for k, v in ctx.items() if v is not None}  # merge wants strings where it reads them


def parse_args(argv: Optional[list[str]]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    ap.add_argument("--problems", required=True, metavar="RESULTS",
                    help="attnbench JSON or .log.jsonl whose problems the peers run")
    ap.add_argument("--out", required=True, metavar="FILE", help="peers' results JSON (attnbench's schema)")
    ap.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                    help="auto: the sweep's backend (default)")
    ap.add_argument("--variants", default="",
                    help="comma-separated subset of " + ",".join(v for _, v in VARIANTS) + " (default all)")
    ap.add_argument("--reps", type=int, default=None, help="repetitions (default as attnbench: cpu 3, cuda 5)")
    ap.add_argument("--rep-time", type=float, default=None,
                    help="target seconds of one repetition (default as attnbench: cpu 0.03, cuda 0.02)")
    ap.add_argument("--threads", type=int, default=None,
                    help="CPU threads (default: the sweep's context.device_info.threads, else all)")
    ap.add_argument("--flex-budget-s", type=float, default=None,
                    help="seconds of FlexAttention compiles; later problems are skipped saying so "
                         "(default cpu 420, cuda 120)")
    ap.add_argument("--flex-problems", choices=("auto", "all", "per-mask"), default="auto",
                    help="FlexAttention on every problem, or per-mask: one problem per mask kind and "
                         "decode/prefill (the one with the most FLOPs), the others skipped saying which ran; "
                         "auto (default): per-mask for the quick preset on the CPU, where each compile "
                         "takes 12-18 s, else all")
    ap.add_argument("--budget-s", type=float, default=0,
                    help="overall seconds; problems left when it is spent are skipped saying so (0: none)")
    ap.add_argument("--cpu-cache", choices=("auto", "cold", "warm"), default="auto",
                    help="CPU timing: cold evicts the LLC before every run; auto (default) does what the sweep "
                         "did (cold when its context.timing.l2_flush is not none)")
    ap.add_argument("--attnbench", default=None, metavar="BIN",
                    help="the attnbench binary whose `attnbench mask` gives masks with sparse terms (strided, "
                         "random, layout); default: the one that wrote --problems (its context's command), "
                         "else build/bin/attnbench")
    ap.add_argument("--misalign-masks", action="store_true", help=argparse.SUPPRESS)  # negative control
    args = ap.parse_args(argv)
    wanted = [v for v in args.variants.split(",") if v]
    known = [v for _, v in VARIANTS]
    for v in wanted:
        if v not in known:
            ap.error(f"unknown variant '{v}' (expected one of {', '.join(known)})")
    args.wanted = wanted or known
    for k in ("reps", "threads"):
        if getattr(args, k) is not None and getattr(args, k) < 1:
            ap.error(f"--{k} must be at least 1, got {getattr(args, k)}")
    for k in ("rep_time", "flex_budget_s"):
        if getattr(args, k) is not None and not getattr(args, k) > 0:
            ap.error(f"--{k.replace('_', '-')} must be positive, got {getattr(args, k)}")
    return args


def check_writable(path: str) -> None:
    """Before minutes of runs: --out's folder is created and takes a file (attnbench's exit 2)."""
    probe = f"{path}.probe{os.getpid()}"
    try:
        if os.path.isdir(path):
            raise InputFault(f"cannot write --out '{path}': it is a directory")
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(probe, "w", encoding="utf-8"):
            pass
        os.unlink(probe)
    except OSError as e:
        raise InputFault(f"cannot write --out '{path}': {e.strerror or e}") from None


def attnbench_binary(given: Optional[str], sweep_ctx: dict) -> Optional[str]:
    """--attnbench, else the binary of the sweep's command (context.command), else the
    checkout's build/bin/attnbench; None when none is executable."""
    command = sweep_ctx.get("command")
    first = command.split()[0] if isinstance(command, str) and command.split() else None
    here = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "build", "bin", "attnbench")
    for path in ([given] if given else [first, here]):
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def main(argv: Optional[list[str]] = None) -> int:
    args = parse_args(argv)
    try:
        check_writable(args.out)
        sweep_ctx, problems = problems_of(args.problems)
    except InputFault as f:
        print(f"{PROG}: error: {f}", file=sys.stderr)
        return 2
    ATTNBENCH_BIN[:] = [b for b in [attnbench_binary(args.attnbench, sweep_ctx)] if b]
    device = args.device
    if device == "auto":
        device = "cuda" if sweep_ctx.get("backend") == "cuda" else "cpu"
    if device == "cpu":
        # Spinning OpenMP threads of PyTorch's runtime and of inductor's kernels (two libgomps)
        # took turns on 2 cores: a 0.1 ms FlexAttention call took 16 ms, SDPA at N=256 8 ms
        # instead of 2 ms. Passive waiting (read when the runtime loads: before importing torch).
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import torch
    cuda_missing = device == "cuda" and not torch.cuda.is_available()
    args.reps = args.reps or (5 if device == "cuda" else 3)
    args.rep_time = args.rep_time or (0.02 if device == "cuda" else 0.03)
    # cpu: 6-16 s of inductor per problem here, the quick preset's 31 problems took ~330 s
    flex_budget = args.flex_budget_s or (120.0 if device == "cuda" else 420.0)
    info = sweep_ctx.get("device_info") if isinstance(sweep_ctx.get("device_info"), dict) else {}
    threads = args.threads or int(info.get("threads") or os.cpu_count() or 1)
    torch.set_num_threads(threads)
    versions = library_versions()
    library = {"torch": f"torch {versions['torch']}", "flash_attn": f"flash_attn {versions['flash_attn']}",
               "flashinfer": f"flashinfer {versions['flashinfer']}",
               **{dist.replace("-", "_"): f"{dist} {versions[dist]}" for dist, _ in APPROX_PEERS.values()},
               "mamba_ssm": f"mamba-ssm {versions['mamba-ssm']}",
               "fla": f"flash-linear-attention {versions['flash-linear-attention']}"}
    args.row_models = row_models(args.problems)
    timer = CudaTimer() if device == "cuda" and not cuda_missing else None
    sweep_flush = (sweep_ctx.get("timing") or {}).get("l2_flush") if isinstance(sweep_ctx.get("timing"), dict) else None
    cold = args.cpu_cache == "cold" or (args.cpu_cache == "auto" and sweep_flush not in (None, "none"))
    evictor = CpuEvictor() if device == "cpu" and cold else None
    flex_problems = args.flex_problems
    if flex_problems == "auto":
        flex_problems = "per-mask" if device == "cpu" and sweep_ctx.get("preset") == "quick" else "all"
    flex_reps = flex_representatives(problems) if flex_problems == "per-mask" else None
    peers = Peers(device, args.misalign_masks, flex_budget)
    entries = []
    t_start = time.perf_counter()
    ref_cache: dict = {}
    # FlexAttention last: its compiled CPU kernels leave OpenMP threads spinning, which slowed
    # the SDPA runs after them here by 20x (0.33 ms -> 7.5 ms on a 32x128 problem).
    attention = [bv for bv in VARIANTS if bv[1] not in peers_scans.SCAN_PEERS]
    phases = [[bv for bv in attention if bv[1] != "torch_flex"], [bv for bv in attention if bv[1] == "torch_flex"]]
    for phase in phases:
        phase = [bv for bv in phase if bv[1] in args.wanted]
        flex_phase = any(bv[1] == "torch_flex" for bv in phase)
        t_phase = time.perf_counter()
        for n, p in enumerate(problems if phase else []):
            over = args.budget_s and time.perf_counter() - t_start > args.budget_s
            rep = flex_reps.get(flex_class(p)) if flex_phase and flex_reps is not None and not p.mask_error else None
            if flex_phase and rep is not None and rep != p:
                inputs = Unsupported(f"--flex-problems per-mask (the quick preset's CPU default: each compile "
                                     f"takes 12-18 s) runs one problem per class '{flex_class(p)}': "
                                     f"{rep.dtype} B{rep.B} H{rep.H} Hkv{rep.Hkv} Nq{rep.Nq} Nkv{rep.Nkv} d{rep.d} "
                                     f"{rep.mask}; --flex-problems all runs this one")
            elif cuda_missing:
                inputs: Any = Unsupported("torch sees no CUDA device (torch.cuda.is_available() is false)")
            elif over:
                inputs = Unsupported(f"peers' time budget of {args.budget_s:g} s spent before this problem")
            elif p.mask_error:
                inputs = Unsupported(f"peers.py builds none, causal, local and global masks: {p.mask_error}")
            else:
                try:
                    if p.m.kind == "sparse":
                        sparse_visibility(p)  # the binary, or why not: before the inputs
                    inputs = make_inputs(p, device)
                except Unsupported as u:
                    inputs = u
            for backend, variant in phase:
                if variant in APPROX_PEERS and (p.key, APPROX_PEERS[variant][1]) not in args.row_models:
                    continue  # beside the comparison rows only: no entry where the sweep ran no such row
                e = run_one(peers, backend, variant, p, inputs, ref_cache, args, library[backend], timer, evictor)
                entries.append(e)
                err = e["rel_err"] if e.get("pass", "fwd") == "fwd" else e.get("grad_err")
                if e["status"] == "ok" and e.get("approx_err_vs_exact") is not None:
                    print(f"{PROG}: [{n + 1}/{len(problems)}] {e['name']} {e['time_ms']:.4g} ms "
                          f"{e['tflops']:.3g} TFLOP/s distance to exact {e['approx_err_vs_exact']:.2g} "
                          "(no check of the same approximation)", file=sys.stderr)
                    continue
                shown = (f"{e['time_ms']:.4g} ms {e['tflops']:.3g} TFLOP/s err {err:.1e}"
                         f"{'' if e['err_ok'] else ' ABOVE TOLERANCE'}"
                         if e["status"] == "ok" and err is not None
                         else f"{e['status']}: {e.get('error_message', 'NaN/inf in O')}")
                print(f"{PROG}: [{n + 1}/{len(problems)}] {e['name']} {shown}", file=sys.stderr)
            now = time.perf_counter()
            if flex_phase:  # compiles dominate: the problems still to compile at the mean compile time
                left = sum(1 for r in problems[n + 1:]
                           if not r.mask_error and (flex_reps is None or flex_reps.get(flex_class(r)) == r))
                eta = left * peers.flex_spent_s / peers.flex_compiled if peers.flex_compiled else float("nan")
            else:
                eta = (now - t_phase) / (n + 1) * (len(problems) - n - 1)
            print(f"{PROG}: [{n + 1}/{len(problems)}] {'FlexAttention' if flex_phase else 'SDPA and others'}: "
                  f"elapsed {fmt_duration(now - t_start)}, ETA of this phase "
                  f"{'?' if eta != eta else fmt_duration(eta)}", file=sys.stderr)
            inputs = None
            if device == "cuda" and not cuda_missing:
                torch.cuda.empty_cache()
    entries += scan_peer_entries(args, device, library, timer, evictor, t_start)
    doc = {"context": context_of(sweep_ctx, device, args, versions, threads, timer, evictor), "benchmarks": entries}
    tmp = args.out + ".tmp"
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2, allow_nan=False)
        f.write("\n")
    os.replace(tmp, args.out)
    counts = {s: sum(1 for e in entries if e["status"] == s) for s in ("ok", "skipped", "failed")}
    bad = sum(1 for e in entries if e["status"] == "ok" and e["err_ok"] is False)
    print(f"{PROG}: {len(problems)} problems, {counts['ok']} ok ({bad} above tolerance), {counts['skipped']} skipped, "
          f"{counts['failed']} failed in {time.perf_counter() - t_start:.0f} s -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The scan rows' library peers (docs/alternatives.md), for scripts/peers.py.

Beside attnbench's scan rows, the kernels a user would call instead:
  - mamba_ssm_selective_scan: mamba_ssm's selective_scan_fn (its CUDA kernel) beside `selective_scan`;
  - mamba_ssm_ssd: mamba_ssm's mamba_chunk_scan_combined (Triton) beside `ssd`, at the row's chunk;
  - fla_rwkv6: flash-linear-attention's chunk_rwkv6 (Triton) beside `wkv6`, scale 1 (RWKV's).
RWKV-4's `wkv` has none: no PyPI package exports its kernel as a callable (RWKV-LM compiles
wkv_cuda.cu in its training script). Each runs on every (shape, N, G) the sweep ran its row on,
nowhere else. Their kernels are CUDA (or Triton on CUDA): on the CPU each such problem is one
skipped entry saying so. Inputs are drawn here (seeded, in the row's distributions:
docs/alternatives.md); the check is the library's output against an fp64 recurrence of the same
inputs, computed here over sampled channels (selective scan) or heads (SSD, RWKV-6): relative L2,
held to the tolerance of the sweep's entry; NaN never passes. FLOPs, bytes and exps are the
row's model, read from the sweep's entry (bytes_model "attnbench:<row>").
"""
from __future__ import annotations

import inspect
import math
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

# peer -> (module it imports, the attnbench row whose problems and model it takes)
SCAN_PEERS = {"mamba_ssm_selective_scan": ("mamba_ssm", "selective_scan"),
              "mamba_ssm_ssd": ("mamba_ssm", "ssd"),
              "fla_rwkv6": ("fla", "wkv6")}
NEEDS_CUDA = True  # the libraries' kernels; tests/python/test_peers_scans.py runs fakes on the CPU
SEED_SCAN = 25
CHECKED_UNITS = 8  # channels (selective scan) or heads (SSD, RWKV-6) in the fp64 check


@dataclass(frozen=True)
class ScanProblem:
    row: str
    dtype: str
    B: int
    H: int
    L: int
    d: int
    N: int
    G: int
    chunk: int
    group: str
    model: dict
    tolerance: Optional[float]
    state_axes: bool  # the row reads the N and G axes (wkv6's state is d x d: it does not)


def scan_problems(entries: list[dict]) -> list[ScanProblem]:
    """The distinct (row, dtype, B, H, L, d, N, G) the sweep ran a scan row with a peer on."""
    rows = {row for _, row in SCAN_PEERS.values()}
    out: dict[tuple, ScanProblem] = {}
    for e in entries:
        if not isinstance(e, dict) or e.get("peer") or e.get("variant") not in rows or e.get("status") != "ok":
            continue
        try:
            p = ScanProblem(row=e["variant"], dtype=str(e["dtype"]), B=int(e["B"]), H=int(e["H"]), L=int(e["Nq"]),
                            d=int(e["d"]), N=int(e.get("dstate") or e["d"]), G=int(e.get("ngroups") or 1),
                            chunk=int(e.get("Bc") or 64), group=str(e.get("group") or ""),
                            model={k: e.get(k) for k in ("flops", "flops_executed", "bytes", "exps")},
                            tolerance=e.get("tolerance"), state_axes="dstate" in e)
        except (KeyError, TypeError, ValueError):
            continue
        out.setdefault((p.row, p.dtype, p.B, p.H, p.L, p.d, p.N, p.G), p)
    return list(out.values())


def softplus(x: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, x)


def silu(x: np.ndarray) -> np.ndarray:
    return x / (1.0 + np.exp(-x))


# ---- inputs and fp64 references ------------------------------------------------------------------

def selective_scan_inputs(p: ScanProblem, g: np.random.Generator) -> dict[str, np.ndarray]:
    """selective_scan_fn's layout: u, dt, z [B, D, L]; A [D, N]; B, C [B, G, N, L]; D, bias [D]."""
    width = p.H * p.d
    dt = np.exp(np.log(1e-3) + g.random(width) * np.log(100.0))  # dt in [1e-3, 0.1], as Mamba's init
    return {"u": g.standard_normal((p.B, width, p.L)), "dt": 0.5 * g.standard_normal((p.B, width, p.L)),
            "z": g.standard_normal((p.B, width, p.L)), "A": -np.tile(np.arange(1.0, p.N + 1), (width, 1)),
            "Bm": g.standard_normal((p.B, p.G, p.N, p.L)), "Cm": g.standard_normal((p.B, p.G, p.N, p.L)),
            "D": 0.5 + g.random(width), "bias": dt + np.log(-np.expm1(-dt))}  # softplus(bias) = dt


def selective_scan_reference(x: dict[str, np.ndarray], p: ScanProblem, units: np.ndarray) -> np.ndarray:
    """out [B, len(units), L] of the channels `units`, the recurrence of selective_scan_ref."""
    width = p.H * p.d
    grp = units * p.G // width
    delta = softplus(x["dt"][:, units] + x["bias"][units, None])  # [B, c, L]
    A = x["A"][units]  # [c, N]
    h = np.zeros((p.B, len(units), p.N))
    y = np.empty((p.B, len(units), p.L))
    for t in range(p.L):
        bt, ct = x["Bm"][..., t][:, grp], x["Cm"][..., t][:, grp]  # [B, c, N]
        h = np.exp(delta[:, :, t, None] * A) * h + (delta[:, :, t] * x["u"][:, units, t])[:, :, None] * bt
        y[:, :, t] = (ct * h).sum(-1)
    y += x["D"][units, None] * x["u"][:, units]
    return y * silu(x["z"][:, units])


def ssd_inputs(p: ScanProblem, g: np.random.Generator) -> dict[str, np.ndarray]:
    """mamba_chunk_scan_combined's layout: x, z [B, L, H, P]; dt [B, L, H]; A, D, dt_bias [H];
    B, C [B, L, G, N]."""
    dt = np.exp(np.log(1e-3) + g.random(p.H) * np.log(100.0))
    return {"x": g.standard_normal((p.B, p.L, p.H, p.d)), "z": g.standard_normal((p.B, p.L, p.H, p.d)),
            "dt": 0.5 * g.standard_normal((p.B, p.L, p.H)), "A": -(1.0 + g.random(p.H) * 15.0),
            "Bm": g.standard_normal((p.B, p.L, p.G, p.N)), "Cm": g.standard_normal((p.B, p.L, p.G, p.N)),
            "D": 0.5 + g.random(p.H), "bias": dt + np.log(-np.expm1(-dt))}


def ssd_reference(x: dict[str, np.ndarray], p: ScanProblem, units: np.ndarray) -> np.ndarray:
    """out [B, L, len(units), P] of the heads `units`: S = exp(dt A) S + dt B x^T, y = C S + D x."""
    grp = units * p.G // p.H
    dt = softplus(x["dt"][..., units] + x["bias"][units])  # [B, L, h]
    S = np.zeros((p.B, len(units), p.N, p.d))
    y = np.empty((p.B, p.L, len(units), p.d))
    for t in range(p.L):
        xt = x["x"][:, t][:, units]  # [B, h, P]
        S = (np.exp(dt[:, t] * x["A"][units])[:, :, None, None] * S
             + dt[:, t, :, None, None] * x["Bm"][:, t][:, grp, :, None] * xt[:, :, None, :])
        y[:, t] = np.einsum("bhn,bhnp->bhp", x["Cm"][:, t][:, grp], S) + x["D"][units, None] * xt
    return y * silu(x["z"][:, :, units])  # a slice between: no advanced-index reordering


def rwkv6_inputs(p: ScanProblem, g: np.random.Generator) -> dict[str, np.ndarray]:
    """chunk_rwkv6's [B, T, H, K] layout: r, k, v; w the log decay -exp(w_raw); u [H, K]."""
    shape = (p.B, p.L, p.H, p.d)
    return {"r": g.standard_normal(shape), "k": g.standard_normal(shape) / math.sqrt(p.d),
            "v": g.standard_normal(shape), "w": -np.exp(-2.0 + 0.5 * g.standard_normal(shape)),
            "u": 0.5 * g.standard_normal((p.H, p.d))}


def rwkv6_reference(x: dict[str, np.ndarray], p: ScanProblem, units: np.ndarray) -> np.ndarray:
    """o [B, L, len(units), d]: o_t = r_t (S + diag(u) k_t v_t^T), S = diag(exp(w_t)) S + k_t v_t^T."""
    S = np.zeros((p.B, len(units), p.d, p.d))
    o = np.empty((p.B, p.L, len(units), p.d))
    u = x["u"][units]
    for t in range(p.L):
        r, k, v, w = (x[n][:, t][:, units] for n in ("r", "k", "v", "w"))  # [B, h, d]
        kv = k[:, :, :, None] * v[:, :, None, :]
        o[:, t] = np.einsum("bhk,bhkv->bhv", r, S + u[None, :, :, None] * kv)
        S = np.exp(w)[:, :, :, None] * S + kv
    return o


def library_call(peer: str, p: ScanProblem, x: dict[str, Any], torch_dtype, device: str) -> Callable[[], Any]:
    """The library's call on tensors of the problem's dtype on `device`, returning the output in
    the layout of the reference (selective scan [B, D, L]; SSD and RWKV-6 [B, L, H, d])."""
    import torch

    def t(a: np.ndarray, dtype=None):
        return torch.from_numpy(np.ascontiguousarray(a)).to(device=device, dtype=dtype or torch_dtype)

    f32 = torch.float32
    if peer == "mamba_ssm_selective_scan":
        from mamba_ssm.ops.selective_scan_interface import selective_scan_fn
        a = {"u": t(x["u"]), "delta": t(x["dt"]), "A": t(x["A"], f32), "B": t(x["Bm"]), "C": t(x["Cm"]),
             "D": t(x["D"], f32), "z": t(x["z"]), "delta_bias": t(x["bias"], f32)}
        return lambda: selective_scan_fn(a["u"], a["delta"], a["A"], a["B"], a["C"], D=a["D"], z=a["z"],
                                         delta_bias=a["delta_bias"], delta_softplus=True)
    if peer == "mamba_ssm_ssd":
        from mamba_ssm.ops.triton.ssd_combined import mamba_chunk_scan_combined
        a = {k: t(x[k]) for k in ("x", "z", "Bm", "Cm", "dt")}
        A, D, bias = t(x["A"], f32), t(x["D"], f32), t(x["bias"], f32)
        return lambda: mamba_chunk_scan_combined(a["x"], a["dt"], A, a["Bm"], a["Cm"], chunk_size=p.chunk, D=D,
                                                 z=a["z"], dt_bias=bias, dt_softplus=True)
    if peer == "fla_rwkv6":
        from fla.ops.rwkv6 import chunk_rwkv6
        a = {k: t(x[k]) for k in ("r", "k", "v", "w", "u")}
        kw = {"head_first": False} if "head_first" in inspect.signature(chunk_rwkv6).parameters else {}
        return lambda: chunk_rwkv6(a["r"], a["k"], a["v"], a["w"], a["u"], scale=1.0, **kw)[0]
    raise ValueError(peer)


PLANS = {"mamba_ssm_selective_scan": (selective_scan_inputs, selective_scan_reference, 1),
         "mamba_ssm_ssd": (ssd_inputs, ssd_reference, 2),
         "fla_rwkv6": (rwkv6_inputs, rwkv6_reference, 2)}  # (inputs, reference, axis of the units)


def run_scan_peer(peer: str, p: ScanProblem, device: str, entry: dict, time_fn: Callable[[Callable], Any],
                  timed: Callable[[dict, Any, dict], dict], not_run: Callable[[dict, str, str], dict]) -> dict:
    """One entry: skipped (CPU, not importable, dtype), failed (an error, NaN, wrong shape) or
    timed with rel_err against the fp64 recurrence."""
    module, row = SCAN_PEERS[peer]
    e = entry
    e.update(flops=p.model["flops"], flops_executed=p.model["flops_executed"], bytes=p.model["bytes"],
             exps=p.model["exps"], bytes_model=f"attnbench:{row}",
             **({"dstate": p.N, "ngroups": p.G} if p.state_axes else {}),
             intensity=p.model["flops"] / p.model["bytes"] if p.model["flops"] and p.model["bytes"] else None)
    if NEEDS_CUDA and device != "cuda":
        return not_run(e, "skipped", f"{module}'s kernels run on CUDA only (CUDA/Triton): beside attnbench's "
                                     f"'{row}' on a GPU run")
    if p.dtype not in ("fp32", "fp16", "bf16"):
        return not_run(e, "skipped", f"{peer} takes fp32, fp16 and bf16, not {p.dtype}")
    import torch
    torch_dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[p.dtype]
    make, reference, axis = PLANS[peer]
    rng = np.random.default_rng(SEED_SCAN)
    x = make(p, rng)
    # rounded to the dtype, as the library sees them: the reference takes the same values
    x = {k: v if k in ("A", "D", "bias") else torch.from_numpy(v).to(torch_dtype).double().numpy() for k, v in x.items()}
    try:
        fn = library_call(peer, p, x, torch_dtype, device)
        out = fn()
    except ImportError as err:
        return not_run(e, "skipped", f"{module} not importable ({type(err).__name__}: {str(err)[:200]})")
    except Exception as err:  # noqa: BLE001 - a library's API or build problem: this entry fails, not the run
        return not_run(e, "failed", f"{type(err).__name__}: {str(err).splitlines()[0][:300] if str(err) else ''}")
    got = out.detach().to("cpu", torch.float64).numpy()
    units_total = got.shape[axis] if got.ndim > axis else 0
    want_shape = (p.B, p.H * p.d, p.L) if axis == 1 else (p.B, p.L, p.H, p.d)
    if got.shape != want_shape:
        return not_run(e, "failed", f"output shape {got.shape}, expected {want_shape}")
    units = np.unique(np.linspace(0, units_total - 1, min(CHECKED_UNITS, units_total)).round().astype(np.int64))
    ref = reference(x, p, units)
    got = np.take(got, units, axis=axis)
    bad = int((~np.isfinite(got)).sum())
    den = float(np.sqrt((ref ** 2).sum()))
    err = None if bad else float(np.sqrt(((got - ref) ** 2).sum())) / (den if den > 0 else 1.0)
    tol = p.tolerance
    val = {"rel_err": err, "max_abs_err": None if bad else float(np.abs(got - ref).max()),
           "nonfinite_outputs": bad, "checked_rows": int(len(units)) * (p.B * (p.L if axis == 1 else p.d)),
           "err_ok": err is not None and tol is not None and err <= tol}
    if bad:
        e.update(val)
        return not_run(e, "failed", f"{bad} non-finite outputs")
    try:
        t = time_fn(fn)
    except Exception as err:  # noqa: BLE001
        return not_run(e, "failed", f"while timing: {type(err).__name__}: {str(err)[:200]}")
    return timed(e, t, val)

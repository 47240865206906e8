#!/usr/bin/env python3
"""Time attnbench's CPU flash2 against NumPy's unfused attention, in one run.

NumPy computes softmax(Q K^T / sqrt(d)) V with whole [B, H, N, N] score
matrices (what a user without attnbench would write); attnbench runs one
variant through `attnbench run ... --repeat N`, which prints `median_ms=<x>`.
Both see the same float32 inputs; the script also checks that the outputs
agree and prints the time ratio (attnbench / NumPy, below 1 means faster).

    python3 scripts/cpu_vs_numpy.py --attnbench build/bin/attnbench
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[np.float32]


@dataclass(frozen=True)
class Shape:
    batch: int
    heads: int
    seq: int
    head_dim: int


def make_inputs(shape: Shape, seed: int) -> tuple[Array, Array, Array]:
    rng = np.random.default_rng(seed)
    dims = (shape.batch, shape.heads, shape.seq, shape.head_dim)
    q, k, v = (rng.standard_normal(dims, dtype=np.float32) for _ in range(3))
    return q, k, v


def numpy_attention(q: Array, k: Array, v: Array, causal: bool) -> Array:
    """Unfused softmax attention, float32 throughout."""
    d = q.shape[-1]
    s = (q @ np.swapaxes(k, -1, -2)) * np.float32(1.0 / np.sqrt(d))
    if causal:  # square problems only: bottom-right and top-left alignment agree
        n = s.shape[-1]
        s = np.where(np.tril(np.ones((n, n), dtype=bool)), s, np.float32(-np.inf))
    s -= s.max(axis=-1, keepdims=True)
    p = np.exp(s)
    p /= p.sum(axis=-1, keepdims=True)
    return p @ v


def time_numpy(q: Array, k: Array, v: Array, causal: bool, repeat: int) -> tuple[float, Array]:
    out = numpy_attention(q, k, v, causal)  # warm-up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = numpy_attention(q, k, v, causal)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), out


MEDIAN_RE = re.compile(r"^median_ms=([0-9.eE+-]+)\s*$", re.MULTILINE)


def time_attnbench(binary: Path, variant: str, workdir: Path, mask: str, block: str | None,
                   repeat: int) -> tuple[float, Array]:
    out_path = workdir / "o.npy"
    cmd = [str(binary), "run", "--variant", variant, "--backend", "cpu",
           "--q", str(workdir / "q.npy"), "--k", str(workdir / "k.npy"),
           "--v", str(workdir / "v.npy"), "--out", str(out_path), "--mask", mask,
           "--repeat", str(repeat)]
    if block:
        cmd += ["--block", block]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.strip()}")
    match = MEDIAN_RE.search(proc.stdout)
    if match is None:
        raise RuntimeError(f"no median_ms=<x> line in the output of {' '.join(cmd)}:\n{proc.stdout}")
    return float(match.group(1)), np.load(out_path)


def rel_l2(got: Array, want: Array) -> float:
    diff = got.astype(np.float64) - want.astype(np.float64)
    return float(np.linalg.norm(diff) / np.linalg.norm(want.astype(np.float64)))


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        description="Time attnbench's CPU flash2 against NumPy's unfused attention, in one run.")
    ap.add_argument("--attnbench", type=Path, default=Path("build/bin/attnbench"),
                    help="attnbench binary (default: build/bin/attnbench)")
    ap.add_argument("--variant", default="flash2", help="attnbench CPU variant (default: flash2)")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--seq", type=int, default=2048, help="Nq = Nkv")
    ap.add_argument("--head-dim", type=int, default=64)
    ap.add_argument("--mask", choices=["none", "causal"], default="none")
    ap.add_argument("--block", default=None, help="tile sizes BrxBc for attnbench (default: its own)")
    ap.add_argument("--repeat", type=int, default=5, help="timed repetitions each (median)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tolerance", type=float, default=1e-4,
                    help="max relative L2 difference between the two outputs")
    args = ap.parse_args(argv)
    if min(args.batch, args.heads, args.seq, args.head_dim, args.repeat) <= 0:
        ap.error("sizes and --repeat must be positive")
    if not args.attnbench.exists():
        ap.error(f"attnbench binary not found: {args.attnbench} (build first or pass --attnbench)")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    shape = Shape(args.batch, args.heads, args.seq, args.head_dim)
    q, k, v = make_inputs(shape, args.seed)
    causal = args.mask == "causal"
    with tempfile.TemporaryDirectory(prefix="attnbench_np_") as tmp:
        work = Path(tmp)
        for name, arr in (("q", q), ("k", k), ("v", v)):
            np.save(work / f"{name}.npy", arr)
        np_ms, np_out = time_numpy(q, k, v, causal, args.repeat)
        ab_ms, ab_out = time_attnbench(args.attnbench, args.variant, work, args.mask, args.block,
                                       args.repeat)
    err = rel_l2(ab_out, np_out)
    print(f"shape B={shape.batch} H={shape.heads} N={shape.seq} d={shape.head_dim} "
          f"mask={args.mask} fp32, median of {args.repeat}")
    print(f"numpy_unfused_ms={np_ms:.3f}")
    print(f"attnbench_{args.variant}_ms={ab_ms:.3f}")
    print(f"ratio_attnbench_over_numpy={ab_ms / np_ms:.3f}")
    print(f"rel_l2_vs_numpy={err:.3e}")
    if not err <= args.tolerance:
        print(f"error: outputs differ by {err:.3e} > {args.tolerance:g}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

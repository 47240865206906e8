#!/usr/bin/env python3
"""attnbench's CPU rows against PyTorch's CPU attention, interleaved.

For every problem (B, H, N, d, mask) the script alternates, round after
round, between `attnbench run --variant V --repeat R` (which times the kernel
alone in-process and prints `median_ms=<x>`) and PyTorch's CPU SDPA on the
same float32 inputs: `torch.nn.functional.scaled_dot_product_attention` and
`torch.ops.aten._scaled_dot_product_flash_attention_for_cpu`, each the
median of R calls, and one 2048^3 sgemm of torch.mm and of NumPy. Every
round flips which side goes first. It prints the median over rounds of each
time, the time ratio attnbench / PyTorch of each round's pair (median;
below 1 means attnbench is faster), the useful GFLOP/s and that rate as a
share of the median sgemm rate (the machine's fp32 matrix ceiling the
kernels are held against). Outputs are compared
(relative L2) so a fast wrong kernel cannot pass.

attnbench runs with --hot by default (PyTorch's calls also find warm
caches); --cold drops it. Threads: OMP_NUM_THREADS for attnbench and
torch.set_num_threads for PyTorch, both --threads.

    python3 benchmarks/cpu_vs_torch.py                      # the default four problems
    python3 benchmarks/cpu_vs_torch.py --seq 1024,4096 --head-dim 64 --variants flash2,flash1
    python3 benchmarks/cpu_vs_torch.py --blocks 64x64,128x128,256x128     # tile choice
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[np.float32]


@dataclass(frozen=True)
class Problem:
    batch: int
    heads: int
    seq: int
    head_dim: int
    mask: str  # none | causal

    def label(self) -> str:
        return f"B={self.batch} H={self.heads} N={self.seq} d={self.head_dim} {self.mask}"

    def useful_flops(self) -> float:
        pairs = self.seq * self.seq if self.mask == "none" else self.seq * (self.seq + 1) / 2
        return 4.0 * self.batch * self.heads * pairs * self.head_dim


MEDIAN_RE = re.compile(r"^median_ms=([0-9.eE+-]+)\s*$", re.MULTILINE)


def run_attnbench(cmd: list[str], threads: int) -> float:
    """Runs `attnbench run ... --repeat R` on `threads` OpenMP threads; the median_ms it prints."""
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False,
                          env=dict(os.environ, OMP_NUM_THREADS=str(threads)))
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.strip()}")
    match = MEDIAN_RE.search(proc.stdout)
    if match is None:
        raise RuntimeError(f"no median_ms=<x> line from {' '.join(cmd)}:\n{proc.stdout}")
    return float(match.group(1))


def check_run_args(ap: argparse.ArgumentParser, args: argparse.Namespace, positive: list[str]) -> None:
    """The checks every benchmark here makes: each named option positive, the binary present."""
    for name in positive:
        value = getattr(args, name.replace("-", "_"))
        if value <= 0:
            ap.error(f"--{name}: {value} is not positive")
    if not args.attnbench.exists():
        ap.error(f"attnbench binary not found: {args.attnbench} (build it or pass --attnbench)")


def attnbench_ms(binary: Path, variant: str, work: Path, prob: Problem, block: str | None,
                 repeat: int, hot: bool, threads: int) -> tuple[float, Array]:
    out = work / "o.npy"
    cmd = [str(binary), "run", "--variant", variant, "--backend", "cpu",
           "--q", str(work / "q.npy"), "--k", str(work / "k.npy"), "--v", str(work / "v.npy"),
           "--out", str(out), "--mask", prob.mask, "--repeat", str(repeat)]
    if block:
        cmd += ["--block", block]
    if hot:
        cmd.append("--hot")
    return run_attnbench(cmd, threads), np.load(out)


def torch_impls(causal: bool) -> dict[str, Callable[..., object]]:
    import torch

    def sdpa(q: object, k: object, v: object) -> object:
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)

    def flash_cpu(q: object, k: object, v: object) -> object:
        return torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, causal)[0]

    return {"torch_sdpa": sdpa, "torch_flash_cpu": flash_cpu}


def torch_ms(fn: Callable[..., object], q: object, k: object, v: object,
             repeat: int) -> tuple[float, Array]:
    out = fn(q, k, v)  # warm-up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn(q, k, v)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), out.numpy()  # type: ignore[attr-defined]


class Sgemm:
    """2048^3 fp32 products of torch.mm and NumPy, one sample per call (GFLOP/s)."""

    def __init__(self, n: int = 2048) -> None:
        import torch

        rng = np.random.default_rng(0)
        self.n = n
        self.a = rng.standard_normal((n, n), dtype=np.float32)
        self.b = rng.standard_normal((n, n), dtype=np.float32)
        ta, tb = torch.from_numpy(self.a), torch.from_numpy(self.b)
        self.impls: dict[str, Callable[[], object]] = {"torch.mm": lambda: torch.mm(ta, tb),
                                                       "numpy": lambda: self.a @ self.b}
        self.samples: dict[str, list[float]] = {name: [] for name in self.impls}
        for fn in self.impls.values():
            fn()  # warm-up

    def sample(self) -> None:
        for name, fn in self.impls.items():
            t0 = time.perf_counter()
            fn()
            self.samples[name].append(2.0 * self.n**3 / (time.perf_counter() - t0) / 1e9)

    def ceiling(self) -> float:
        """The faster library's median rate."""
        return max(statistics.median(v) for v in self.samples.values() if v)


def rel_l2(got: Array, want: Array) -> float:
    diff = got.astype(np.float64) - want.astype(np.float64)
    return float(np.linalg.norm(diff) / np.linalg.norm(want.astype(np.float64)))


def int_list(s: str) -> list[int]:
    try:
        values = [int(x) for x in s.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a comma list of integers, got '{s}'") from None
    if not values or min(values) <= 0:
        raise argparse.ArgumentTypeError(f"expected positive integers, got '{s}'")
    return values


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--attnbench", type=Path, default=Path("build/bin/attnbench"),
                    help="attnbench binary (default: build/bin/attnbench)")
    ap.add_argument("--variants", default="flash2", help="attnbench CPU rows, comma list (default: flash2)")
    ap.add_argument("--batch", type=int_list, default=[1])
    ap.add_argument("--heads", type=int_list, default=[8])
    ap.add_argument("--seq", type=int_list, default=[2048], help="Nq = Nkv, comma list")
    ap.add_argument("--head-dim", type=int_list, default=[64, 128])
    ap.add_argument("--masks", default="none,causal", help="comma list of none|causal")
    ap.add_argument("--blocks", default=None,
                    help="attnbench tiles BrxBc, comma list: one attnbench row per (variant, block), "
                         "named variant@BrxBc (default: attnbench's own tiles)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=7, help="interleaved rounds (median; default 7)")
    ap.add_argument("--repeat", type=int, default=3, help="timed calls per side per round (median)")
    ap.add_argument("--cold", action="store_true", help="attnbench without --hot")
    ap.add_argument("--tolerance", type=float, default=1e-4, help="max relative L2 difference")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    args.masks = args.masks.split(",")
    for m in args.masks:
        if m not in ("none", "causal"):
            ap.error(f"--masks: '{m}' is not none or causal")
    variants = [v for v in args.variants.split(",") if v]
    if not variants:
        ap.error("--variants is empty")
    blocks: list[str | None] = [None] if args.blocks is None else args.blocks.split(",")
    for b in blocks:
        if b is not None and not re.fullmatch(r"[0-9]+x[0-9]+", b):
            ap.error(f"--blocks: '{b}' is not BrxBc")
    # (display name, variant, block)
    args.rows = [(v if b is None else f"{v}@{b}", v, b) for v in variants for b in blocks]
    check_run_args(ap, args, ["threads", "rounds", "repeat"])
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)
    sgemm = Sgemm()
    print(f"# {args.threads} threads, fp32, {args.rounds} interleaved rounds x {args.repeat} calls, "
          f"attnbench {'cold' if args.cold else '--hot'}, torch {torch.__version__}; "
          "%sgemm: of the median 2048^3 sgemm rate sampled in every round")
    print(f"{'problem':<30} {'impl':<24} {'ms':>9} {'GFLOP/s':>8} {'%sgemm':>7} {'ratio':>7} {'relL2':>9}")
    failed = False
    problems = [Problem(b, h, n, d, m) for b in args.batch for h in args.heads for n in args.seq
                for d in args.head_dim for m in args.masks]
    for prob in problems:
        rng = np.random.default_rng(args.seed)
        dims = (prob.batch, prob.heads, prob.seq, prob.head_dim)
        q, k, v = (rng.standard_normal(dims, dtype=np.float32) for _ in range(3))
        tq, tk, tv = (torch.from_numpy(x) for x in (q, k, v))
        impls = torch_impls(prob.mask == "causal")
        with tempfile.TemporaryDirectory(prefix="attnbench_torch_") as tmp:
            work = Path(tmp)
            for name, arr in (("q", q), ("k", k), ("v", v)):
                np.save(work / f"{name}.npy", arr)
            names = [name for name, _, _ in args.rows]
            times: dict[str, list[float]] = {name: [] for name in [*names, *impls]}
            outputs: dict[str, Array] = {}
            for rnd in range(args.rounds):
                steps: list[tuple[str, Callable[[], tuple[float, Array]]]] = [
                    (name, lambda var=var, block=block: attnbench_ms(
                        args.attnbench, var, work, prob, block, args.repeat, not args.cold, args.threads))
                    for name, var, block in args.rows]
                steps += [(name, lambda fn=fn: torch_ms(fn, tq, tk, tv, args.repeat))
                          for name, fn in impls.items()]
                if rnd % 2:
                    steps.reverse()
                sgemm.sample()
                for name, step in steps:
                    ms, out = step()
                    times[name].append(ms)
                    outputs[name] = out
        want = outputs["torch_flash_cpu"]
        ceiling = sgemm.ceiling()
        for name, ts in times.items():
            med = statistics.median(ts)
            gflops = prob.useful_flops() / (med * 1e-3) / 1e9
            ratio = ""
            if name in names:
                ratio = f"{statistics.median(a / b for a, b in zip(ts, times['torch_flash_cpu'])):.3f}"
            err = rel_l2(outputs[name], want)
            print(f"{prob.label():<30} {name:<24} {med:9.2f} {gflops:8.1f} {100 * gflops / ceiling:6.0f}% "
                  f"{ratio:>7} {err:9.2e}")
            if not err <= args.tolerance:
                print(f"error: {name} differs from torch_flash_cpu by {err:.3e} > {args.tolerance:g}",
                      file=sys.stderr)
                failed = True
        for name in names:
            r = statistics.median(a / b for a, b in zip(times[name], times["torch_sdpa"]))
            print(f"{prob.label():<30} {name + ' / torch_sdpa':<24} {'':>9} {'':>8} {'':>7} {r:7.3f}")
    print("# sgemm 2048^3 medians: " + ", ".join(
        f"{k} {statistics.median(v):.0f} GFLOP/s" for k, v in sgemm.samples.items()))
    print("# ratio: median over rounds of attnbench time / torch time of the same round "
          "(below 1: attnbench faster)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""attnbench's CPU backward rows against PyTorch's CPU SDPA backward, interleaved (docs/backward.md).

For every problem (B, H, N, d, mask) the script alternates, round after round,
between `attnbench run --variant V --pass bwd --repeat R` (the whole backward
timed in-process, its forward run once untimed; prints `median_ms=<x>`) and
PyTorch's CPU backward on the same float32 Q, K, V, dO:
`torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward` (what the
default SDPA dispatch runs on the CPU) given O and lse from its forward, run
once outside the timed calls, the median of R calls; every round flips which
side goes first. It prints the median over rounds of each time, the median of
each round's time ratio attnbench / torch (below 1: attnbench faster) and the
useful GFLOP/s (2.5 x the forward's useful FLOPs, docs/backward.md). dQ, dK and
dV are compared with torch's (relative L2) so a fast wrong kernel cannot pass.

attnbench runs with --hot by default (torch's calls also find warm caches);
--cold drops it. Threads: OMP_NUM_THREADS for attnbench and
torch.set_num_threads for torch, both --threads.

    python3 benchmarks/cpu_vs_torch_bwd.py          # B=1 H=8 N=2048, d 64/128, none/causal
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from cpu_vs_torch import Array, Problem, check_run_args, int_list, rel_l2, run_attnbench

GRADS = ("dq", "dk", "dv")


def attnbench_bwd_ms(binary: Path, variant: str, work: Path, prob: Problem, repeat: int, hot: bool,
                     threads: int) -> tuple[float, list[Array]]:
    cmd = [str(binary), "run", "--variant", variant, "--backend", "cpu", "--pass", "bwd",
           "--q", str(work / "q.npy"), "--k", str(work / "k.npy"), "--v", str(work / "v.npy"),
           "--do", str(work / "do.npy"), "--mask", prob.mask, "--repeat", str(repeat)]
    for g in GRADS:
        cmd += [f"--{g}", str(work / f"{g}.npy")]
    if hot:
        cmd.append("--hot")
    return run_attnbench(cmd, threads), [np.load(work / f"{g}.npy") for g in GRADS]


class TorchBackward:
    """torch's CPU flash backward on fixed inputs; O and lse from its forward, once."""

    def __init__(self, q: Array, k: Array, v: Array, d_o: Array, causal: bool) -> None:
        import torch

        self.args = [torch.from_numpy(x) for x in (d_o, q, k, v)]
        out, lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(*self.args[1:], 0.0, causal)
        self.op = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward
        self.tail = (out, lse, 0.0, causal)
        self.grads = self.op(*self.args, *self.tail)  # warm-up

    def ms(self, repeat: int) -> tuple[float, list[Array]]:
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            self.grads = self.op(*self.args, *self.tail)
            times.append((time.perf_counter() - t0) * 1e3)
        return statistics.median(times), [g.numpy() for g in self.grads]


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
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds (median; default 5)")
    ap.add_argument("--repeat", type=int, default=3, help="timed calls per side per round (median)")
    ap.add_argument("--cold", action="store_true", help="attnbench without --hot")
    ap.add_argument("--tolerance", type=float, default=1e-4, help="max relative L2 difference per gradient")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    args.masks = args.masks.split(",")
    for m in args.masks:
        if m not in ("none", "causal"):
            ap.error(f"--masks: '{m}' is not none or causal")
    args.variants = [v for v in args.variants.split(",") if v]
    if not args.variants:
        ap.error("--variants is empty")
    check_run_args(ap, args, ["threads", "rounds", "repeat"])
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)
    print(f"# backward, {args.threads} threads, fp32, {args.rounds} interleaved rounds x {args.repeat} calls, "
          f"attnbench {'cold' if args.cold else '--hot'}, torch {torch.__version__}")
    print(f"{'problem':<30} {'impl':<16} {'ms':>9} {'GFLOP/s':>8} {'ratio':>7} {'dq relL2':>9} {'dk relL2':>9} "
          f"{'dv relL2':>9}")
    failed = False
    problems = [Problem(b, h, n, d, m) for b in args.batch for h in args.heads for n in args.seq
                for d in args.head_dim for m in args.masks]
    for prob in problems:
        rng = np.random.default_rng(args.seed)
        dims = (prob.batch, prob.heads, prob.seq, prob.head_dim)
        q, k, v, d_o = (rng.standard_normal(dims, dtype=np.float32) for _ in range(4))
        ref = TorchBackward(q, k, v, d_o, prob.mask == "causal")
        with tempfile.TemporaryDirectory(prefix="attnbench_torch_bwd_") as tmp:
            work = Path(tmp)
            for name, arr in (("q", q), ("k", k), ("v", v), ("do", d_o)):
                np.save(work / f"{name}.npy", arr)
            times: dict[str, list[float]] = {name: [] for name in [*args.variants, "torch_flash_cpu"]}
            grads: dict[str, list[Array]] = {}
            for rnd in range(args.rounds):
                steps = [(name, lambda var=name: attnbench_bwd_ms(args.attnbench, var, work, prob, args.repeat,
                                                                  not args.cold, args.threads))
                         for name in args.variants]
                steps.append(("torch_flash_cpu", lambda: ref.ms(args.repeat)))
                if rnd % 2:
                    steps.reverse()
                for name, step in steps:
                    ms, g = step()
                    times[name].append(ms)
                    grads[name] = g
        useful = 2.5 * prob.useful_flops()
        for name, ts in times.items():
            med = statistics.median(ts)
            ratio = "" if name == "torch_flash_cpu" else \
                f"{statistics.median(a / b for a, b in zip(ts, times['torch_flash_cpu'])):.3f}"
            errs = [rel_l2(got, want) for got, want in zip(grads[name], grads["torch_flash_cpu"])]
            print(f"{prob.label():<30} {name:<16} {med:9.2f} {useful / (med * 1e-3) / 1e9:8.1f} {ratio:>7} "
                  + " ".join(f"{e:9.2e}" for e in errs))
            if not all(e <= args.tolerance for e in errs):
                print(f"error: {name} gradients differ from torch_flash_cpu by {max(errs):.3e} > {args.tolerance:g}",
                      file=sys.stderr)
                failed = True
    print("# ratio: median over rounds of attnbench time / torch time of the same round (below 1: attnbench faster)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

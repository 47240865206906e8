#!/usr/bin/env python3
"""attnbench's CPU decode rows against PyTorch's CPU SDPA and FlexAttention, interleaved.

For every decode problem (B, H, Hkv, Nq, Nkv, d, causal aligned bottom-right, as
attnbench's masks) the script alternates, round after round, between
`attnbench run --variant V --repeat R` (the kernel timed alone in-process; it prints
`median_ms=<x>`) and PyTorch on the same float32 inputs: `scaled_dot_product_attention`
(enable_gqa; no mask when every key is visible, else the boolean bottom-right mask) and
FlexAttention (`torch.compile(flex_attention)` with the causal block mask, enable_gqa),
each the median of R calls. Every round flips the order. It prints the median over rounds
of each time, the median over rounds of attnbench time / the faster PyTorch time of the
same round (below 1: attnbench faster), and the GB/s of modeled bytes (attnbench rows:
their model's `bytes`; PyTorch: `bytes_min`, Q, K, V read once and O written once) as a
share of the measured copy bandwidth. Model bytes and the copy bandwidth come from one
`attnbench sweep` of the same problems before the rounds (its `context.ceilings.measured
.bandwidth_gbps`: bytes read + written per second of a multithreaded 256 MiB copy); a
second sweep after the rounds shows how far the machine moved. Outputs are compared
(relative L2 against SDPA) so a fast wrong kernel cannot pass.

Cold by default, as the roof is a memory roof: attnbench evicts the last-level cache
before each timed run (its default), and PyTorch's calls run after the same eviction
(a buffer of twice the LLC written, outside the clock). --hot drops both. Threads:
OMP_NUM_THREADS for attnbench and torch.set_num_threads for PyTorch, both --threads.

    python3 benchmarks/cpu_decode_vs_torch.py            # the default eight problems
    python3 benchmarks/cpu_decode_vs_torch.py --nkv 4096 --nq 1,2,4,8,16 --variants flash2_splitkv
"""

from __future__ import annotations

import argparse
import json
import os
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

from cpu_vs_torch import Array, check_run_args, int_list, rel_l2, run_attnbench

REF = "torch_sdpa"


@dataclass(frozen=True)
class Decode:
    batch: int
    heads: int
    kv_heads: int
    nq: int
    nkv: int
    head_dim: int

    def label(self) -> str:
        return f"B{self.batch} H{self.heads} Hkv{self.kv_heads} Nq{self.nq} Nkv{self.nkv} d{self.head_dim}"

    def key(self) -> tuple[int, ...]:
        return (self.batch, self.heads, self.kv_heads, self.nq, self.nkv, self.head_dim)

    def visible(self) -> npt.NDArray[np.bool_]:
        """Bottom-right causal: query i sees keys j <= i + Nkv - Nq."""
        i = np.arange(self.nq)[:, None]
        j = np.arange(self.nkv)[None, :]
        return j <= i + self.nkv - self.nq



def last_level_cache_bytes() -> int:
    best = 0
    for index in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*"):
        try:
            size = (index / "size").read_text().strip()
            level = int((index / "level").read_text())
        except (OSError, ValueError):
            continue
        scale = {"K": 1 << 10, "M": 1 << 20}.get(size[-1], 1)
        if level >= 3:
            best = max(best, int(size.rstrip("KM")) * scale)
    return best or (128 << 20)


class Evictor:
    """Writes twice the LLC (PyTorch's threads), outside the clock: what attnbench's cold runs do."""

    def __init__(self) -> None:
        import torch

        self.buf = torch.empty(2 * last_level_cache_bytes(), dtype=torch.uint8)
        self.value = 1

    def evict(self) -> None:
        self.buf.fill_(self.value)
        self.value = self.value % 250 + 1


def torch_impls(p: Decode, q: object, k: object, v: object) -> dict[str, Callable[[], object]]:
    import torch
    import torch.nn.functional as F

    gqa = p.kv_heads != p.heads
    vis = p.visible()
    impls: dict[str, Callable[[], object]] = {}
    if vis.all():
        impls[REF] = lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=gqa)
    else:
        mask = torch.from_numpy(vis)
        impls[REF] = lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=gqa)
    try:
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention

        shift = p.nkv - p.nq
        block_mask = create_block_mask(lambda b, h, qi, kj: kj <= qi + shift, None, None, p.nq, p.nkv,
                                       device="cpu")
        flex = torch.compile(flex_attention, dynamic=False)
        t0 = time.perf_counter()
        flex(q, k, v, block_mask=block_mask, enable_gqa=gqa)
        print(f"# {p.label()}: FlexAttention compiled in {time.perf_counter() - t0:.1f} s", flush=True)
        impls["torch_flex"] = lambda: flex(q, k, v, block_mask=block_mask, enable_gqa=gqa)
    except Exception as e:  # an inductor failure: reported, the problem runs without Flex
        print(f"# {p.label()}: no FlexAttention ({type(e).__name__}: {str(e).splitlines()[0][:200]})")
    return impls


def torch_ms(fn: Callable[[], object], repeat: int, evictor: Evictor | None) -> tuple[float, Array]:
    out = fn()  # warm-up
    times = []
    for _ in range(repeat):
        if evictor:
            evictor.evict()
        t0 = time.perf_counter()
        out = fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), out.numpy()  # type: ignore[attr-defined]


def attnbench_ms(binary: Path, variant: str, work: Path, repeat: int, hot: bool,
                 threads: int) -> tuple[float, Array]:
    out = work / "o.npy"
    cmd = [str(binary), "run", "--variant", variant, "--backend", "cpu", "--q", str(work / "q.npy"),
           "--k", str(work / "k.npy"), "--v", str(work / "v.npy"), "--out", str(out), "--mask", "causal",
           "--repeat", str(repeat)] + (["--hot"] if hot else [])
    return run_attnbench(cmd, threads), np.load(out)


@dataclass
class Models:
    bandwidth_gbps: float
    bytes: dict[tuple[str, tuple[int, ...]], float]  # (variant, problem key) -> modeled bytes
    bytes_min: dict[tuple[int, ...], float]


def model_sweep(args: argparse.Namespace, problems: list[Decode]) -> Models:
    """One attnbench sweep over the problems (one repetition each): the model bytes of every
    row and the measured copy bandwidth of its context."""
    found: dict[tuple[str, tuple[int, ...]], float] = {}
    minimal: dict[tuple[int, ...], float] = {}
    with tempfile.TemporaryDirectory(prefix="attnbench_decode_") as tmp:
        out = Path(tmp) / "models.json"
        axes = {"--batch": {p.batch for p in problems}, "--heads": {p.heads for p in problems},
                "--kv-heads": {p.kv_heads for p in problems}, "--nq": {p.nq for p in problems},
                "--nkv": {p.nkv for p in problems}, "--head-dim": {p.head_dim for p in problems}}
        cmd = [str(args.attnbench), "sweep", "--backend", "cpu", "--variant", ",".join(args.variants),
               "--mask", "causal", "--reps", "1", "--rep-time", "0.001", "--out", str(out)]
        for flag, values in axes.items():
            cmd += [flag, ",".join(str(x) for x in sorted(values))]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False,
                              env=dict(os.environ, OMP_NUM_THREADS=str(args.threads)))
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.strip()}")
        doc = json.loads(out.read_text())
    bandwidth = float(doc["context"]["ceilings"]["measured"]["bandwidth_gbps"])
    for e in doc["benchmarks"]:
        key = (e["B"], e["H"], e["Hkv"], e["Nq"], e["Nkv"], e["d"])
        found[(e["variant"], key)] = float(e["bytes"])
        minimal[key] = float(e["bytes_min"])
    return Models(bandwidth, found, minimal)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--attnbench", type=Path, default=Path("build/bin/attnbench"),
                    help="attnbench binary (default: build/bin/attnbench)")
    ap.add_argument("--variants", default="flash2_splitkv,flash2",
                    help="attnbench CPU rows, comma list (default: flash2_splitkv,flash2)")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--kv-heads", type=int_list, default=[8, 1])
    ap.add_argument("--nq", type=int_list, default=[1, 4])
    ap.add_argument("--nkv", type=int_list, default=[4096, 16384])
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=7, help="interleaved rounds (median; default 7)")
    ap.add_argument("--repeat", type=int, default=5, help="timed calls per side per round (median)")
    ap.add_argument("--hot", action="store_true", help="warm caches on both sides (no LLC eviction)")
    ap.add_argument("--tolerance", type=float, default=1e-4, help="max relative L2 difference")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    args.variants = [v for v in args.variants.split(",") if v]
    if not args.variants:
        ap.error("--variants is empty")
    check_run_args(ap, args, ["threads", "rounds", "repeat", "batch", "heads", "head-dim"])
    for hkv in args.kv_heads:
        if args.heads % hkv:
            ap.error(f"--kv-heads: {hkv} does not divide --heads {args.heads}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)
    problems = [Decode(args.batch, args.heads, hkv, nq, nkv, args.head_dim)
                for nkv in args.nkv for hkv in args.kv_heads for nq in args.nq]
    before = model_sweep(args, problems)
    evictor = None if args.hot else Evictor()
    print(f"# {args.threads} threads, fp32, causal (bottom-right), {args.rounds} interleaved rounds x "
          f"{args.repeat} calls, {'hot' if args.hot else 'cold (LLC evicted before every timed call)'}, "
          f"torch {torch.__version__}; copy bandwidth {before.bandwidth_gbps:.1f} GB/s (attnbench sweep)")
    print(f"{'problem':<34} {'impl':<16} {'ms':>8} {'/fastest torch':>14} {'GB/s':>7} {'%copy':>6} {'relL2':>9}")
    failed = False
    for prob in problems:
        rng = np.random.default_rng(args.seed)
        q = rng.standard_normal((prob.batch, prob.heads, prob.nq, prob.head_dim), dtype=np.float32)
        k, v = (rng.standard_normal((prob.batch, prob.kv_heads, prob.nkv, prob.head_dim), dtype=np.float32)
                for _ in range(2))
        impls = torch_impls(prob, *(torch.from_numpy(x) for x in (q, k, v)))
        with tempfile.TemporaryDirectory(prefix="attnbench_decode_") as tmp:
            work = Path(tmp)
            for name, arr in (("q", q), ("k", k), ("v", v)):
                np.save(work / f"{name}.npy", arr)
            times: dict[str, list[float]] = {name: [] for name in [*args.variants, *impls]}
            outputs: dict[str, Array] = {}
            for rnd in range(args.rounds):
                steps: list[tuple[str, Callable[[], tuple[float, Array]]]] = [
                    (var, lambda var=var: attnbench_ms(args.attnbench, var, work, args.repeat, args.hot,
                                                       args.threads)) for var in args.variants]
                steps += [(name, lambda fn=fn: torch_ms(fn, args.repeat, evictor)) for name, fn in impls.items()]
                if rnd % 2:
                    steps.reverse()
                for name, step in steps:
                    ms, out = step()
                    times[name].append(ms)
                    outputs[name] = out
        torch_names = list(impls)
        fastest = [min(times[t][r] for t in torch_names) for r in range(args.rounds)]
        for name, ts in times.items():
            med = statistics.median(ts)
            nbytes = before.bytes.get((name, prob.key()), before.bytes_min[prob.key()])
            gbps = nbytes / (med * 1e-3) / 1e9
            ratio = statistics.median(a / b for a, b in zip(ts, fastest)) if name not in impls else None
            err = rel_l2(outputs[name], outputs[REF])
            ratio_s = f"{ratio:.3f}" if ratio is not None else ""
            print(f"{prob.label():<34} {name:<16} {med:8.3f} {ratio_s:>14} {gbps:7.1f} "
                  f"{100 * gbps / before.bandwidth_gbps:5.0f}% {err:9.2e}", flush=True)
            if not err <= args.tolerance:
                print(f"error: {name} differs from {REF} by {err:.3e} > {args.tolerance:g}", file=sys.stderr)
                failed = True
    after = model_sweep(args, problems)
    print(f"# copy bandwidth after the rounds: {after.bandwidth_gbps:.1f} GB/s (before: {before.bandwidth_gbps:.1f})")
    print("# GB/s: modeled bytes / median time (attnbench rows: the row's model; torch: bytes_min); "
          "%copy: of the copy bandwidth measured before the rounds")
    print("# /fastest torch: median over rounds of attnbench time / the faster of SDPA and Flex in that round")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

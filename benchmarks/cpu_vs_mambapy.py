#!/usr/bin/env python3
"""attnbench's CPU selective scan against mambapy's, interleaved (docs/alternatives.md).

mambapy (PyPI; scripts/setup.sh installs it with the test tools) is the pure-PyTorch Mamba a CPU user
would pick: its `MambaBlock.selective_scan` runs the scan as a parallel (Blelloch) scan over
(B, L, D, N) tensors. Timed on its side, as its CPU path runs it: softplus(dt + bias), the
selective scan (D u included), y * silu(z) (mamba.py, MambaBlock.ssm and forward). attnbench's
side is `attnbench run --variant selective_scan --repeat R --hot`, the kernel alone, in
process (median_ms=<x>). Both read the same u, dt, z (written as the Q, K, V of the attention
problem of the same width: [B, H, L, d], channel h d + x; docs/alternatives.md) and the same
A, B, C, D and bias, which this script rebuilds from attnbench's definition
(kernels/reference/scan_parameters.hpp: splitmix64 units, no generator state). Rounds
alternate which side goes first; the script prints the medians over rounds, the median of
each round's time ratio attnbench / mambapy (below 1: attnbench faster) and the relative L2
difference of the outputs, and fails (exit 1) above --tolerance: a fast wrong kernel cannot
pass. Threads: OMP_NUM_THREADS for attnbench, torch.set_num_threads for mambapy.

    python3 benchmarks/cpu_vs_mambapy.py            # B=1, D=2048 (H=32, d=64), N=16, L=4096, 2 threads
    python3 benchmarks/cpu_vs_mambapy.py --seq 1024,4096 --rounds 3
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import numpy.typing as npt

from cpu_vs_torch import check_run_args, int_list, rel_l2, run_attnbench

Array = npt.NDArray[np.float32]
SCAN_SEED = 0x5EED25  # kernels/reference/scan_parameters.cpp
M64 = np.uint64(0xFFFFFFFFFFFFFFFF)


def splitmix64(x: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    with np.errstate(over="ignore"):
        x = x + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def scan_unit(tensor: int, n: int) -> Array:
    """scan_unit(tensor, i) for i < n: uniform in [0, 1), as attnbench draws it."""
    key = splitmix64(np.array([SCAN_SEED ^ tensor], dtype=np.uint64))[0]
    bits = splitmix64(np.arange(n, dtype=np.uint64) ^ key) >> np.uint64(40)
    return bits.astype(np.float32) * np.float32(2.0**-24)


def scan_parameters(batch: int, width: int, seq: int, state: int) -> dict[str, Array]:
    """make_selective_scan_parameters with G = 1: A [D, N], D and bias [D], B and C [B, L, N]."""
    a = np.tile(-np.arange(1, state + 1, dtype=np.float32), (width, 1))
    skip = np.float32(0.5) + scan_unit(2, width)
    dt = np.exp(np.log(1e-3) + scan_unit(3, width).astype(np.float64) * np.log(100.0))
    bias = (dt + np.log(-np.expm1(-dt))).astype(np.float32)
    n = batch * seq * state
    b = (np.float32(2) * scan_unit(0, n) - np.float32(1)).reshape(batch, seq, state)
    c = (np.float32(2) * scan_unit(1, n) - np.float32(1)).reshape(batch, seq, state)
    return {"A": a, "D": skip, "bias": bias, "B": b, "C": c}


def attnbench_ms(binary: Path, work: Path, state: int, repeat: int, threads: int) -> tuple[float, Array]:
    out = work / "o.npy"
    cmd = [str(binary), "run", "--variant", "selective_scan", "--backend", "cpu", "--mask", "causal",
           "--q", str(work / "u.npy"), "--k", str(work / "dt.npy"), "--v", str(work / "z.npy"),
           "--out", str(out), "--state", str(state), "--repeat", str(repeat), "--hot"]
    return run_attnbench(cmd, threads), np.load(out)


class Mambapy:
    """mambapy's CPU path on the same inputs, in its (B, L, D) layout."""

    def __init__(self, u: Array, dt: Array, z: Array, params: dict[str, Array]) -> None:
        import torch
        from mambapy.mamba import MambaBlock

        def blc(x: Array) -> "torch.Tensor":  # [B, H, L, d] -> (B, L, H d)
            b, h, l, d = x.shape
            return torch.from_numpy(x).permute(0, 2, 1, 3).reshape(b, l, h * d).contiguous()

        self.torch = torch
        self.scan = MambaBlock.selective_scan  # uses no attribute of the block: called with self = None
        self.x, self.dt, self.z = blc(u), blc(dt), blc(z)
        self.p = {k: torch.from_numpy(v) for k, v in params.items()}

    def forward(self) -> "object":
        F = self.torch.nn.functional
        with self.torch.no_grad():
            delta = F.softplus(self.dt + self.p["bias"])
            y = self.scan(None, self.x, delta, self.p["A"], self.p["B"], self.p["C"], self.p["D"])
            return y * F.silu(self.z)

    def ms(self, repeat: int) -> tuple[float, Array]:
        times = []
        out = None
        for _ in range(repeat):
            t0 = time.perf_counter()
            out = self.forward()
            times.append((time.perf_counter() - t0) * 1e3)
        return statistics.median(times), out.numpy()  # type: ignore[union-attr]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--attnbench", type=Path, default=Path("build/bin/attnbench"),
                    help="attnbench binary (default: build/bin/attnbench)")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--heads", type=int, default=32, help="H: the width D = H * head-dim (default 32)")
    ap.add_argument("--head-dim", type=int, default=64)
    ap.add_argument("--state", type=int, default=16, help="N (default 16)")
    ap.add_argument("--seq", type=int_list, default=[4096], help="L, comma list (default 4096)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds (median; default 5)")
    ap.add_argument("--repeat", type=int, default=3, help="timed calls per side per round (median)")
    ap.add_argument("--tolerance", type=float, default=1e-4, help="max relative L2 difference of the outputs")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    check_run_args(ap, args, ["batch", "heads", "head-dim", "state", "threads", "rounds", "repeat"])
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        import mambapy  # noqa: F401
        import torch
    except ImportError as e:
        print(f"cpu_vs_mambapy: {e}: run scripts/setup.sh (installs mambapy)", file=sys.stderr)
        return 2
    torch.set_num_threads(args.threads)
    width = args.heads * args.head_dim
    print(f"# {args.threads} threads, fp32, {args.rounds} interleaved rounds x {args.repeat} calls, attnbench --hot, "
          f"torch {torch.__version__}, mambapy {__import__('importlib.metadata').metadata.version('mambapy')}")
    print(f"{'problem':<34} {'impl':<22} {'ms':>9} {'ratio':>7} {'relL2':>9}")
    failed = False
    rng = np.random.default_rng(args.seed)
    for seq in args.seq:
        shape = (args.batch, args.heads, seq, args.head_dim)
        u, dt, z = (rng.standard_normal(shape, dtype=np.float32) for _ in range(3))
        params = scan_parameters(args.batch, width, seq, args.state)
        peer = Mambapy(u, dt, z, params)
        peer.forward()  # warm-up
        times: dict[str, list[float]] = {"attnbench selective_scan": [], "mambapy": []}
        ratios: list[float] = []
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            for name, x in (("u", u), ("dt", dt), ("z", z)):
                np.save(work / f"{name}.npy", x)
            ours_out = theirs_out = None
            for r in range(args.rounds):
                first_ours = r % 2 == 0
                for side in ((0, 1) if first_ours else (1, 0)):
                    if side == 0:
                        ours, ours_out = attnbench_ms(args.attnbench, work, args.state, args.repeat, args.threads)
                    else:
                        theirs, theirs_out = peer.ms(args.repeat)
                times["attnbench selective_scan"].append(ours)
                times["mambapy"].append(theirs)
                ratios.append(ours / theirs)
        assert ours_out is not None and theirs_out is not None
        ours_blc = ours_out.transpose(0, 2, 1, 3).reshape(args.batch, seq, width)
        err = rel_l2(ours_blc, theirs_out)
        label = f"B={args.batch} D={width} N={args.state} L={seq}"
        print(f"{label:<34} {'mambapy':<22} {statistics.median(times['mambapy']):9.2f}")
        print(f"{'':<34} {'attnbench selective_scan':<22} {statistics.median(times['attnbench selective_scan']):9.2f} "
              f"{statistics.median(ratios):6.3f}x {err:9.2e}")
        if not err <= args.tolerance:
            print(f"cpu_vs_mambapy: outputs differ: relative L2 {err:.3g} > {args.tolerance:g}", file=sys.stderr)
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

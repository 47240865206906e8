"""Writes the hand-built fixtures in fixtures/ following docs/json_schema.md exactly.

cpu_harness.json (+ its results log) is real harness output:
  build/bin/attnbench sweep --sweep-file tests/python/fixtures/sweep_cpu_small.json \
      --backend cpu --reps 3 --rep-time 0.005 --out tests/python/fixtures/cpu_harness.json
and cpu_harness_ncu.json a hand edit of it (written here). The others are hand-built to
docs/json_schema.md, for what a CPU sweep cannot produce (cuda contexts with theoretical
ceilings and several dtypes, failures, controlled slowdowns for compare, malformed files). Run: python3 tests/python/make_fixtures.py
Deterministic: the same file every time.
"""
from __future__ import annotations

import copy
import json
import math
import os
import random

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
DT_BYTES = {"fp32": 4, "fp16": 2, "bf16": 2, "e4m3": 1}


def visible_pairs(nq: int, nkv: int, mask: str) -> int:
    if mask == "none":
        return nq * nkv
    # causal, bottom-right aligned: query i sees keys j <= i + nkv - nq
    return sum(max(0, min(nkv, i + nkv - nq + 1)) for i in range(nq))


def entry(variant, backend, dtype, group, B, H, Hkv, Nq, Nkv, d, mask, Br, Bc,
          speed_tflops, bw_gbps, rng, status="ok", msg=""):
    name = f"{variant}/{backend}/{dtype}/B:{B}/H:{H}/Hkv:{Hkv}/Nq:{Nq}/Nkv:{Nkv}/d:{d}/mask:{mask}/Br:{Br}/Bc:{Bc}"
    e = {"name": name, "run_name": name, "run_type": "aggregate", "aggregate_name": "median",
         "repetitions": 5, "iterations": 1, "time_unit": "ms", "label": "",
         "variant": variant, "backend": backend, "dtype": dtype, "mask": mask, "group": group,
         "status": status, "B": B, "H": H, "Hkv": Hkv, "Nq": Nq, "Nkv": Nkv, "d": d, "Br": Br, "Bc": Bc}
    vis = visible_pairs(Nq, Nkv, mask)
    flops = 4.0 * d * vis * B * H
    eb = DT_BYTES[dtype]
    bytes_min = eb * (2 * B * H * Nq * d + 2 * B * Hkv * Nkv * d)
    if variant in ("naive", "cublas_unfused"):
        bytes_ = bytes_min + 4 * 3 * B * H * vis  # S written, read, P written/read
    elif variant == "flash1":
        bytes_ = bytes_min + eb * B * Hkv * Nkv * d * 2 * max(1, Nq // Br) // 4 + 8 * B * H * Nq * max(1, Nkv // Bc)
    else:
        bytes_ = bytes_min + eb * 2 * B * Hkv * Nkv * d * max(0, (Nq // Br) * (H // Hkv) - 1) // 8
    e.update({"flops": flops, "flops_executed": 4.0 * d * Nq * Nkv * B * H, "bytes": float(bytes_),
              "bytes_min": float(bytes_min), "checked_rows": min(Nq, 64)})
    if backend == "cpu":
        e["bytes_counted"] = float(bytes_)
    if status != "ok":
        e.update({"error_occurred": True, "error_message": msg})
        return e
    intensity = flops / bytes_
    t_compute = flops / (speed_tflops * 1e12)
    t_mem = bytes_ / (bw_gbps * 1e9)
    t = max(t_compute, t_mem) * rng.uniform(1.0, 1.15) * 1e3
    cv = rng.uniform(0.005, 0.03)
    e.update({"real_time": t, "cpu_time": t, "time_ms": t, "time_ms_min": t * (1 - cv),
              "time_ms_max": t * (1 + 2 * cv), "time_cv": cv, "tflops": flops / (t * 1e-3) / 1e12,
              "gbps": bytes_ / (t * 1e-3) / 1e9, "intensity": intensity,
              "rel_err": rng.uniform(1e-7, 5e-7) if dtype == "fp32" else rng.uniform(1e-3, 4e-3),
              "max_abs_err": 1e-6, "lse_err": 2e-7 if variant.startswith("flash") else 0.0,
              "tolerance": 1e-5 if dtype == "fp32" else 2e-2, "err_ok": True})
    return e


ALL_MASKS = ["none", "causal", "local", "global"]


def row(name, backend, summary, tags, dtypes, math="softmax", lse=True, masks=ALL_MASKS, head_dims=(),
        gqa=True, max_nq=None):
    """One registry row as the harness writes it into context.variants (docs/json_schema.md)."""
    return {"name": name, "backend": backend, "math": math, "summary": summary, "writes_lse": lse,
            "tags": list(tags), "capabilities": {"dtypes": list(dtypes), "masks": list(masks),
                                                 "head_dims": list(head_dims), "gqa": gqa, "max_nq": max_nq}}


# The registry of a CPU build (kernels/cpu/cpu_variants.cpp), in registry order.
CPU_ROWS = [
    row("naive", "cpu", "S = QK^T and P = softmax(S) materialised in memory, then O = PV",
        ["baseline", "unfused"], ["fp32"], lse=False),
    row("naive_gqa_expand", "cpu", "copies K/V to H heads (GQA baseline), then naive",
        ["unfused", "gqa"], ["fp32"], lse=False),
    row("flash1", "cpu", "FlashAttention-1: KV-outer loop, O/l/m read and written per block",
        ["tiled", "fused"], ["fp32"], lse=False),
    row("flash2", "cpu", "FlashAttention-2: Q-outer loop, online softmax, one write of O and lse, native GQA",
        ["tiled", "fused"], ["fp32"]),
    row("sparse", "cpu", "flash2 visiting only key tiles under the local window or global tokens",
        ["tiled", "fused"], ["fp32"], masks=["causal", "local", "global"]),
    row("linear", "cpu", "linear attention, elu+1 features: K^T V state (non-causal), chunked prefix (causal)",
        ["tiled", "fused"], ["fp32"], math="linear", lse=False, masks=["none", "causal"]),
]
# A CUDA build lists both backends' rows: the CPU ones, then these.
GPU_DTYPES = ["fp32", "fp16", "bf16"]
CUDA_ROWS = [
    row("naive", "cuda", "QK^T, masked softmax, PV as three kernels; S and P (fp32) in global memory",
        ["unfused"], GPU_DTYPES),
    row("naive_gqa_expand", "cuda", "naive after copying K and V to all H query heads (GQA the wasteful way)",
        ["unfused", "gqa"], GPU_DTYPES),
    row("cublas_unfused", "cuda", "baseline: cuBLAS batched GEMMs (fp32 compute) around a masked softmax kernel",
        ["baseline", "unfused", "library"], GPU_DTYPES),
    row("flash1", "cuda", "FlashAttention-1 Algorithm 1: KV-outer loop, O/l/m through global memory per KV block",
        ["tiled", "fused"], GPU_DTYPES, head_dims=[64, 128]),
    row("linear", "cuda", "linear attention, phi = elu + 1: KV-state pass then output pass; causal: chunked scan",
        ["tiled", "fused"], GPU_DTYPES, math="linear", lse=False, masks=["none", "causal"]),
    row("flash2", "cuda", "FlashAttention-2 on tensor cores (mma.sync, ldmatrix, cp.async double buffer), "
        "causal tile bound, one write of O and lse", ["tiled", "fused"], GPU_DTYPES, head_dims=[64, 128]),
    row("sparse", "cuda", "flash2 kernel visiting only key tiles under the local window or global tokens",
        ["tiled", "fused"], GPU_DTYPES, masks=["causal", "local", "global"], head_dims=[64, 128]),
    row("flash2_gqa_packed", "cuda", "flash2 with all query heads of a KV group packed into one CTA's rows",
        ["tiled", "fused", "gqa"], GPU_DTYPES, head_dims=[64, 128]),
    row("flash2_splitkv", "cuda", "decode (Nq <= 16): KV range split over CTAs, partial O/lse merged by a "
        "second kernel; fixed 16x64 tiles", ["fused", "decode", "gqa"], GPU_DTYPES, head_dims=[64, 128],
        max_nq=16),
]


def context(backend, device, ceilings, preset):
    c = {"date": "2026-11-29T09:00:00+00:00", "host_name": "builder", "executable": "build/bin/attnbench",
         "num_cpus": 2, "mhz_per_cpu": 2400, "cpu_scaling_enabled": False,
         "caches": [{"type": "Data", "level": 1, "size": 32768, "num_sharing": 1}],
         "load_avg": [0.5, 0.4, 0.3], "library_build_type": "release",
         "attnbench_version": "0.1.0", "backend": backend, "device": device, "host": "builder",
         "git_commit": "1c2d7ce5a3f0b9e8d7c6b5a4f3e2d1c0b9a8f7e6", "git_dirty": False,
         "compiler": "GNU 12.2.0", "build_type": "Release", "preset": preset,
         "command_line": f"attnbench sweep --preset {preset} --backend {backend}",
         "timing": {"repetitions": 5, "aggregate": "median", "l2_flush": "per launch" if backend == "cuda" else "none",
                    "clock": "cuda_events" if backend == "cuda" else "steady_clock"}}
    if backend == "cpu":
        c["device_info"] = {"cpu_model": device, "threads": 2}
    else:
        c["device_info"] = {"name": device, "compute_capability": "9.0", "sm_count": 132,
                            "sm_clock_mhz": 1980, "mem_clock_mhz": 2619, "bus_width_bits": 5120,
                            "l2_bytes": 52428800, "mem_bytes": 85899345920, "driver_version": "560.35",
                            "runtime_version": "12.6", "cublas_version": "12.6.4"}
    if ceilings is not None:
        c["ceilings"] = ceilings
    c["variants"] = copy.deepcopy(CPU_ROWS if backend == "cpu" else CPU_ROWS + CUDA_ROWS)
    return c


def cpu_small(rng):
    bms = []
    speeds = {"naive": (0.004, 6.0), "flash1": (0.012, 8.0), "flash2": (0.02, 9.0)}
    for d in (32, 64):
        for mask in ("none", "causal"):
            for n in (128, 256, 512):
                for v, (tf, bw) in speeds.items():
                    if v == "naive" and n == 512 and d == 64 and mask == "none":
                        bms.append(entry(v, "cpu", "fp32", "seq", 1, 4, 4, n, n, d, mask, 32, 32, tf, bw, rng,
                                         status="skipped", msg="needs 268435456 bytes of workspace, limit 134217728"))
                        continue
                    bms.append(entry(v, "cpu", "fp32", "seq", 1, 4, 4, n, n, d, mask, 32, 32, tf * (n / 512) ** 0.2, bw, rng))
    for br in (16, 32, 64):
        for bc in (16, 32, 64):
            for v in ("flash1", "flash2"):
                tf, bw = speeds[v]
                bms.append(entry(v, "cpu", "fp32", "tiles", 1, 4, 4, 256, 256, 64, "causal", br, bc,
                                 tf * (1 - abs(math.log2(br / 32)) * 0.2) * (1 - abs(math.log2(bc / 32)) * 0.1), bw, rng))
    for hkv in (1, 2, 4, 8):
        for v in ("flash1", "flash2"):
            tf, bw = speeds[v]
            bms.append(entry(v, "cpu", "fp32", "gqa", 1, 8, hkv, 256, 256, 64, "causal", 32, 32, tf, bw, rng))
    for nkv in (256, 512, 1024, 2048):
        for v in ("naive", "flash2"):
            tf, bw = speeds[v]
            bms.append(entry(v, "cpu", "fp32", "decode", 1, 8, 2, 1, nkv, 64, "causal", 16, 64, tf, bw, rng))
    bms.append(entry("flash2", "cpu", "fp32", "masks", 1, 4, 4, 256, 256, 64, "local:32,0", 32, 32, 0.02, 9.0, rng,
                     status="failed", msg="rel_err 3.1e-02 above tolerance 1e-05"))
    ceil = {"measured": {"bandwidth_gbps": 11.5, "tflops": {"fp32": 0.085}}}
    return {"context": context("cpu", "Intel(R) Xeon(R) CPU @ 2.20GHz", ceil, "quick"), "benchmarks": bms}


def cuda_multi(rng):
    bms = []
    peaks = {"fp16": 989.0, "bf16": 989.0, "fp32": 67.0}
    eff = {"cublas_unfused": 0.35, "flash1": 0.45, "flash2": 0.7}
    for dtype in ("fp16", "bf16", "fp32"):
        for d in (64, 128):
            for mask in ("none", "causal"):
                for n in (512, 1024, 2048, 4096):
                    for v, ef in eff.items():
                        if dtype == "fp32" and v == "flash2" and d == 128:
                            bms.append(entry(v, "cuda", dtype, "seq", 4, 16, 16, n, n, d, mask, 64, 64, 1, 1, rng,
                                             status="skipped", msg="fp32 d=128 tile does not fit in shared memory"))
                            continue
                        bms.append(entry(v, "cuda", dtype, "seq", 4, 16, 16, n, n, d, mask, 128 if dtype != "fp32" else 64, 64,
                                         peaks[dtype] * ef * min(1.0, n / 4096) ** 0.3, 2900.0, rng))
    for br in (64, 128):
        for bc in (32, 64, 128):
            bms.append(entry("flash2", "cuda", "fp16", "tiles", 4, 16, 16, 2048, 2048, 128, "causal", br, bc,
                             600 * (1 if (br, bc) == (128, 64) else 0.8), 2900.0, rng))
    for hkv in (1, 2, 4, 8, 16):
        for v in ("flash2", "cublas_unfused"):
            bms.append(entry(v, "cuda", "fp16", "gqa", 4, 16, hkv, 2048, 2048, 128, "causal", 128, 64,
                             peaks["fp16"] * eff[v], 2900.0, rng))
    for nkv in (1024, 4096, 16384, 65536):
        for v in ("flash2", "cublas_unfused"):
            bms.append(entry(v, "cuda", "fp16", "decode", 8, 32, 8, 1, nkv, 128, "causal", 16, 128,
                             peaks["fp16"] * eff[v], 2900.0 * (0.9 if v == "flash2" else 0.5), rng))
    ceil = {"measured": {"bandwidth_gbps": 3010.0, "tflops": {"fp32": 51.0, "tf32": 378.0, "fp16": 720.0, "bf16": 715.0}},
            "theoretical": {"bandwidth_gbps": 3352.0, "tflops": {"fp32": 66.9, "tf32": 494.7, "fp16": 989.4, "bf16": 989.4}}}
    doc = {"context": context("cuda", "NVIDIA H100 80GB HBM3", ceil, "full"), "benchmarks": bms}
    doc["context"]["kernel_resources"] = [{"kernel": "flash2_fwd_kernel<128,64,128>", "arch": "sm_90", "registers": 168,
                                           "smem_bytes": 49152, "stack_bytes": 0, "spill_store_bytes": 0,
                                           "spill_load_bytes": 0}]
    return doc


def with_ncu(doc, rng):
    doc = copy.deepcopy(doc)
    doc["benchmarks"] = [b for b in doc["benchmarks"] if b["dtype"] == "fp16" and b["group"] == "seq"]
    for b in doc["benchmarks"]:
        if b["status"] != "ok":
            continue
        f = {"cublas_unfused": 1.05, "flash1": 1.3, "flash2": 0.92}[b["variant"]]
        b["dram_bytes_measured"] = b["bytes"] * f * rng.uniform(0.97, 1.03)
        b["l2_bytes_measured"] = b["bytes"] * 3.1
        b["kernel_time_ncu"] = b["time_ms"] * 1.02
    return doc


def write(name, obj, raw=None):
    """Writes obj; one entry per name, like the harness (a configuration in two groups runs once)."""
    if obj is not None and "benchmarks" in obj:
        seen = set()
        obj = dict(obj, benchmarks=[b for b in obj["benchmarks"] if not (b["name"] in seen or seen.add(b["name"]))])
    p = os.path.join(HERE, name)
    with open(p, "w") as f:
        if raw is not None:
            f.write(raw)
        else:
            json.dump(obj, f, indent=1)
            f.write("\n")


def main():
    rng = random.Random(5)
    cpu = cpu_small(rng)
    write("cpu_small.json", cpu)
    cuda = cuda_multi(rng)
    write("cuda_multi.json", cuda)
    write("cuda_ncu.json", with_ncu(cuda, rng))
    # cpu_small_slower.json and cpu_small_noise.json (compare's runs): generated_fixtures.py
    # results log: a context line, then one entry per line
    lines = [json.dumps({"context": cpu["context"]})] + [json.dumps(b) for b in cpu["benchmarks"][:20]]
    write("cpu_small.log.jsonl", None, raw="\n".join(lines) + "\n")
    # cpu_no_ceilings.json and the malformed files: tests/python/generated_fixtures.py makes them
    # from cpu_small.json (and its log) when a test asks for them
    # hand edit of the harness's own output (cpu_harness.json, written by attnbench from
    # sweep_cpu_small.json): Nsight-style measured bytes on the flash2 entries only
    harness = os.path.join(HERE, "cpu_harness.json")
    if os.path.exists(harness):
        doc = json.load(open(harness))
        for b in doc["benchmarks"]:
            if b["variant"] == "flash2" and b["status"] == "ok":
                b["dram_bytes_measured"] = b["bytes"] * 1.25
                b["l2_bytes_measured"] = b["bytes"] * 2.0
                b["kernel_time_ncu"] = b["time_ms"]
        write("cpu_harness_ncu.json", doc)


if __name__ == "__main__":
    main()

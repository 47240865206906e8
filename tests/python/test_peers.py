"""scripts/peers.py with the real PyTorch on the CPU: its entries pass the harness's own
entry schema (the real `attnbench merge`), its outputs pass the fp64 check, merge and the
report take them; a deliberately misaligned mask is caught. Also the harness's FLOP/byte models
against an independent count here, and the GQA chart's one-tile-per-variant selection."""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT, SCRIPTS

torch = pytest.importorskip("torch", reason="PyTorch not installed (scripts/setup.sh installs it)")

PEERS = os.path.join(SCRIPTS, "peers.py")
BIN = os.environ.get("ATTNBENCH_BIN", os.path.join(ROOT, "build", "bin", "attnbench"))
needs_bin = pytest.mark.skipif(not os.access(BIN, os.X_OK), reason=f"{BIN} not built")
# Decode-like Nq < Nkv (the bottom-right alignment matters), GQA, and every mask kind.
SWEEP = ["--backend", "cpu", "--nq", "32", "--nkv", "96", "--heads", "4", "--kv-heads", "4,2", "--head-dim", "32",
         "--mask", "none,causal,local:15,8+global:4", "--variant", "flash2", "--no-ceilings", "--reps", "2"]
SDPA = "torch_sdpa,torch_sdpa_math,torch_sdpa_efficient"

import peers


def run_peers(problems, out, *extra):
    r = subprocess.run([sys.executable, PEERS, "--problems", str(problems), "--out", str(out), "--reps", "2",
                        "--rep-time", "0.002", "--threads", "1", *extra], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.load(open(out))["benchmarks"]


def harness_sweep(tmp_path_factory, name: str, args: list[str]):
    """The path of a CPU sweep's results with these arguments (skipped without the binary)."""
    if not os.access(BIN, os.X_OK):
        pytest.skip(f"{BIN} not built")
    out = tmp_path_factory.mktemp(name) / "sweep.json"
    r = subprocess.run([BIN, "sweep", *args, "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return out


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    return harness_sweep(tmp_path_factory, "peers", SWEEP)


@pytest.fixture(scope="module")
def sdpa(sweep):
    out = sweep.parent / "sdpa.peers.json"
    return out, run_peers(sweep, out, "--variants", SDPA)


def test_every_problem_and_variant_is_an_entry_and_passes_the_fp64_check(sweep, sdpa):
    _, entries = sdpa
    problems = {(e["Hkv"], e["mask"]) for e in json.load(open(sweep))["benchmarks"]}
    assert len(problems) == 6
    got = {(e["variant"], e["Hkv"], e["mask"]): e for e in entries}
    assert len(got) == len(entries) == 6 * 3  # nothing dropped, nothing twice
    for (variant, _, _), e in got.items():
        if variant == "torch_sdpa_efficient":  # no CPU kernel: skipped with torch's reason
            assert e["status"] == "skipped" and "No viable backend" in e["error_message"]
            continue
        assert e["status"] == "ok", e
        assert e["err_ok"] is True and 0 <= e["rel_err"] <= e["tolerance"] == 1e-4
        assert e["checked_rows"] == 4 * 32  # every row of a small problem
        assert e["time_ms"] > 0 and e["tflops"] == pytest.approx(e["flops"] / e["time_ms"] / 1e9)
        assert e["backend"] == "torch" and e["peer"] is True and e["peer_device"] == "cpu"


def test_flops_and_bytes_are_the_harness_numbers(sweep, sdpa):
    _, entries = sdpa
    ours = {(e["Hkv"], e["mask"]): e for e in json.load(open(sweep))["benchmarks"]}
    for e in entries:
        a = ours[(e["Hkv"], e["mask"])]
        assert e["flops"] == a["flops"] and e["bytes_min"] == a["bytes_min"] == e["bytes"]


def test_problems_of_refuses_entries_of_one_problem_that_disagree(sweep, tmp_path):
    """The models come from the sweep: two softmax rows of one problem must report the same
    useful FLOPs, minimal bytes and tolerance (a second row with one visible pair more fails)."""
    doc = json.load(open(sweep))
    peers.problems_of(str(sweep))  # the harness's numbers pass
    twin = dict(doc["benchmarks"][1], variant="flash1", name=doc["benchmarks"][1]["name"] + "/twin")
    doc["benchmarks"].append(dict(twin))
    ok = tmp_path / "ok.json"
    ok.write_text(json.dumps(doc))
    peers.problems_of(str(ok))
    for key, delta in (("flops", 4.0), ("bytes_min", 2.0), ("tolerance", 1e-3)):
        doc["benchmarks"][-1] = dict(twin, **{key: twin[key] + delta})
        bad = tmp_path / f"bad_{key}.json"
        bad.write_text(json.dumps(doc))
        with pytest.raises(peers.InputFault, match=f"{key} .* differs from"):
            peers.problems_of(str(bad))


# The independent check of the harness's models (the script itself keeps none): useful FLOPs
# from this file's own count of visible pairs (peers.visible_pairs_per_head, itself checked
# against the mask matrix below), minimal bytes from the element sizes of core/problem.cpp.
ELEMENT_BYTES = {"fp32": 4, "fp16": 2, "bf16": 2, "e4m3": 1}
OUTPUT_BYTES = {"e4m3": 2}  # O in bf16 for fp8 inputs (core/problem.hpp output_dtype)


# The backward's useful FLOPs by the FA/cuDNN benchmark convention: 5 products per visible pair
# against the forward's 2 (docs/backward.md).
PASS_FACTOR = {"fwd": 1.0, "bwd": 2.5, "fwd_bwd": 3.5}


def independent_flops(p) -> float:
    return 4.0 * p.d * peers.visible_pairs_per_head(p) * p.B * p.H * PASS_FACTOR[p.pass_]


def independent_bytes_min(p) -> float:
    e_in = ELEMENT_BYTES[p.dtype]
    e_out = OUTPUT_BYTES.get(p.dtype, e_in)
    return float(e_in * p.B * (p.H * p.Nq + 2 * p.Hkv * p.Nkv) * p.d + e_out * p.B * p.H * p.Nq * p.d)


def is_results_file(path: str) -> bool:
    try:
        doc = json.load(open(path))
    except ValueError:
        return False
    return isinstance(doc, dict) and "context" in doc and "benchmarks" in doc


def test_the_harness_models_match_an_independent_count():
    """Every problem of every committed result file (real runs; the fixtures' numbers are made up)."""
    files = [os.path.join(d, f) for d, _, fs in os.walk(os.path.join(ROOT, "results")) for f in fs
             if f.endswith(".json") and not f.endswith(".peers.json")]
    found = 0
    peers.ATTNBENCH_BIN[:] = [BIN] if os.access(BIN, os.X_OK) else []  # sparse masks: `attnbench mask`
    for f in files:
        if not is_results_file(f):  # a GPU check folder also holds ceilings.json, kernel_resources.json
            continue
        _, probs = peers.problems_of(f)
        for p in probs:
            if not p.mask_error and p.flops is not None:
                try:
                    count = independent_flops(p)
                except peers.Unsupported:  # no binary, or a layout file of another machine
                    continue
                assert p.flops == pytest.approx(count, rel=1e-12), (f, p)
                found += 1
            if p.bytes_min is not None:
                assert p.bytes_min == pytest.approx(independent_bytes_min(p), rel=1e-12), (f, p)
    assert found > 0


def test_the_independent_count_can_fail():
    """Control: a count that forgets the bottom-right alignment (the misaligned mask) differs."""
    p = peers.Problem("g", "fp32", 1, 2, 2, 32, 96, 8, "causal", flops=None)
    import numpy as np
    misaligned = 4.0 * p.d * int(peers.visible_matrix(p, np.arange(p.Nq), misalign=True).sum()) * p.B * p.H
    assert misaligned != independent_flops(p)
    assert independent_bytes_min(peers.Problem("g", "e4m3", 1, 2, 1, 3, 5, 4, "none")) == 1 * (24 + 40) + 2 * 24


def test_visible_pairs_agree_with_the_mask_matrix():
    import numpy as np
    for nq, nkv, mask in ((32, 96, "causal"), (96, 32, "causal"), (64, 64, "local:5,3+global:7"),
                          (4, 100, "local:10,0"), (50, 50, "global:3"), (1, 40, "causal")):
        p = peers.Problem("g", "fp32", 1, 1, 1, nq, nkv, 8, mask)
        assert peers.visible_pairs_per_head(p) == int(peers.visible_matrix(p, np.arange(nq)).sum()), (nq, nkv, mask)
    p = peers.Problem("g", "fp32", 1, 1, 1, 4, 8, 8, "causal")  # bottom-right: row 0 sees keys 0..4
    assert peers.visible_matrix(p, np.arange(4)).sum(axis=1).tolist() == [5, 6, 7, 8]


def test_misaligned_mask_is_caught_by_the_error_check(sweep, tmp_path):
    """Negative control: top-left instead of bottom-right alignment gives wrong rows."""
    entries = run_peers(sweep, tmp_path / "bad.json", "--variants", "torch_sdpa", "--misalign-masks")
    by_mask = {}
    for e in entries:
        by_mask.setdefault(e["mask"], []).append(e)
    assert all(e["err_ok"] is True for e in by_mask["none"])  # no mask, nothing to misalign
    for m in ("causal", "local:15,8+global:4"):
        assert all(e["status"] == "ok" and e["err_ok"] is False and e["rel_err"] > 0.1 for e in by_mask[m]), m


@needs_bin
def test_merge_and_report_accept_the_peers(sweep, sdpa, tmp_path):
    path, _ = sdpa
    merged = tmp_path / "merged.json"
    r = subprocess.run([BIN, "merge", str(sweep), str(path), "--out", str(merged)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr  # the harness's entry schema, on every peer entry
    doc = json.load(open(merged))
    assert sum(1 for e in doc["benchmarks"] if e.get("peer")) == 18
    report = os.path.join(SCRIPTS, "attnbench_report.py")
    for src, sub in ((merged, "merged"), (path, "alone")):
        r = subprocess.run([sys.executable, report, "report", str(src), "--out", str(tmp_path / sub)],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
    text = (tmp_path / "merged" / "report.md").read_text()
    versus = text.split("## Versus libraries")[1].split("\n## ")[0]
    assert versus.count("| fp32 | B1 H4 Hkv") == 6  # one row per problem
    assert "torch_sdpa" in versus and "flash2 (Br" in versus
    assert "torch_sdpa_efficient" in text.split("## Skipped and failed")[1]  # skipped, listed with the reason


def test_merge_refuses_a_peer_entry_without_its_fields(sdpa, tmp_path):
    """Negative control of the schema step: the same entries with a field gone are refused."""
    if not os.access(BIN, os.X_OK):
        pytest.skip(f"{BIN} not built")
    path, _ = sdpa
    doc = json.load(open(path))
    del doc["benchmarks"][0]["checked_rows"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    r = subprocess.run([BIN, "merge", str(bad), "--out", str(tmp_path / "m.json")], capture_output=True, text=True)
    assert r.returncode == 2 and "checked_rows" in r.stderr


def test_flex_attention_runs_compiled_or_says_why(sweep, tmp_path):
    """FlexAttention on the CPU needs inductor (a C++ compiler): ok and checked, or skipped with the reason.
    per-mask (the quick preset's CPU default) compiles one problem per mask kind, 12-18 s each: the
    GQA one of each pair here (equal FLOPs), the MHA one skipped naming it."""
    doc = json.load(open(sweep))
    odd = dict(doc["benchmarks"][0], mask="spiral:3", name="x/spiral")  # a mask peers.py cannot build, last
    doc["benchmarks"].append(odd)
    problems = tmp_path / "problems.json"
    problems.write_text(json.dumps(doc))
    entries = run_peers(problems, tmp_path / "flex.json", "--variants", "torch_flex", "--flex-budget-s", "120",
                        "--flex-problems", "per-mask")
    assert len(entries) == 7
    assert entries[-1]["status"] == "skipped" and "peers.py builds" in entries[-1]["error_message"]
    entries = entries[:-1]
    by_problem = {(e["Hkv"], e["mask"]): e for e in entries}
    for mask in ("none", "causal", "local:15,8+global:4"):
        ran, other = by_problem[(2, mask)], by_problem[(4, mask)]
        if ran["status"] == "ok":
            assert ran["err_ok"] is True and ran["compile_ms"] > 0
        else:
            assert ran["status"] == "skipped" and ("compile" in ran["error_message"] or "Flex" in ran["error_message"])
        assert other["status"] == "skipped" and "per-mask" in other["error_message"] \
            and "Hkv2" in other["error_message"] and mask in other["error_message"], other["error_message"]


def test_flex_classes_and_their_representatives():
    def p(nq: int, hkv: int, mask: str, d: int = 64):
        q = peers.Problem("g", "fp32", 1, 8, hkv, nq, 1024, d, mask)
        flops = None if q.mask_error or q.m.kind == "sparse" else independent_flops(q)
        return peers.Problem(**{**q.__dict__, "flops": flops})
    problems = [p(1024, 8, "causal"), p(1024, 8, "causal", 128), p(1, 8, "causal", 128), p(4, 1, "causal", 128),
                p(1024, 8, "local:127,127+global:16"), p(1024, 2, "none"), p(1024, 8, "none"),
                p(1024, 8, "random:64,1")]
    reps = peers.flex_representatives(problems)
    assert reps == {"causal": problems[1], "causal, decode": problems[3], "local+global": problems[4],
                    "none": problems[5], "sparse": problems[7]}


def test_bad_input_is_one_line_and_status_2(tmp_path):
    p = tmp_path / "x.json"
    p.write_text('{"context": {}, "benchmarks": []}')
    r = subprocess.run([sys.executable, PEERS, "--problems", str(p), "--out", str(tmp_path / "o.json")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "no attnbench entries" in r.stderr


def test_an_output_that_cannot_be_written_is_refused_before_any_run(fx, tmp_path):
    r = subprocess.run([sys.executable, PEERS, "--problems", fx("cpu_small.json"), "--out", "/proc/peers.json"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "/proc/peers.json" in r.stderr, r.stderr


@pytest.mark.parametrize("field", ["Nq", "flops", "bytes_min"])
def test_integers_beyond_the_float_range_are_bad_input(fx, tmp_path, field):
    doc = json.load(open(fx("cpu_small.json")))
    doc["benchmarks"][0][field] = 10**400
    p = tmp_path / "huge.json"
    p.write_text(json.dumps(doc))
    r = subprocess.run([sys.executable, PEERS, "--problems", str(p), "--out", str(tmp_path / "o.json")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "benchmarks[0]" in r.stderr, r.stderr


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a CUDA device")
def test_cuda_peers_without_a_device_are_skipped_with_the_reason(sweep, tmp_path):
    """What scripts/gpu_check.sh's peers step writes when torch sees no GPU: entries, not a crash."""
    entries = run_peers(sweep, tmp_path / "cuda.json", "--device", "cuda", "--variants", "torch_sdpa_flash,flash_attn")
    assert len(entries) == 12
    assert all(e["status"] == "skipped" and "no CUDA device" in e["error_message"] for e in entries)
    r = subprocess.run([BIN, "merge", str(sweep), str(tmp_path / "cuda.json"), "--out", str(tmp_path / "m.json")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_last_level_cache_sums_distinct_instances(tmp_path):
    for cpu, shared in ((0, "0-1"), (1, "0-1"), (2, "2-3"), (3, "2-3")):
        for idx, (level, typ, size) in enumerate(((1, "Data", "48K"), (1, "Instruction", "32K"), (3, "Unified", "32768K"))):
            d = tmp_path / f"cpu{cpu}" / "cache" / f"index{idx}"
            d.mkdir(parents=True)
            for f, v in (("level", level), ("type", typ), ("size", size), ("shared_cpu_list", shared if level == 3 else str(cpu))):
                (d / f).write_text(f"{v}\n")
    nbytes, source = peers.last_level_cache(str(tmp_path))
    visible = set(os.sched_getaffinity(0)) & {0, 1, 2, 3}
    instances = len({c // 2 for c in visible})
    if instances:
        assert nbytes == instances * (32 << 20) and source == f"sysfs: {instances} x L3"
    else:  # this process runs on none of cpu0-3
        assert (nbytes, source) == (128 << 20, "assumed 128 MiB")
    assert peers.last_level_cache(str(tmp_path / "none")) == (128 << 20, "assumed 128 MiB")


def test_cold_cpu_timing_evicts_and_says_so(sweep, tmp_path):
    out = tmp_path / "cold.json"
    entries = run_peers(sweep, out, "--variants", "torch_sdpa", "--cpu-cache", "cold")
    assert all(e["status"] == "ok" and e["err_ok"] for e in entries)
    assert json.load(open(out))["context"]["timing"]["l2_flush"].startswith("LLC eviction before every run")


def test_a_mask_this_script_cannot_build_is_skipped_with_the_reason(sweep, tmp_path):
    doc = json.load(open(sweep))
    e = dict(doc["benchmarks"][0], mask="spiral:3", name="flash2/spiral")  # a mask of a newer harness
    doc["benchmarks"] = [e]
    src = tmp_path / "spiral.json"
    src.write_text(json.dumps(doc))
    entries = run_peers(src, tmp_path / "s.json", "--variants", "torch_sdpa,torch_flex")
    assert [(x["variant"], x["status"]) for x in entries] == [("torch_sdpa", "skipped"), ("torch_flex", "skipped")]
    # The FLOPs are still the sweep's (the harness knows the mask; this script only cannot build it).
    assert all("spiral:3" in x["error_message"] and x["flops"] == e["flops"] for x in entries)


# ---- the backward (docs/backward.md) ---------------------------------------------------

@pytest.fixture(scope="module")
def bwd_sweep(tmp_path_factory):
    args = [a if a != "flash2" else "flash2,naive" for a in SWEEP] + ["--pass", "fwd,bwd,fwd_bwd"]
    return harness_sweep(tmp_path_factory, "peers_bwd", args)


def test_backward_peers_pass_the_fp64_gradient_check_with_the_harness_flops(bwd_sweep, tmp_path):
    entries = run_peers(bwd_sweep, tmp_path / "bwd.json", "--variants", "torch_sdpa,torch_sdpa_math")
    ours = {(e["Hkv"], e["mask"], e["pass"]): e for e in json.load(open(bwd_sweep))["benchmarks"]}
    assert {k[2] for k in ours} == {"fwd", "bwd", "fwd_bwd"}
    seen = set()
    for e in entries:
        a = ours[(e["Hkv"], e["mask"], e["pass"])]
        assert e["flops"] == a["flops"]  # 2.5x / 3.5x the forward's, as the harness
        if e["pass"] == "fwd":
            continue
        assert e["name"].endswith(f"/pass:{e['pass']}/on:cpu")
        assert e["status"] == "ok", e  # the math backend forced, as the default dispatch
        assert e["err_ok"] is True and 0 <= e["grad_err"] <= e["grad_tolerance"] == 1e-4
        assert e["grad_err"] == max(e["dq_err"], e["dk_err"], e["dv_err"]) and e["grad_nonfinite"] == 0
        seen.add((e["variant"], e["mask"], e["pass"], e["Hkv"]))
    assert len(seen) == 2 * 3 * 2 * 2


def test_backward_peers_with_misaligned_masks_fail_the_gradient_check(bwd_sweep, tmp_path):
    """Negative control of the gradient check: top-left aligned masks give wrong gradients."""
    entries = run_peers(bwd_sweep, tmp_path / "bad.json", "--variants", "torch_sdpa", "--misalign-masks")
    for e in entries:
        if e["pass"] == "fwd":
            continue
        assert e["status"] == "ok"
        assert e["err_ok"] is (e["mask"] == "none"), e["name"]
        if e["mask"] != "none":
            assert e["grad_err"] > 0.1


@needs_bin
def test_merge_accepts_backward_peers(bwd_sweep, tmp_path):
    out = tmp_path / "bwd.json"
    run_peers(bwd_sweep, out, "--variants", "torch_sdpa")
    merged = tmp_path / "merged.json"
    r = subprocess.run([BIN, "merge", str(bwd_sweep), str(out), "--out", str(merged)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    passes = {e["pass"] for e in json.load(open(merged))["benchmarks"] if e.get("peer")}
    assert passes == {"fwd", "bwd", "fwd_bwd"}


@pytest.mark.parametrize("pass_", ["bwd", "fwd_bwd"])
def test_flex_backward_on_the_cpu_is_skipped_saying_why_and_other_peers_name_who_runs_it(pass_):
    """torch raises NotImplementedError for FlexAttention with requires_grad inputs on the CPU: the
    entry is skipped with that reason, before any compile; a peer without a backward names those
    that have one; a forced SDPA backend runs its backward (math) or is skipped with torch's reason
    (efficient: no CPU kernel)."""
    p = peers.Problem(group="train", dtype="fp32", B=1, H=2, Hkv=2, Nq=64, Nkv=64, d=16, mask="causal",
                      flops=1.0, bytes_min=1.0, tolerance=1e-4, grad_tolerance=1e-4, pass_=pass_)
    inputs = peers.make_inputs(p, "cpu")
    args = argparse.Namespace(reps=1, rep_time=0.001, row_models={})
    pe = peers.Peers("cpu", False, 1.0)
    e = peers.run_one(pe, "torch", "torch_flex", p, inputs, {}, args, "torch", None)
    assert e["status"] == "skipped" and "no backward on the CPU" in e["error_message"]
    assert pe.flex_compiled == 0
    e = peers.run_one(pe, "flash_attn", "flash_attn", p, inputs, {}, args, "flash_attn", None)
    assert e["status"] == "skipped" and "torch_sdpa, torch_sdpa_flash" in e["error_message"]
    for v in ("torch_sdpa", "torch_sdpa_math"):  # control: they run
        e = peers.run_one(pe, "torch", v, p, inputs, {}, args, "torch", None)
        assert e["status"] == "ok" and e["err_ok"] is True, e
    # A backend the CPU lacks: skipped with torch's reason.
    e = peers.run_one(pe, "torch", "torch_sdpa_efficient", p, inputs, {}, args, "torch", None)
    assert e["status"] == "skipped" and "torch on cpu" in e["error_message"], e


def test_a_gradient_reference_that_fails_fails_its_entry_only(monkeypatch):
    """An fp64 reference that cannot be computed (e.g. out of memory on the GPU) fails that entry
    with the reason; the next problem computes its own."""
    p = peers.Problem(group="train", dtype="fp32", B=1, H=2, Hkv=2, Nq=64, Nkv=64, d=16, mask="causal",
                      flops=1.0, bytes_min=1.0, tolerance=1e-4, grad_tolerance=1e-4, pass_="bwd")
    inputs = peers.make_inputs(p, "cpu")
    args = argparse.Namespace(reps=1, rep_time=0.001, row_models={})
    pe = peers.Peers("cpu", False, 1.0)
    real = peers.reference_grads

    def out_of_memory(*a):
        raise RuntimeError("CUDA out of memory (planted)")

    monkeypatch.setattr(peers, "reference_grads", out_of_memory)
    cache: dict = {}
    e = peers.run_one(pe, "torch", "torch_sdpa", p, inputs, cache, args, "torch", None)
    assert e["status"] == "failed" and "gradient reference" in e["error_message"] and "planted" in e["error_message"]
    assert not cache
    monkeypatch.setattr(peers, "reference_grads", real)
    e = peers.run_one(pe, "torch", "torch_sdpa", p, inputs, cache, args, "torch", None)
    assert e["status"] == "ok" and e["err_ok"] is True, e


# ---- masks with sparse terms: the harness's own, from `attnbench mask` -------------------------

@pytest.fixture(scope="module")
def sparse_sweep(tmp_path_factory):
    return harness_sweep(tmp_path_factory, "peers_sparse",
                         ["--backend", "cpu", "--variant", "flash2", "--nq", "64", "--nkv", "96", "--heads", "4",
                          "--kv-heads", "2", "--head-dim", "32", "--mask",
                          "random:16,2,causal+strided:4,8,local:8,0+random:16,1+global:3", "--pass", "fwd,bwd",
                          "--no-ceilings", "--reps", "1"])


def test_sparse_masks_run_the_harness_mask_and_pass_the_fp64_checks(sparse_sweep, tmp_path):
    entries = run_peers(sparse_sweep, tmp_path / "p.json", "--variants", "torch_sdpa,torch_sdpa_math")
    assert len(entries) == 3 * 2 * 2
    assert all(e["status"] == "ok" and e["err_ok"] is True for e in entries), entries
    # The peers' FLOPs are the sweep's, whose model counts the same visible pairs.
    p = peers.Problem("g", "fp32", 1, 4, 2, 64, 96, 32, "causal+strided:4,8")
    peers.ATTNBENCH_BIN[:] = [BIN]
    vis = peers.sparse_visibility(p)
    assert vis.shape == (1, 64, 96) and 0 < vis.sum() < 64 * 96
    assert peers.visible_pairs_per_head(p) == int(vis.sum())


def test_a_shifted_sparse_mask_fails_the_checks(sparse_sweep, tmp_path):
    """Negative control: the peer given the mask one key to the right (the reference keeps it)."""
    entries = run_peers(sparse_sweep, tmp_path / "bad.json", "--variants", "torch_sdpa", "--misalign-masks")
    assert entries and all(e["status"] == "ok" and e["err_ok"] is False for e in entries), entries


def test_sparse_masks_without_the_binary_are_skipped_saying_why(sparse_sweep, tmp_path):
    entries = run_peers(sparse_sweep, tmp_path / "nobin.json", "--variants", "torch_sdpa",
                        "--attnbench", str(tmp_path / "missing"))
    assert entries and all(e["status"] == "skipped" and "attnbench mask" in e["error_message"] for e in entries)


# A block layout per query head (4 heads over 2 KV heads, blocks of 16 over 64 x 96): head h keeps
# block (i, j) where (h + i + 2 j) % 3 != 0: adjacent heads see other pairs (heads 0 and 3 alike).
@pytest.fixture(scope="module")
def per_head_sweep(tmp_path_factory):
    layout = tmp_path_factory.mktemp("layout") / "heads.npy"
    h, i, j = np.meshgrid(np.arange(4), np.arange(4), np.arange(6), indexing="ij")
    np.save(layout, ((h + i + 2 * j) % 3 != 0).astype(np.uint8))
    return harness_sweep(tmp_path_factory, "peers_per_head",
                         ["--backend", "cpu", "--variant", "flash2", "--nq", "64", "--nkv", "96", "--heads", "4",
                          "--kv-heads", "2", "--head-dim", "32", "--mask", f"layout:16:{layout}",
                          "--pass", "fwd,bwd", "--no-ceilings", "--reps", "1"]), f"layout:16:{layout}"


def test_a_per_head_layout_is_each_heads_own_mask_and_passes_the_fp64_checks(per_head_sweep, tmp_path):
    sweep, mask = per_head_sweep
    entries = run_peers(sweep, tmp_path / "p.json", "--variants", "torch_sdpa,torch_sdpa_math")
    assert len(entries) == 2 * 2 and all(e["status"] == "ok" and e["err_ok"] is True for e in entries), entries
    p = peers.Problem("g", "fp32", 1, 4, 2, 64, 96, 32, mask)
    peers.ATTNBENCH_BIN[:] = [BIN]
    vis = peers.sparse_visibility(p)
    assert vis.shape == (4, 64, 96)
    assert not vis[0, 0, 0] and vis[2, 0, 0]  # block (0, 0): dropped by head 0, kept by head 2
    assert all(not np.array_equal(vis[a], vis[a + 1]) for a in range(3))
    # FlexAttention's mask_mod, per head, is the same visibility (no compile needed to evaluate it).
    import torch
    mask_mod, heads, full = peers.flex_mask_mod(p, False, "cpu")
    assert heads == 4 and not full
    qi, kj = torch.arange(64)[:, None], torch.arange(96)[None, :]
    for h in range(4):
        assert np.array_equal(mask_mod(torch.tensor(0), torch.tensor(h), qi, kj).numpy(), vis[h]), h
    # The per-head bytes limit: over it, skipped saying so.
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(peers, "PER_HEAD_MASK_LIMIT", 4 * 64 * 96 - 1)
        with pytest.raises(peers.Unsupported, match="differs per head"):
            peers.sparse_visibility(p)


def test_a_per_head_layout_given_one_heads_mask_fails_the_checks(per_head_sweep, tmp_path, monkeypatch):
    """Negative control: every head given head 0's layout (the reference keeps each head's own)."""
    p = peers.Problem("g", "fp32", 1, 4, 2, 64, 96, 32, per_head_sweep[1], flops=1.0, bytes_min=1.0,
                      tolerance=1e-4, grad_tolerance=1e-4, pass_="bwd")
    peers.ATTNBENCH_BIN[:] = [BIN]
    inputs = peers.make_inputs(p, "cpu")
    args = argparse.Namespace(reps=1, rep_time=0.001, row_models={})
    pe = peers.Peers("cpu", False, 1.0)
    e = peers.run_one(pe, "torch", "torch_sdpa", p, inputs, {}, args, "torch", None)
    assert e["status"] == "ok" and e["err_ok"] is True, e  # control: each head its own
    real = peers.visible_heads
    monkeypatch.setattr(peers, "visible_heads", lambda q, misalign=False: real(q, misalign)[:1])
    e = peers.run_one(pe, "torch", "torch_sdpa", p, inputs, {}, args, "torch", None)
    assert e["status"] == "ok" and e["err_ok"] is False, e


def test_mask_per_head_reads_the_layouts_heads_as_the_harness_parses_the_mask(tmp_path):
    """layout:b:PATH takes the rest of the mask (core/problem.cpp), '+' in PATH included."""
    heads = tmp_path / "a+b.npy"
    np.save(heads, np.ones((4, 2, 3), np.uint8))
    np.save(tmp_path / "one.npy", np.ones((1, 2, 3), np.uint8))
    assert peers.mask_per_head(f"causal+layout:16:{heads}") and peers.mask_per_head(f"layout:8:{heads}")
    assert not peers.mask_per_head(f"layout:16:{tmp_path / 'one.npy'}")
    assert not peers.mask_per_head("causal+random:16,2") and not peers.mask_per_head("layout:16:/missing.npy")

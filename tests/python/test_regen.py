"""scripts/regen_results.sh: every JSON under results/ regenerated; any failure fails the script."""
from __future__ import annotations

import os
import shutil
import subprocess

from conftest import ROOT, fixture_path

SCRIPT = os.path.join(ROOT, "scripts", "regen_results.sh")


def _run(results, out):
    env = dict(os.environ, ATTNBENCH_RESULTS_DIR=str(results), ATTNBENCH_REPORT_CHECK_DIR=str(out))
    return subprocess.run(["bash", SCRIPT], capture_output=True, text=True, env=env, timeout=600)


def test_regenerates_every_json_into_the_same_relative_path(tmp_path):
    res = tmp_path / "results"
    (res / "h100").mkdir(parents=True)
    shutil.copy(fixture_path("cuda_ncu.json"), res / "h100" / "abc123.json")
    shutil.copy(fixture_path("cpu_small.json"), res / "cpu.json")
    r = _run(res, tmp_path / "check")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "check" / "h100" / "abc123" / "report.md").is_file()
    assert (tmp_path / "check" / "h100" / "abc123" / "model_vs_measured.png").is_file()
    assert (tmp_path / "check" / "cpu" / "roofline_fp32.svg").is_file()
    assert "2 report(s) regenerated" in r.stdout


def test_fails_when_one_report_fails(tmp_path):
    res = tmp_path / "results"
    res.mkdir()
    shutil.copy(fixture_path("cpu_small.json"), res / "good.json")
    shutil.copy(fixture_path("bad_missing_field.json"), res / "bad.json")
    r = _run(res, tmp_path / "check")
    assert r.returncode == 1
    assert "FAILED" in r.stderr and "bad.json" in r.stderr and "time_ms: missing" in r.stderr


def test_empty_results_is_fine(tmp_path):
    (tmp_path / "results").mkdir()
    r = _run(tmp_path / "results", tmp_path / "check")
    assert r.returncode == 0 and "nothing to regenerate" in r.stdout


def test_fresh_sweep_is_reported(tmp_path):
    # a stand-in for build/bin/attnbench: "sweep ... --out F" writes the harness fixture to F
    fake = tmp_path / "attnbench"
    fake.write_text("#!/usr/bin/env bash\nwhile (($#)); do [[ $1 == --out ]] && out=$2; shift; done\n"
                    f"cp '{fixture_path('cpu_harness.json')}' \"$out\"\n")
    fake.chmod(0o755)
    (tmp_path / "results").mkdir()
    env = dict(os.environ, ATTNBENCH_RESULTS_DIR=str(tmp_path / "results"),
               ATTNBENCH_REPORT_CHECK_DIR=str(tmp_path / "check"))
    r = subprocess.run(["bash", SCRIPT, "--sweep", str(fake)], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "check" / "fresh-cpu-quick" / "report.md").is_file()


def test_failing_sweep_fails(tmp_path):
    (tmp_path / "results").mkdir()
    env = dict(os.environ, ATTNBENCH_RESULTS_DIR=str(tmp_path / "results"),
               ATTNBENCH_REPORT_CHECK_DIR=str(tmp_path / "check"))
    r = subprocess.run(["bash", SCRIPT, "--sweep", "/bin/false"], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 1 and "FAILED the CPU quick sweep" in r.stderr


def test_a_gpu_checks_ceilings_and_kernel_resources_are_not_reports(tmp_path):
    res = tmp_path / "results" / "gpu-check"
    res.mkdir(parents=True)
    shutil.copy(fixture_path("cpu_small.json"), res / "quick.json")
    (res / "ceilings.json").write_text('{"ceilings": {"measured": {}}}')
    (res / "kernel_resources.json").write_text('{"kernels": []}')
    # Control: a JSON of neither kind without benchmarks still fails as a report.
    (res / "other.json").write_text('{"context": {}}')
    r = _run(tmp_path / "results", tmp_path / "check")
    assert r.returncode == 1
    assert "not a results file" in r.stdout and "ceilings.json" in r.stdout and "kernel_resources.json" in r.stdout
    assert "FAILED" in r.stderr and "other.json" in r.stderr and "ceilings.json" not in r.stderr
    assert (tmp_path / "check" / "gpu-check" / "quick" / "report.md").is_file()

"""compare: ratio table and CI exit status with a spread-aware threshold."""
from __future__ import annotations

import json

import pytest

from abreport.compare import compare
from abreport.load import load_run


def test_identical_runs_exit_0(cli, fx):
    r = cli("compare", fx("cpu_small.json"), fx("cpu_small.json"))
    assert r.returncode == 0, r.stderr
    assert "Result: no regression." in r.stdout
    assert "| configuration | time A (ms) | time B (ms) | ratio B/A |" in r.stdout


def test_noise_within_spread_exits_0(cli, fx):
    assert cli("compare", fx("cpu_small.json"), fx("cpu_small_noise.json")).returncode == 0


def test_slowdown_exits_1_and_names_the_configurations(cli, fx, tmp_path):
    out = tmp_path / "cmp.md"
    r = cli("compare", fx("cpu_small.json"), fx("cpu_small_slower.json"), "--out", str(out))
    assert r.returncode == 1
    slower = [l for l in r.stdout.splitlines() if "**slower**" in l]
    assert len(slower) == 6  # flash2, causal, seq group: d in {32, 64} x N in {128, 256, 512}
    assert all("flash2/cpu/fp32" in l and "mask:causal" in l for l in slower)
    assert out.read_text() == r.stdout


def test_threshold_above_the_slowdown_exits_0(cli, fx):
    r = cli("compare", fx("cpu_small.json"), fx("cpu_small_slower.json"), "--threshold", "0.7")
    assert r.returncode == 0


def test_spread_widens_the_allowance(fx, tmp_path):
    a = load_run(fx("cpu_small.json"))
    doc = json.load(open(fx("cpu_small.json")))
    for b in doc["benchmarks"]:
        if b["status"] == "ok":
            b["time_ms"] *= 1.10
            b["time_cv"] = 0.01
    p = tmp_path / "b.json"
    p.write_text(json.dumps(doc))
    b = load_run(str(p))
    tight = compare(a, b, threshold=0.05, spread_k=0.0)
    assert len(tight.regressions) == sum(1 for e in a.entries if e.ok)
    loose = compare(a, b, threshold=0.05, spread_k=10.0)  # 10 * (cv_a + 0.01) >= 0.15 > 0.10
    assert loose.regressions == []
    row = loose.rows[0]
    assert row.limit == pytest.approx(1 + max(0.05, 10.0 * (row.a.time_cv + row.b.time_cv)))


def test_ok_to_failed_is_a_regression(fx, tmp_path):
    doc = json.load(open(fx("cpu_small.json")))
    doc["benchmarks"][0].update(status="failed", error_message="launch failed")
    p = tmp_path / "b.json"
    p.write_text(json.dumps(doc))
    c = compare(load_run(fx("cpu_small.json")), load_run(str(p)))
    assert [r.verdict for r in c.regressions] == ["now failed"]


def test_configurations_in_one_run_only(fx, tmp_path):
    doc = json.load(open(fx("cpu_small.json")))
    doc["benchmarks"] = doc["benchmarks"][:10]
    p = tmp_path / "b.json"
    p.write_text(json.dumps(doc))
    c = compare(load_run(fx("cpu_small.json")), load_run(str(p)))
    assert sum(1 for r in c.rows if r.verdict == "only in A") == 69 - 10
    assert c.regressions == []


def test_nothing_in_common_exits_2(cli, fx):
    r = cli("compare", fx("cpu_small.json"), fx("cuda_multi.json"))
    assert r.returncode == 2
    assert r.stderr.startswith("attnbench_report: error: ") and "no configuration in common" in r.stderr
    assert len(r.stderr.splitlines()) == 1


def test_negative_threshold_exits_2(cli, fx):
    r = cli("compare", fx("cpu_small.json"), fx("cpu_small.json"), "--threshold", "-1")
    assert r.returncode == 2 and "--threshold" in r.stderr

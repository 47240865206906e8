"""gpu_check_summary's crossover table: the first L from which a scan beats the fastest attention
row at every longer L, read from the crossover step's JSON (scripts/gpu_check.sh)."""
from __future__ import annotations

import json
from pathlib import Path

import gpu_check_summary


def write_run(out: Path, times: dict[str, dict[int, float]], scans: set[str]) -> None:
    rows = [{"name": v, "tags": ["scan"] if v in scans else ["fused"]} for v in times]
    benchmarks = [{"name": f"{v}/L{n}", "variant": v, "Nq": n, "status": "ok", "err_ok": True, "time_ms": t}
                  for v, per in times.items() for n, t in per.items()]
    (out / "crossover.json").write_text(json.dumps({"context": {"variants": rows}, "benchmarks": benchmarks}))


def verdicts(out: Path) -> dict[str, str]:
    lines = gpu_check_summary.crossover_table(str(out))
    return {ln.split()[0]: ln.split("  ")[-1].strip() for ln in lines[2:]}


def test_crossover_is_the_first_length_from_which_the_scan_stays_faster(tmp_path: Path) -> None:
    write_run(tmp_path, {"flash2": {1024: 1.0, 4096: 8.0, 16384: 100.0}, "flash3": {1024: 0.5, 4096: 6.0, 16384: 90.0},
                         "ssd": {1024: 2.0, 4096: 5.0, 16384: 20.0},
                         "wkv": {1024: 0.4, 4096: 7.0, 16384: 30.0}}, {"ssd", "wkv"})
    v = verdicts(tmp_path)
    assert v["ssd"] == "4096"
    # faster at 1024, slower at 4096 (7 > 6), faster again at 16384: it stays faster from 16384 only
    assert v["wkv"] == "16384"


def test_a_scan_slower_at_the_longest_length_has_no_crossover(tmp_path: Path) -> None:
    write_run(tmp_path, {"flash2": {1024: 1.0, 4096: 2.0}, "wkv6": {1024: 0.5, 4096: 3.0}}, {"wkv6"})
    assert verdicts(tmp_path)["wkv6"] == "not in the measured range"


def test_no_crossover_step_output_gives_no_table(tmp_path: Path) -> None:
    assert gpu_check_summary.crossover_table(str(tmp_path)) == []

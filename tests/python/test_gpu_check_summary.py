"""gpu_check_summary's crossover table: the first L from which a scan beats the fastest attention
row at every longer L, read from the crossover step's JSON (scripts/gpu_check.sh)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

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


# The env step's nvidia-smi table as the H200 run at 5759d44 wrote it (no `nvidia-smi -L` line).
SMI_TABLE = """|=========================================+========================+======================|
|   0  NVIDIA H200                    On  |   00000000:00:06.0 Off |                    0 |
| N/A   39C    P0             79W /  700W |       0MiB / 143771MiB |      0%      Default |
"""


def test_device_from_the_nvidia_smi_table_row() -> None:
    assert gpu_check_summary.device_name(SMI_TABLE) == "NVIDIA H200"


def test_device_from_nvidia_smi_list_first() -> None:
    env = "GPU 0: NVIDIA H200 (UUID: GPU-1234)\n" + SMI_TABLE.replace("H200", "H100")
    assert gpu_check_summary.device_name(env) == "NVIDIA H200"
    assert gpu_check_summary.device_name("nvidia-smi failed\n") == "unknown"


def result_of(out: Path, capsys: pytest.CaptureFixture[str], entries: list[dict]) -> str:
    (out / "quick.json").write_text(json.dumps({"context": {}, "benchmarks": entries}))
    gpu_check_summary.main([str(out)])
    row = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("torch_sdpa ")]
    return row[0].split()[-1]


FWD = {"variant": "torch_sdpa", "pass": "fwd", "status": "ok", "rel_err": 2.3e-3, "err_ok": True, "tflops": 700.0}
# A backward-only peer entry as peers.py writes it: no forward output, so rel_err None.
BWD = {"variant": "torch_sdpa", "pass": "bwd", "status": "ok", "rel_err": None, "grad_err": 2.4e-3,
       "dq_err": 2.4e-3, "dk_err": 1.0e-3, "dv_err": 1.0e-3, "grad_tolerance": 0.03, "err_ok": True}


def test_a_bwd_entry_is_judged_by_its_gradient_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert result_of(tmp_path, capsys, [FWD, BWD]) == "PASS"


def test_a_wrong_gradient_still_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the negative controls: above grad_tolerance (even with err_ok True), err_ok False, no gradient error
    assert result_of(tmp_path, capsys, [FWD, {**BWD, "grad_err": 0.05}]) == "FAIL"
    assert result_of(tmp_path, capsys, [FWD, {**BWD, "err_ok": False}]) == "FAIL"
    assert result_of(tmp_path, capsys, [FWD, {**BWD, "grad_err": None}]) == "FAIL"
    assert result_of(tmp_path, capsys, [FWD, {**BWD, "grad_err": float("nan")}]) == "FAIL"
    assert result_of(tmp_path, capsys, [{**FWD, "rel_err": None}, BWD]) == "FAIL"


def test_compare_table_gives_each_builds_time_ratio_and_marks_bad_entries(tmp_path: Path) -> None:
    def entry(t: float, grad: float) -> dict:
        return {"name": "flash2/bwd", "pass": "bwd", "status": "ok", "real_time": t, "tflops": 100.0 / t,
                "grad_err": grad, "grad_tolerance": 0.03, "err_ok": grad <= 0.03}
    (tmp_path / "old.json").write_text(json.dumps({"benchmarks": [entry(2.0, 0.002)]}))
    (tmp_path / "new.json").write_text(json.dumps({"benchmarks": [entry(1.5, 0.5)]}))  # faster, but wrong
    # A build cut off before its JSON: its results log is read.
    (tmp_path / "cut.json.log.jsonl").write_text(json.dumps({"context": {}}) + "\n" + json.dumps(entry(4.0, 0.002)))
    lines = gpu_check_summary.compare_table([("old", str(tmp_path / "old.json")), ("new", str(tmp_path / "new.json")),
                                             ("cut", str(tmp_path / "cut.json"))])
    by_build = {ln.split()[0]: ln for ln in lines if ln.startswith("  ")}
    assert "x0.750" in by_build["new"] and "BAD" in by_build["new"]
    assert "x2.000" in by_build["cut"] and "BAD" not in by_build["cut"]
    assert "BAD" not in by_build["old"] and " x" not in by_build["old"]
    assert any("cut: cut.json incomplete" in ln for ln in lines)


# The profile step's files as Nsight Compute writes them (--csv, --print-units base): the details
# page, one row per (kernel, section metric), and the raw page, a header and a unit row, one row
# per kernel; lines ncu prints around them are not rows.
DETAILS = '''==PROF== Connected to process 977
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
"0","977","attnbench","gpu","void flash2_bwd_kernel<T>(flash2_bwd_params)","1","7","(128, 1, 1)","(128, 16, 1)","0","9.0","GPU Speed Of Light Throughput","Duration","nsecond","4700000"
"0","977","attnbench","gpu","void flash2_bwd_kernel<T>(flash2_bwd_params)","1","7","(128, 1, 1)","(128, 16, 1)","0","9.0","GPU Speed Of Light Throughput","Compute (SM) Throughput","%","61.2"
"0","977","attnbench","gpu","void flash2_bwd_kernel<T>(flash2_bwd_params)","1","7","(128, 1, 1)","(128, 16, 1)","0","9.0","Occupancy","Theoretical Occupancy","%","12.5"
"1","977","attnbench","gpu","void flash2_bwd_kernel<U>(flash2_bwd_params)","1","7","(256, 1, 1)","(64, 16, 1)","0","9.0","GPU Speed Of Light Throughput","L1/TEX Cache Throughput","%","80.5"
'''
RAW = '''"ID","Kernel Name","smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio","smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio","smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio","smsp__average_warps_issue_stalled_wait_per_issue_active.ratio","smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio","dram__bytes_read.sum"
"","","ratio","ratio","ratio","ratio","ratio","byte"
"0","flash2_bwd_kernel","0.5","1.25","2.5","0.25","0.75","1,048,576"
"1","flash2_bwd_kernel","0.1","n/a","0.3","0.2","0.4","0"
'''


def test_profile_lines_give_each_kernels_bounds_and_stalls(tmp_path: Path) -> None:
    (tmp_path / "bwd_profile.details.csv").write_text(DETAILS)
    (tmp_path / "bwd_profile.csv").write_text(RAW)
    lines = gpu_check_summary.profile_lines(str(tmp_path), "bwd_profile")
    assert lines[1] == "profile (bwd_profile.details.csv, Nsight Compute)"
    assert lines[2] == ("  void flash2_bwd_kernel<T> block (128, 1, 1) (ID 0): Duration 4700000 nsecond; "
                        "Compute (SM) Throughput 61.2 %")  # Theoretical Occupancy is not one of the bounds
    assert lines[3] == "    stalls per issue: mio_throttle 2.50, short_scoreboard 1.25, math_pipe_throttle 0.75, barrier 0.50"
    assert lines[4] == "  void flash2_bwd_kernel<U> block (256, 1, 1) (ID 1): L1/TEX Cache Throughput 80.5 %"
    assert lines[5] == "    stalls per issue: math_pipe_throttle 0.40, mio_throttle 0.30, wait 0.20, barrier 0.10"  # n/a left out


def test_no_profile_files_give_no_profile_lines(tmp_path: Path) -> None:
    assert gpu_check_summary.profile_lines(str(tmp_path), "bwd_profile") == []
    (tmp_path / "bwd_profile.details.csv").write_text("==ERROR== LibraryNotLoaded\n")
    assert gpu_check_summary.profile_lines(str(tmp_path), "bwd_profile") == []


def test_the_bwd_target_line_takes_correct_target_entries_only() -> None:
    def e(tflops: float, bc: int = 64, **kw) -> dict:
        return {"variant": "flash2", "pass": "bwd", "dtype": "bf16", "d": 128, "mask": "none", "Nq": 8192,
                "Nkv": 8192, "Br": 64, "Bc": bc, "status": "ok", "err_ok": True, "grad_err": 3e-3, "tflops": tflops,
                **kw}
    rows = [e(206.0), e(251.0, 128), e(240.0, 128, Nq=16384, Nkv=16384),
            e(900.0, 128, err_ok=False),  # a wrong gradient's speed does not count
            e(800.0, 128, d=64), e(700.0, 128, mask="causal"), e(600.0, 128, Nq=4096, Nkv=4096),
            e(500.0, 128, **{"pass": "fwd_bwd"}),
            e(541.0, 0, variant="cudnn_sdpa"), e(322.0, 0, variant="torch_sdpa_flash", peer=True, Br=0)]
    line = gpu_check_summary.bwd_target_line(rows)
    assert line.endswith("64x128 251, 64x64 206: not met (beside cudnn_sdpa 541, torch_sdpa_flash 322)"), line
    assert gpu_check_summary.bwd_target_line(rows + [e(301.0)]).split(": ", 2)[-1].startswith("64x128 251, 64x64 301: met")
    assert gpu_check_summary.bwd_target_line(rows[3:]).endswith("no correct flash2 entry on those problems")

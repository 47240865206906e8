"""scripts/ncu_merge.py on hand-made Nsight Compute raw-page CSV fixtures.

Fixtures (tests/python/fixtures/ncu): bench.json, four entries following
docs/json_schema.md; ncu_raw.csv, a modern raw page (base units, thousands
separators, three kernels in one range, a range inside an outer attnbench
range, a range that matches no benchmark, a kernel outside attnbench ranges);
ncu_raw_scaled_units.csv, an older header (no Msg_Type) with Mbyte/Kbyte/
usecond/Minst units, no lts__t_bytes.sum column and an n/a cell; and broken
files.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIX = Path(__file__).resolve().parent / "fixtures" / "ncu"
from abnsight import merge, ncu_csv, units

FLASH = "flash2/cuda/bf16/B:1/H:8/Hkv:8/Nq:1024/Nkv:1024/d:64/mask:causal/Br:128/Bc:64"
NAIVE = "naive/cuda/bf16/B:1/H:8/Hkv:8/Nq:1024/Nkv:1024/d:64/mask:causal/Br:64/Bc:64"
MASKS = "flash2/cuda/bf16/B:1/H:8/Hkv:2/Nq:4096/Nkv:4096/d:128/mask:local:256,0+global:16/Br:128/Bc:64"
SKIPPED = "flash2/cuda/fp32/B:1/H:8/Hkv:8/Nq:1024/Nkv:1024/d:256/mask:none/Br:128/Bc:128"
UNKNOWN = "flash2/cuda/bf16/B:9/H:8/Hkv:8/Nq:1024/Nkv:1024/d:64/mask:causal/Br:128/Bc:64"


def run_merge(csv_name: str, tmp_path: Path, json_path: Path = FIX / "bench.json") -> tuple[int, dict | None, str]:
    out = tmp_path / "merged.json"
    p = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "ncu_merge.py"), "--json", str(json_path),
         "--csv", str(FIX / csv_name), "--out", str(out)],
        capture_output=True, text=True, check=False)
    merged = json.loads(out.read_text()) if p.returncode == 0 else None
    return p.returncode, merged, p.stderr


def by_name(merged: dict) -> dict[str, dict]:
    return {b["name"]: b for b in merged["benchmarks"]}


# --- units ------------------------------------------------------------------

@pytest.mark.parametrize("unit,factor,dim", [
    ("byte", 1, "bytes"), ("Kbyte", 1e3, "bytes"), ("Mbyte", 1e6, "bytes"), ("Gbyte", 1e9, "bytes"),
    ("KiB", 1024, "bytes"), ("nsecond", 1, "time"), ("usecond", 1e3, "time"), ("msecond", 1e6, "time"),
    ("second", 1e9, "time"), ("inst", 1, "count"), ("Kinst", 1e3, "count"), ("Minst", 1e6, "count"),
    ("", 1, "count"),
])
def test_unit_scale(unit: str, factor: float, dim: str) -> None:
    assert units.scale(unit) == factor
    assert units.dimension(unit) == dim


def test_unknown_unit_and_numbers() -> None:
    with pytest.raises(units.UnitError):
        units.scale("%")
    with pytest.raises(units.UnitError):
        units.scale("byte/second")
    assert units.to_base("1,234,567", "byte") == 1234567
    assert units.to_base("1,048.576", "Kbyte") == pytest.approx(1048576)
    assert units.to_base("n/a", "byte") is None
    assert units.to_base("", "byte") is None
    with pytest.raises(ValueError):
        units.parse_number("12 KB")


# --- CSV parsing --------------------------------------------------------------

def test_push_pop_cell_keeps_colons_in_range_names() -> None:
    cell = f'1  "attnbench:profile:none:none:none:none:none:none"  "attnbench:{MASKS}:none:none:ARGB:0xff76b900:none:none" '
    assert ncu_csv.split_push_pop_cell(cell, "attnbench", 6) == ["profile", MASKS]
    old = f'1  "attnbench:{FLASH}:none:none:none:none:none" '
    assert ncu_csv.split_push_pop_cell(old, "attnbench", 5) == [FLASH]
    assert ncu_csv.split_push_pop_cell('1  "<default domain>:setup:none:none:none:none:none:none"', "attnbench", 6) == []


def test_nvtx_column_kinds() -> None:
    c = ncu_csv.classify_nvtx_column("thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg")
    assert c is not None and c.kind == "push_pop" and c.trailing_fields == 6
    c = ncu_csv.classify_nvtx_column("thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg")
    assert c is not None and c.trailing_fields == 5
    c = ncu_csv.classify_nvtx_column("Id:Domain:Start/Stop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg")
    assert c is not None and c.kind == "start_end"
    c = ncu_csv.classify_nvtx_column("NVTX")
    assert c is not None and c.kind == "other"
    assert ncu_csv.classify_nvtx_column("Kernel Name") is None


def test_parse_raw_page_skips_prof_lines() -> None:
    t = ncu_csv.read(str(FIX / "ncu_raw.csv"))
    assert len(t.rows) == 7
    assert t.units["dram__bytes_read.sum"] == "byte"
    assert t.units["gpu__time_duration.sum"] == "nsecond"
    assert "Kernel Name" not in t.units  # only metric columns
    assert t.rows[0].kernel.startswith("void flash2_fwd_kernel<Flash2Traits<64, 128, 64")


# --- merge: fields, sums, warnings ------------------------------------------------

def test_merge_fields_and_sums(tmp_path: Path) -> None:
    rc, merged, err = run_merge("ncu_raw.csv", tmp_path)
    assert rc == 0, err
    b = by_name(merged)

    f = b[FLASH]
    assert f["dram_bytes_measured"] == 4325376 + 1048576
    assert f["l2_bytes_measured"] == 12845056
    assert f["kernel_time_ncu"] == pytest.approx(0.020512)  # ms
    assert f["ncu_kernels"] == 1
    assert f["ncu_metrics"]["sm__sass_thread_inst_executed_op_ffma_pred_on.sum"] == 2097152
    assert "profiler__replayer_passes" not in f["ncu_metrics"]  # not a .sum metric
    # The model's fields are untouched.
    assert f["bytes"] == 11534336 and f["bytes_min"] == 4194304

    # Three kernels (QK^T, softmax, PV) in one range are summed.
    n = b[NAIVE]
    assert n["ncu_kernels"] == 3
    assert n["dram_bytes_measured"] == (2097152 + 16777216) + (16777216 + 8388608) + (9437184 + 1048576)
    assert n["l2_bytes_measured"] == 19922944 + 25165824 + 17825792
    assert n["kernel_time_ncu"] == pytest.approx((31200 + 28900 + 33500) * 1e-6)

    # Range names with ',' '+' ':' inside an outer attnbench range: the innermost one counts.
    m = b[MASKS]
    assert m["ncu_kernels"] == 1
    assert m["dram_bytes_measured"] == 21233664 + 8388608

    # Entries without kernels get nothing.
    assert not any(k in b[SKIPPED] for k in ("dram_bytes_measured", "ncu_kernels", "kernel_time_ncu"))

    ctx = merged["context"]["ncu_merge"]
    assert ctx["benchmarks_merged"] == 3 and ctx["ranges_unmatched"] == 1


def test_unmatched_range_and_outside_kernel_warn(tmp_path: Path) -> None:
    rc, merged, err = run_merge("ncu_raw.csv", tmp_path)
    assert rc == 0
    assert f"NVTX range '{UNKNOWN}' (1 kernel(s)) matches no benchmark" in err
    assert "1 kernel(s) outside any attnbench NVTX range" in err
    assert all("B:9" not in name for name in by_name(merged))


def test_scaled_units_missing_metric_and_na(tmp_path: Path) -> None:
    rc, merged, err = run_merge("ncu_raw_scaled_units.csv", tmp_path)
    assert rc == 0, err
    b = by_name(merged)
    f = b[FLASH]
    # Mbyte + Kbyte with thousands separators, usecond -> ms, Minst -> count.
    assert f["dram_bytes_measured"] == 4325376 + 1048576
    assert f["kernel_time_ncu"] == pytest.approx(0.020512)
    assert f["ncu_metrics"]["sm__sass_thread_inst_executed_op_ffma_pred_on.sum"] == 2097152
    # No lts__t_bytes.sum column: field omitted, one warning for the file.
    assert "l2_bytes_measured" not in f
    assert err.count("no column lts__t_bytes.sum") == 1
    # An n/a cell in one of NAIVE's kernels: its DRAM field is omitted, the rest merged.
    n = b[NAIVE]
    assert "dram_bytes_measured" not in n
    assert n["kernel_time_ncu"] == pytest.approx(0.0936)
    assert n["ncu_kernels"] == 3
    assert f"range '{NAIVE}': a kernel has no value for dram__bytes_read.sum/dram__bytes_write.sum" in err


@pytest.mark.parametrize("csv_name,message", [
    ("ncu_malformed_width.csv", "line 3: 6 cells, header has 5"),
    ("ncu_no_unit_row.csv", "not a unit row"),
    ("ncu_no_nvtx.csv", "no NVTX column"),
    ("ncu_details_page.csv", "details page"),
    ("bench.json", "no Nsight Compute raw-page header"),
])
def test_malformed_csv_is_one_line_exit_2(csv_name: str, message: str, tmp_path: Path) -> None:
    rc, _, err = run_merge(csv_name, tmp_path)
    assert rc == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ncu_merge: error:")
    assert message in lines[0]


def test_bad_unit_for_a_field_is_an_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    text = (FIX / "ncu_raw.csv").read_text().replace('"byte","byte","nsecond"', '"byte","byte","byte"', 1)
    bad.write_text(text)
    p = subprocess.run([sys.executable, str(ROOT / "scripts" / "ncu_merge.py"), "--json", str(FIX / "bench.json"),
                        "--csv", str(bad)], capture_output=True, text=True, check=False)
    assert p.returncode == 2
    assert "gpu__time_duration.sum: unit 'byte' is not a time unit" in p.stderr


def test_bad_json_exit_2(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    rc, _, err = run_merge("ncu_raw.csv", tmp_path, json_path=broken)
    assert rc == 2 and err.startswith("ncu_merge: error: cannot read benchmark JSON")


def test_pathological_json_exit_2(tmp_path: Path) -> None:
    """1,000,000-deep nesting and a 5000-digit number are one-line input errors."""
    for name, text in (("deep.json", "[" * 1_000_000 + "]" * 1_000_000), ("digits.json", "[" + "9" * 5000 + "]")):
        bad = tmp_path / name
        bad.write_text(text)
        rc, _, err = run_merge("ncu_raw.csv", tmp_path, json_path=bad)
        assert rc == 2 and err.startswith("ncu_merge: error: cannot read benchmark JSON"), err
        assert len(err.strip().splitlines()) == 1


def test_stdout_default_and_no_match_warning(tmp_path: Path) -> None:
    other = tmp_path / "other.json"
    bench = json.loads((FIX / "bench.json").read_text())
    for e in bench["benchmarks"]:
        e["name"] = e["run_name"] = e["name"].replace("B:1/", "B:2/")
    other.write_text(json.dumps(bench))
    p = subprocess.run([sys.executable, str(ROOT / "scripts" / "ncu_merge.py"), "--json", str(other),
                        "--csv", str(FIX / "ncu_raw.csv")], capture_output=True, text=True, check=False)
    assert p.returncode == 0
    merged = json.loads(p.stdout)
    assert not any("ncu_kernels" in e for e in merged["benchmarks"])
    assert "no profiled kernel matched a benchmark" in p.stderr


def test_name_found_in_unparsed_nvtx_column() -> None:
    """A plain "NVTX" column (form not parsed): the benchmark name is found inside the cell."""
    text = (
        '"ID","Process ID","NVTX","Kernel Name","dram__bytes_read.sum","dram__bytes_write.sum"\n'
        '"","","","","byte","byte"\n'
        f'"0","1","attnbench:{FLASH}","k","10","20"\n'
        f'"1","1","attnbench:{FLASH[:-1]}","k","10","20"\n'
    )
    t = ncu_csv.parse(text)
    warnings: list[str] = []
    bench = {"benchmarks": [{"name": FLASH}, {"name": FLASH[:-1]}]}
    merge.merge(bench, t, warnings.append)
    assert bench["benchmarks"][0]["dram_bytes_measured"] == 30
    assert bench["benchmarks"][0]["ncu_kernels"] == 1  # the prefix name does not steal it
    assert bench["benchmarks"][1]["ncu_kernels"] == 1
    assert any("gpu__time_duration.sum" in w for w in warnings)
    assert any("lts__t_bytes.sum" in w for w in warnings)


def test_merge_is_importable_without_cwd(tmp_path: Path) -> None:
    # The command works from any directory (Python puts the script's folder on sys.path).
    p = subprocess.run([sys.executable, str(ROOT / "scripts" / "ncu_merge.py"), "--help"],
                       capture_output=True, text=True, check=False, cwd=tmp_path,
                       env={**os.environ, "PYTHONPATH": ""})
    assert p.returncode == 0 and "--csv" in p.stdout

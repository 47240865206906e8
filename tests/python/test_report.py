"""The Markdown report: context, ceilings, best-per-variant table with bound and % of roofline,
embedded charts that exist, skipped/failed with reasons."""
from __future__ import annotations

import os
import re

import pytest

from abreport import report
from abreport.data import CeilingSet, Ceilings
from abreport.roofs import attainable, position


def _table_rows(md: str, header_start: str) -> list[list[str]]:
    lines = md.splitlines()
    i = next(k for k, l in enumerate(lines) if l.startswith(header_start))
    rows = []
    for l in lines[i + 2:]:
        if not l.startswith("|"):
            break
        rows.append([c.strip() for c in l.strip("|").split("|")])
    return rows


def test_cpu_report(load, tmp_path):
    ds = load("cpu_small.json")
    path, built = report.write(ds, str(tmp_path))
    md = open(path).read()
    assert path == str(tmp_path / "report.md")
    assert md.startswith("# attnbench report — Intel(R) Xeon(R) CPU @ 2.20GHz (cpu)")
    assert "| commit | 1c2d7ce5a3f0 |" in md and "| entries | 67 ok, 1 skipped, 1 failed |" in md
    assert "| copy bandwidth (GB/s) | 11.5 | — |" in md
    rows = _table_rows(md, "| variant | dtype |")
    assert [r[0] for r in rows] == ["flash1", "flash2", "naive"]
    for r in rows:
        assert r[9] in ("memory", "compute")
        assert re.fullmatch(r"[\d.]+% \(n=\d+\)", r[11])
        assert re.fullmatch(r"[\d.]+%", r[8])
    # every variant gets a sentence saying bound and distance to its ceiling
    for v in ("flash1", "flash2", "naive"):
        line = next(l for l in md.splitlines() if l.startswith(f"- **{v}**"))
        assert ("memory-bound" in line or "compute-bound" in line) and "% of that roof" in line
    # charts embedded by relative path, and they exist beside the report (PNG and SVG)
    imgs = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md)
    assert imgs and len(imgs) == len(built.charts)
    for img in imgs:
        assert not os.path.isabs(img)
        assert (tmp_path / img).is_file() and (tmp_path / img.replace(".png", ".svg")).is_file()
    assert "model vs measured: no entry has dram_bytes_measured" in md
    skipped = _table_rows(md, "| status | variant | count |")
    assert [r[:3] for r in skipped] == [["failed", "flash2", "1"], ["skipped", "naive", "1"]]
    assert "rel_err 3.1e-02 above tolerance" in skipped[0][3]


def test_best_row_numbers_match_the_roofline_definition(load, tmp_path):
    ds = load("cuda_multi.json")
    path, _ = report.write(ds, str(tmp_path), formats=("png",))
    md = open(path).read()
    assert "[SVG]" not in md
    rows = {(r[0], r[1]): r for r in _table_rows(md, "| variant | dtype |")}
    assert len(rows) == 9  # 3 variants x 3 dtypes
    best = max((e for e in ds.ok_entries if e.variant == "flash2" and e.dtype == "fp16"), key=lambda e: e.tflops)
    pos = position(best, ds.ceilings)
    roof = min(720.0, 3010.0 * best.intensity / 1e3)
    assert pos.attainable_tflops == pytest.approx(roof)
    assert rows[("flash2", "fp16")][8] == report.pct(100 * best.tflops / roof)
    assert rows[("flash2", "fp16")][9] == ("memory" if best.intensity < 720e3 / 3010 else "compute")
    assert os.path.isfile(tmp_path / "roofline_bf16.png")
    assert "| `flash2_fwd_kernel<128,64,128>` | sm_90 | 168 | 49152 | 0 | 0 / 0 |" in md
    assert "Left of the dotted ridge line a point is memory-bound" in md


def test_report_with_measured_bytes_embeds_model_chart(load, tmp_path):
    path, built = report.write(load("cuda_ncu.json"), str(tmp_path))
    md = open(path).read()
    assert "![Measured / modeled DRAM bytes](model_vs_measured.png)" in md
    assert "(measured)" in md  # intensity column says where the bytes came from


def test_report_without_ceilings_says_so(load, tmp_path):
    path, _ = report.write(load("cpu_no_ceilings.json"), str(tmp_path), formats=("svg",))
    assert "![Roofline (fp32)](roofline_fp32.svg)" in open(path).read()
    md = open(path).read()
    assert "No ceilings in this run's context" in md
    assert "n/a (no ceilings)" in md


def test_roof_arithmetic():
    assert attainable(100.0, 1.0, 5.0) == pytest.approx(0.5)  # memory roof 100 GB/s * 5 FLOP/B
    assert attainable(100.0, 1.0, 50.0) == pytest.approx(1.0)  # compute roof
    assert attainable(None, None, 5.0) is None
    c = Ceilings(measured=CeilingSet(100.0, {"fp32": 1.0}))
    assert c.measured.ridge("fp32") == pytest.approx(10.0)
    assert c.primary("fp16")[1] == "measured"  # bandwidth still measured
    c2 = Ceilings(theoretical=CeilingSet(200.0, {"fp16": 4.0}))
    assert c2.primary("fp16") == (c2.theoretical, "theoretical")


def test_report_cli_several_runs_writes_index(cli, fx, tmp_path):
    r = cli("report", fx("cpu_small.json"), fx("cuda_ncu.json"), "--out", str(tmp_path), "--formats", "png,svg")
    assert r.returncode == 0, r.stderr
    index = (tmp_path / "index.md").read_text()
    assert "[cpu_small](cpu_small/report.md)" in index and "[cuda_ncu](cuda_ncu/report.md)" in index
    assert (tmp_path / "cpu_small" / "roofline_fp32.png").is_file()
    assert (tmp_path / "cuda_ncu" / "model_vs_measured.svg").is_file()


def test_results_log_report(cli, fx, tmp_path):
    r = cli("report", fx("cpu_small.log.jsonl"), "--out", str(tmp_path), "--formats", "png")
    assert r.returncode == 0, r.stderr
    assert "| entries | 20 ok, 0 skipped, 0 failed |" in (tmp_path / "report.md").read_text()

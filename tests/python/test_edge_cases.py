"""Runs with little or nothing to plot still give a report and exit 0."""
from __future__ import annotations

import json

from abreport import report, roofline, speedup


def _write(tmp_path, fx, mutate, name="edge.json"):
    doc = json.load(open(fx("cpu_harness.json")))
    mutate(doc)
    p = tmp_path / name
    p.write_text(json.dumps(doc))
    return str(p)


def test_all_skipped_run(cli, fx, tmp_path):
    def skip_all(doc):
        for b in doc["benchmarks"]:
            b.update(status="skipped", error_message="does not fit", time_ms=None, tflops=None, gbps=None)
    p = _write(tmp_path, fx, skip_all)
    r = cli("report", p, "--out", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    md = (tmp_path / "out" / "report.md").read_text()
    assert "No configuration ran." in md and "| skipped | flash2 |" in md
    assert "roofline: no entries ran" in md
    r = cli("roofline", p, "--out", str(tmp_path / "rf"))
    assert r.returncode == 0 and "note: roofline: no entries ran" in r.stderr


def test_single_entry_run(load, fx, tmp_path):
    p = _write(tmp_path, fx, lambda d: d.update(benchmarks=d["benchmarks"][:1]))
    from abreport.load import load_dataset
    ds = load_dataset([p])
    path, built = report.write(ds, str(tmp_path / "out"), formats=("png",))
    assert [c.stem for c in built.charts] == ["roofline_fp32", "tflops_seq_fp32"]
    assert any("speedup" in n for n in built.notes)
    assert roofline.build(ds).charts[0].summary["points"] == {"naive": 1}


def test_ok_entries_without_a_model_are_listed_not_plotted(fx, tmp_path):
    def drop_model(doc):
        for b in doc["benchmarks"]:
            if b["variant"] == "flash1":
                b.update(flops=None, intensity=None, tflops=None, bytes=None, gbps=None)
    p = _write(tmp_path, fx, drop_model)
    from abreport.load import load_dataset
    ds = load_dataset([p])
    assert "flash1" not in roofline.build(ds).charts[0].summary["points"]
    assert "flash1" not in speedup.build(ds).charts[0].summary["points"]
    path, _ = report.write(ds, str(tmp_path / "out"), formats=("png",))
    assert "| unplotted | flash1 |" in open(path).read()

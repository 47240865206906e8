"""Every chart and the report on real harness output (fixtures/cpu_harness.json, written by
attnbench from fixtures/sweep_cpu_small.json), and its results log."""
from __future__ import annotations

from collections import Counter

from matplotlib.collections import PathCollection

from abreport import gqa_decode, model_vs_measured, report, roofline, speedup, tiles


def test_harness_file_loads_with_context(load):
    ds = load("cpu_harness.json")
    run = ds.runs[0]
    assert run.backend == "cpu" and run.context["preset"] == "cpu-small-fixture"
    assert run.ceilings.measured.bandwidth_gbps > 0 and run.ceilings.measured.peak("fp32") > 0
    assert Counter(e.status for e in ds.entries) == {"ok": 47, "skipped": 2}


def test_roofline_on_harness_output(load):
    ds = load("cpu_harness.json")
    c = roofline.build(ds).charts[0]
    ax = c.fig.axes[0]
    assert c.summary["points"] == dict(Counter(e.variant for e in ds.ok_entries))
    assert sum(len(p.get_offsets()) for p in ax.collections if isinstance(p, PathCollection)) == 47
    assert c.summary["ceilings"] == ["measured_bandwidth", "measured_peak"]
    assert "measured" in c.summary["ridges"]


def test_speedup_on_harness_output(load):
    ds = load("cpu_harness.json")
    charts = {c.stem: c for c in speedup.build(ds).charts}
    sp = charts["speedup_fp32"]
    assert sp.summary["baseline"] == "naive"
    assert len(sp.fig.axes) == 4  # d 32/64 x mask none/causal
    assert sp.summary["points"] == {"flash1": 8, "flash2": 8}  # N 128/256 in each panel
    assert charts["tflops_seq_fp32"].summary["points"] == {"naive": 8, "flash1": 8, "flash2": 8}


def test_tiles_on_harness_output(load):
    panels = tiles.build(load("cpu_harness.json")).charts[0].summary["panels"]
    assert set(panels) == {"flash1 d=64", "flash2 d=64"}
    assert all(p["cells"] == 7 and p["Br"] == [16, 32, 64] for p in panels.values())


def test_gqa_and_decode_on_harness_output(load):
    ds = load("cpu_harness.json")
    g = gqa_decode.build_gqa(ds).charts[0]
    # naive_gqa_expand skips Hkv = H, so it has two points
    assert g.summary["points"] == {"flash2": 3, "naive_gqa_expand": 2}
    d = gqa_decode.build_decode(ds).charts[0]
    assert d.summary["points"] == {"flash2": 2, "naive": 2}
    assert len(d.summary["ceilings"]) == 1 and d.summary["ceilings"][0].startswith("measured copy bandwidth")


def test_partly_measured_bytes(load):
    ds = load("cpu_harness_ncu.json")
    c = roofline.build(ds).charts[0]
    assert c.summary["measured_points"] == sum(1 for e in ds.ok_entries if e.variant == "flash2")
    m = model_vs_measured.build(ds).charts[0]
    assert m.summary["variants"] == ["flash2"]
    assert abs(m.summary["median_ratio"]["flash2"] - 1.25) < 1e-9


def test_report_on_harness_output_and_log(load, tmp_path):
    path, built = report.write(load("cpu_harness.json"), str(tmp_path / "json"))
    md = open(path).read()
    assert {c.stem for c in built.charts} == {"roofline_fp32", "speedup_fp32", "tflops_seq_fp32", "tiles_fp32",
                                              "gqa_fp32", "decode_fp32"}
    assert "| skipped | sparse | 1 |" in md and "| skipped | naive_gqa_expand | 1 |" in md
    for v in ("flash1", "flash2", "naive", "naive_gqa_expand", "sparse"):
        assert f"- **{v}** (fp32)" in md
    # the log has no context: no ceilings and no variant rows, so no default baseline (the
    # speedup chart is left out with a note); every other chart is drawn
    path, built = report.write(load("cpu_harness.json.log.jsonl"), str(tmp_path / "log"), formats=("png",))
    md = open(path).read()
    assert "No ceilings in this run's context" in md
    assert "lists no variant rows" in md and "--baseline" in md
    assert len(built.charts) == 5 and "speedup_fp32" not in {c.stem for c in built.charts}
    _, built = report.write(load("cpu_harness.json.log.jsonl"), str(tmp_path / "log_b"), baseline="naive",
                            formats=("png",))
    assert len(built.charts) == 6


def test_compare_harness_with_itself(cli, fx):
    r = cli("compare", fx("cpu_harness.json"), fx("cpu_harness.json.log.jsonl"))
    assert r.returncode == 0 and "47 same" in r.stdout

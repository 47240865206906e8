"""Tile heatmaps, GQA and decode charts: what each panel holds."""
from __future__ import annotations

import numpy as np

from abreport import gqa_decode, tiles


def test_tile_heatmap_cells_and_best(load):
    ds = load("cpu_small.json")
    built = tiles.build(ds)
    assert [c.stem for c in built.charts] == ["tiles_fp32"]
    s = built.charts[0].summary["panels"]
    assert set(s) == {"flash1 d=64", "flash2 d=64"}
    for name, p in s.items():
        assert p["cells"] == 9 and p["Br"] == [16, 32, 64] and p["Bc"] == [16, 32, 64]
        variant = name.split()[0]
        tile = [e for e in ds.ok_entries if e.variant == variant and (e.B, e.H, e.Nq, e.d, e.mask) == (1, 4, 256, 64, "causal")]
        best = max(tile, key=lambda e: e.tflops)
        assert p["best"] == (best.Br, best.Bc)
    fig = built.charts[0].fig
    heat = [a for a in fig.axes if a.images]
    assert len(heat) == 2
    arr = heat[0].images[0].get_array()
    assert arr.shape == (3, 3) and np.isfinite(np.ma.filled(arr, np.nan)).all()
    assert heat[0].get_xlabel().startswith("Bc") and heat[0].get_ylabel().startswith("Br")


def test_tiles_absent_gives_note(load):
    ds = load("cpu_small.log.jsonl")  # first 20 entries: seq group only
    built = tiles.build(ds)
    assert built.charts == [] and "tiles" in built.notes[0]


def test_gqa_time_and_bytes_vs_hkv(load):
    ds = load("cuda_multi.json")
    built = gqa_decode.build_gqa(ds)
    assert [c.stem for c in built.charts] == ["gqa_fp16"]
    c = built.charts[0]
    assert c.summary["points"] == {"cublas_unfused": 5, "flash2": 5}
    ax_t, ax_b = [a for a in c.fig.axes][:2]
    assert ax_t.get_ylabel() == "time (ms)" and "MB" in ax_b.get_ylabel()
    hkv = sorted(ax_t.get_lines()[0].get_xdata())
    assert hkv == [1, 2, 4, 8, 16]
    assert "H = 16" in ax_t.get_xlabel()


def test_decode_gbps_with_copy_ceilings(load):
    ds = load("cuda_multi.json")
    c = gqa_decode.build_decode(ds).charts[0]
    assert c.stem == "decode_fp16"
    assert c.summary["points"] == {"cublas_unfused": 4, "flash2": 4}
    assert c.summary["ceilings"] == ["measured copy bandwidth 3,010 GB/s", "theoretical copy bandwidth 3,352 GB/s"]
    ax = c.fig.axes[0]
    styles = {l.get_label(): l.get_linestyle() for l in ax.get_lines()}
    assert styles["measured copy bandwidth 3,010 GB/s"] == "-"
    assert styles["theoretical copy bandwidth 3,352 GB/s"] == "--"
    assert "GB/s" in ax.get_ylabel() and "Nkv" in ax.get_xlabel()
    flash2 = next(l for l in ax.get_lines() if l.get_label().startswith("flash2 "))
    assert list(flash2.get_xdata()) == [1024, 4096, 16384, 65536]


def test_cpu_decode_has_only_the_measured_ceiling(load):
    c = gqa_decode.build_decode(load("cpu_small.json")).charts[0]
    assert c.summary["ceilings"] == ["measured copy bandwidth 11.5 GB/s"]


def test_decode_problems_get_their_own_line_style(load):
    # harness output: one decode shape; cpu_small: one too; merge both runs -> run styles
    ds = load("cpu_small.json", "cpu_small_noise.json")
    c = gqa_decode.build_decode(ds).charts[0]
    ax = c.fig.axes[0]
    styles = {l.get_label(): l.get_linestyle() for l in ax.get_lines() if "bandwidth" not in l.get_label()}
    assert len(styles) == 4  # 2 variants x 2 runs
    assert len(set(styles.values())) == 2  # one line style per run
    assert c.summary["log_y"] is False


def test_tile_panel_with_nothing_run_becomes_a_note(fx, tmp_path):
    import json

    from abreport.load import load_dataset
    doc = json.load(open(fx("cpu_harness.json")))
    for b in doc["benchmarks"]:
        if b["variant"] == "flash1" and b["Nq"] == 256 and b["d"] == 64 and b["mask"] == "causal":
            b.update(status="skipped", error_message="tile too large", time_ms=None, tflops=None, gbps=None)
    p = tmp_path / "t.json"
    p.write_text(json.dumps(doc))
    built = tiles.build(load_dataset([str(p)]))
    assert set(built.charts[0].summary["panels"]) == {"flash2 d=64"}
    assert built.notes == ["tiles (fp32): flash1 d=64: no tile shape ran (tile too large)"]


def test_decode_points_above_the_copy_ceiling_are_marked_and_said(load, tmp_path):
    import json

    from abreport.load import load_dataset
    from conftest import fixture_path

    assert gqa_decode.build_decode(load("cuda_multi.json")).charts[0].summary["above_ceiling"] == []  # no note
    doc = json.load(open(fixture_path("cuda_multi.json")))
    ceiling = doc["context"]["ceilings"]["measured"]["bandwidth_gbps"]
    e = next(b for b in doc["benchmarks"] if b["variant"] == "flash2" and b["status"] == "ok"
             and b["Nq"] <= gqa_decode.DECODE_MAX_NQ)
    e["time_ms"] = e["real_time"] = e["bytes"] / (1.5 * ceiling) / 1e6  # 1.5x the ceiling
    e["gbps"] = 1.5 * ceiling
    p = tmp_path / "above.json"
    p.write_text(json.dumps(doc))
    c = gqa_decode.build_decode(load_dataset([str(p)])).charts[0]
    assert c.summary["above_ceiling"] == [f"flash2 Nkv={e['Nkv']} Hkv={e['Hkv']}"]
    assert any("above the measured copy bandwidth" in t.get_text() for t in c.fig.texts)

"""Library peers in the report (no PyTorch needed: hand-made entries in attnbench's schema)
and the GQA chart's like-with-like tile selection."""
from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from abreport import gqa_decode, report, roofline, speedup
from abreport.data import best_by
from abreport.errors import InputError
from abreport.load import load_dataset
from make_fixtures import context, entry


def peer(variant, group, Hkv, Nq, Nkv, mask, time_ms, d=64, err_ok=True, status="ok"):
    rng = np.random.default_rng(1)
    e = entry("x", "cpu", "fp32", group, 1, 8, Hkv, Nq, Nkv, d, mask, 64, 64, 0.01, 8.0, rng, status=status,
              msg="no kernel" if status != "ok" else "")
    name = f"{variant}/torch/fp32/B:1/H:8/Hkv:{Hkv}/Nq:{Nq}/Nkv:{Nkv}/d:{d}/mask:{mask}/on:cpu"
    e.update(name=name, run_name=name, variant=variant, backend="torch", Br=0, Bc=0, peer=True,
             peer_device="cpu", library="torch 9.9", bytes=e["bytes_min"])
    if status == "ok":
        e.update(time_ms=time_ms, real_time=time_ms, tflops=e["flops"] / time_ms / 1e9,
                 gbps=e["bytes"] / time_ms / 1e6, intensity=e["flops"] / e["bytes"], err_ok=err_ok)
    return e


def ours(variant, group, Hkv, Nq, mask, Br, Bc, time_ms, d=64):
    e = entry(variant, "cpu", "fp32", group, 1, 8, Hkv, Nq, Nq, d, mask, Br, Bc, 0.02, 9.0,
              np.random.default_rng(2))
    e.update(time_ms=time_ms, real_time=time_ms, tflops=e["flops"] / time_ms / 1e9, gbps=e["bytes"] / time_ms / 1e6)
    return e


def write(tmp_path, benchmarks, name="run.json"):
    p = tmp_path / name
    p.write_text(json.dumps({"context": context("cpu", "Test CPU", None, "quick"), "benchmarks": benchmarks}))
    return load_dataset([str(p)])


def gqa_run():
    """flash1 in the gqa group at 64x64 (Hkv 1, 2, 4); at Hkv = 8 the seq group's 64x64 and the
    tiles group's 128x128, which is faster and models fewer bytes (the bug's situation)."""
    b = [ours("flash1", "gqa", h, 1024, "causal", 64, 64, 30.0 - h) for h in (1, 2, 4)]
    b.append(ours("flash1", "seq", 8, 1024, "causal", 64, 64, 25.0))
    b += [ours("flash1", "tiles", 8, 1024, "causal", br, bc, t) for br, bc, t in ((128, 128, 12.0), (32, 32, 40.0))]
    b += [peer("torch_sdpa", "gqa", h, 1024, 1024, "causal", 10.0 + h) for h in (1, 2, 4)]
    b.append(peer("torch_sdpa", "seq", 8, 1024, 1024, "causal", 14.0))
    return b


def test_gqa_chart_draws_one_tile_per_variant(tmp_path):
    ds = write(tmp_path, gqa_run())
    c = gqa_decode.build_gqa(ds).charts[0]
    assert c.summary["tiles"] == {"flash1": ["64×64"]}
    assert c.summary["points"] == {"flash1": 4, "torch_sdpa": 4}
    at_64 = sorted((e.Hkv, e.bytes) for e in ds.ok_entries if e.variant == "flash1" and (e.Br, e.Bc) == (64, 64))
    assert c.summary["bytes"]["flash1"] == [b for _, b in at_64]  # every point's bytes from the 64x64 model
    ax_t = c.fig.axes[0]
    line = next(l for l in ax_t.get_lines() if l.get_label() == "flash1 (64×64)")
    assert list(line.get_ydata()) == [29.0, 28.0, 26.0, 25.0]  # 25 ms (64x64), not the tile sweep's 12 ms
    sdpa = next(l for l in ax_t.get_lines() if l.get_label() == "torch_sdpa")
    assert sdpa.get_linestyle() == ":" and sdpa.get_markerfacecolor() == "none"


def test_the_fixture_shows_the_old_selection_mixing_tiles(tmp_path):
    """Negative control: the fastest tile per point (the old rule) takes 128x128 at Hkv = 8,
    so the like-with-like test above fails on it."""
    ds = write(tmp_path, gqa_run())
    best = best_by([e for e in ds.ok_entries if e.variant == "flash1"], key=lambda e: e.Hkv)
    assert {(e.Br, e.Bc) for e in best.values()} == {(64, 64), (128, 128)}
    at_64 = sorted((e.Hkv, e.bytes) for e in ds.ok_entries if e.variant == "flash1" and (e.Br, e.Bc) == (64, 64))
    assert [best[h].bytes for h in sorted(best)] != [b for _, b in at_64]


def test_gqa_tile_without_a_gqa_group_covers_the_most_hkv(tmp_path):
    b = [ours("flash1", "custom", h, 512, "none", 64, 64, 5.0) for h in (1, 2, 4, 8)]
    b.append(ours("flash1", "custom", 8, 512, "none", 128, 64, 1.0))
    c = gqa_decode.build_gqa(write(tmp_path, b)).charts[0]
    assert c.summary["tiles"] == {"flash1": ["64×64"]} and c.summary["points"] == {"flash1": 4}


def test_versus_libraries_table(tmp_path):
    b = [ours("naive", "seq", 8, n, "causal", 64, 64, 4.0 * n / 256) for n in (256, 512)]
    b += [ours("flash2", "seq", 8, n, "causal", br, 64, t) for n in (256, 512) for br, t in ((64, n / 256), (128, 0.5 * n / 256))]
    b.append(ours("linear", "seq", 8, 256, "causal", 64, 64, 0.01))  # another function (math linear): left out
    b.append(peer("torch_sdpa", "seq", 8, 256, 256, "causal", 0.25))
    b.append(peer("torch_sdpa_math", "seq", 8, 256, 256, "causal", 0.1, err_ok=False))  # never fastest
    b.append(peer("torch_sdpa", "seq", 8, 512, 512, "causal", 2.0))
    b.append(peer("torch_sdpa_efficient", "seq", 8, 512, 512, "causal", 0, status="skipped"))
    ds = write(tmp_path, b)
    rows = report.versus_rows(ds)
    assert [(o.variant, o.Br, lib.variant, round(r, 3)) for o, lib, r in rows] == [
        ("flash2", 128, "torch_sdpa", 2.0), ("flash2", 128, "torch_sdpa", 0.5)]
    path, _ = report.write(ds, str(tmp_path / "rep"), formats=("png",))
    text = open(path).read()
    sec = text.split("## Versus libraries")[1].split("\n## ")[0]
    assert "| fp32 | B1 H8 Hkv8 Nq256 Nkv256 d64 causal | cpu | flash2 (Br128 Bc64) | 0.5 | torch_sdpa | 0.25 | 2.00× |" in sec
    assert "torch 9.9" in sec and "the library is faster on 1" in sec
    assert "torch_sdpa_efficient" in text.split("## Skipped and failed")[1]
    # peers pair with the cpu rows: speedup over naive has a torch_sdpa series, drawn dotted
    sp = next(c for c in speedup.build(ds).charts if c.stem == "speedup_fp32")
    assert sp.summary["ratios"]["torch_sdpa"] == [(64, 256, "causal", 16.0), (64, 512, "causal", 4.0)]
    rf = roofline.build(ds).charts[0]
    assert rf.summary["peers"] == ["torch_sdpa", "torch_sdpa_math"]


def test_versus_counts_a_fused_library_row_as_the_library(tmp_path):
    """cudnn_sdpa (a cuda row tagged library + fused) is the library side; cublas_unfused
    (tagged library, but attnbench's softmax around cuBLAS GEMMs) stays on attnbench's side."""
    b = []
    for v, t in (("flash2", 2.0), ("cublas_unfused", 1.5), ("cudnn_sdpa", 1.0)):
        e = entry(v, "cuda", "bf16", "seq", 1, 8, 8, 256, 256, 64, "causal", 64, 64, 0.02, 9.0,
                  np.random.default_rng(3))
        e.update(time_ms=t, real_time=t, tflops=e["flops"] / t / 1e9, gbps=e["bytes"] / t / 1e6)
        b.append(e)
    c = context("cuda", "Test GPU", None, "quick")
    c["variants"].append({**c["variants"][-1], "name": "cudnn_sdpa", "tags": ["fused", "library"]})
    p = tmp_path / "cuda.json"
    p.write_text(json.dumps({"context": c, "benchmarks": b}))
    ds = load_dataset([str(p)])
    rows = report.versus_rows(ds)
    assert [(o.variant, lib.variant, round(r, 2)) for o, lib, r in rows] == [("cublas_unfused", "cudnn_sdpa", 1.5)]


def test_no_peers_says_so(load, tmp_path):
    path, _ = report.write(load("cpu_small.json"), str(tmp_path / "r"), formats=("png",))
    assert "No library peers in this run" in open(path).read()


def test_peer_fields_are_checked(tmp_path):
    good = peer("torch_sdpa", "seq", 8, 256, 256, "causal", 1.0)
    write(tmp_path, [good])  # a peers-only file loads
    for change, field in (({"peer_device": "tpu"}, "peer_device"), ({"backend": "cpu"}, "backend"),
                          ({"Br": -1}, "Br"), ({"peer": "yes"}, "peer")):
        e = copy.deepcopy(good)
        e.update(change)
        with pytest.raises(InputError, match=field):
            write(tmp_path, [e])
    e = ours("flash2", "seq", 8, 256, "causal", 64, 64, 1.0)
    e["Br"] = 0  # an attnbench row still needs its tiles
    with pytest.raises(InputError, match="Br"):
        write(tmp_path, [e])

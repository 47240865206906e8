"""Speedup and TFLOP/s vs sequence length: panels, baselines, same-run pairing."""
from __future__ import annotations

import pytest

from abreport import speedup


def _by_stem(built):
    return {c.stem: c for c in built.charts}


def test_cpu_speedup_against_naive_panels_per_head_dim_and_mask(load):
    ds = load("cpu_small.json")
    charts = _by_stem(speedup.build(ds))
    assert set(charts) == {"speedup_fp32", "tflops_seq_fp32"}
    sp = charts["speedup_fp32"]
    assert sp.summary["baseline"] == "naive"
    axes = [a for a in sp.fig.axes]
    assert len(axes) == 4  # d in {32, 64} x mask in {none, causal}
    assert {a.get_title() for a in axes} == {"d = 32, mask none", "d = 32, mask causal",
                                             "d = 64, mask none", "d = 64, mask causal"}
    # naive was skipped at N=512, d=64, none: 12 problems, 11 pairs per variant
    assert sp.summary["points"] == {"flash1": 11, "flash2": 11}
    for a in axes:
        assert a.get_xscale() == "log" and a.get_yscale() == "log"
        assert "naive" in a.get_ylabel()
    tf = charts["tflops_seq_fp32"]
    assert tf.summary["points"] == {"naive": 11, "flash1": 12, "flash2": 12}
    assert "sequence length" in tf.fig.axes[-1].get_xlabel()


def test_ratios_are_baseline_time_over_variant_time(load):
    ds = load("cpu_small.json")
    sp = _by_stem(speedup.build(ds))["speedup_fp32"]
    seq = {(e.variant, e.d, e.mask, e.Nq): e.time_ms for e in ds.ok_entries if e.group == "seq"}
    for d, n, mask, r in sp.summary["ratios"]["flash2"]:
        assert r == pytest.approx(seq[("naive", d, mask, n)] / seq[("flash2", d, mask, n)])


def test_cuda_default_baseline_and_override(load):
    ds = load("cuda_multi.json")
    charts = _by_stem(speedup.build(ds))
    assert charts["speedup_fp16"].summary["baseline"] == "cublas_unfused"
    assert set(charts["speedup_fp16"].summary["points"]) == {"flash1", "flash2"}
    over = _by_stem(speedup.build(ds, baseline="flash1"))["speedup_fp16"]
    assert over.summary["baseline"] == "flash1"
    assert set(over.summary["points"]) == {"cublas_unfused", "flash2"}


def test_missing_baseline_gives_a_note_not_a_chart(load):
    ds = load("cpu_small.json")
    built = speedup.build(ds, baseline="no_such_variant")
    assert [c.stem for c in built.charts] == ["tflops_seq_fp32"]
    assert any("no_such_variant" in n for n in built.notes)


def test_two_runs_pair_only_within_each_run(load):
    ds = load("cpu_small.json", "cpu_small_slower.json")
    sp = _by_stem(speedup.build(ds))["speedup_fp32"]
    ratios = sp.summary["ratios"]
    assert set(ratios) == {"flash1 [cpu_small]", "flash2 [cpu_small]",
                           "flash1 [cpu_small_slower]", "flash2 [cpu_small_slower]"}
    a = {(d, n, m): r for d, n, m, r in ratios["flash2 [cpu_small]"]}
    b = {(d, n, m): r for d, n, m, r in ratios["flash2 [cpu_small_slower]"]}
    for k in a:  # the slower run's flash2 causal is 1.6x slower against its own naive
        assert b[k] == pytest.approx(a[k] / 1.6 if k[2] == "causal" else a[k])

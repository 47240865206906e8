"""Attention against its alternatives (scripts/abreport/alternatives.py): scans (rows
tagged scan in context.variants) pair with the fastest causal softmax entry of the same run and
shape at each L; the crossover is where attention time / scan time passes 1 for good,
log-interpolated; "not reached" and "below the measured range" are said as such. Negative
controls: a scan with no attention entry of its shape pairs with nothing, and a non-causal
attention entry is not its partner."""
from __future__ import annotations

import dataclasses
import math

from abreport import alternatives, report
from abreport.data import Ceilings, Dataset, Entry, Run
from abreport.variants import Capabilities, VariantRow


def _row(name: str, math_: str, tags: tuple[str, ...]) -> VariantRow:
    return VariantRow(name=name, backend="cpu", math=math_, summary="", writes_lse=False, tags=tags,
                      capabilities=Capabilities(dtypes=("fp32",), masks=("causal",), head_dims=(), gqa=False,
                                                max_nq=None))


ROWS = (_row("flash1", "softmax", ("fused",)), _row("flash2", "softmax", ("fused", "tiled")),
        _row("selective_scan", "selective_scan", ("scan",)), _row("wkv", "wkv", ("scan",)))


def _entry(variant: str, L: int, time_ms: float, mask: str = "causal", H: int = 4) -> Entry:
    return Entry(run="r", name=f"{variant}/{L}/{mask}/{H}", variant=variant, backend="cpu", dtype="fp32", mask=mask,
                 group="alternatives", status="ok", B=1, H=H, Hkv=H, Nq=L, Nkv=L, d=64, Br=64, Bc=64,
                 time_ms=time_ms, tflops=1.0 / time_ms, gbps=1.0, intensity=1.0, flops=1.0, bytes=1.0)


def _ds(entries: list[Entry]) -> Dataset:
    return Dataset(runs=[Run(path="x.json", label="r", context={}, ceilings=Ceilings(), entries=entries,
                             variants=ROWS)])


def _quadratic_against_linear() -> list[Entry]:
    # attention 1e-5 L^2 ms, its slower twin flash1 2x, the selective scan 4e-3 L ms: equal at L = 400;
    # wkv 1e-4 L: faster everywhere measured.
    out = []
    for L in (256, 1024, 4096):
        out += [_entry("flash2", L, 1e-5 * L * L), _entry("flash1", L, 2e-5 * L * L),
                _entry("selective_scan", L, 4e-3 * L), _entry("wkv", L, 1e-4 * L)]
    return out


def test_pairs_and_crossover():
    data = alternatives.series(_ds(_quadratic_against_linear()))
    assert len(data) == 1
    rows = next(iter(data.values()))
    assert sorted(rows) == ["selective_scan", "wkv"]
    assert all(p.attention.variant == "flash2" for p in rows["selective_scan"])  # the fastest softmax row
    c = alternatives.crossover(rows["selective_scan"])
    assert c.length is not None and abs(c.length - 400) < 1e-6  # ratio 2.5e-3 L: exactly linear in log-log
    assert "between the measured 256" in c.text
    w = alternatives.crossover(rows["wkv"])
    assert w.length is None and w.text.startswith("below the measured range")


def test_not_reached_and_passing_for_good():
    es = [_entry("flash2", L, 1e-5 * L * L) for L in (256, 1024, 4096)]
    slow = [_entry("selective_scan", L, 1.0 * L) for L in (256, 1024, 4096)]
    c = alternatives.crossover(next(iter(alternatives.series(_ds(es + slow)).values()))["selective_scan"])
    assert c.length is None and c.text.startswith("not reached in the measured range")
    # Faster at 256, slower at 1024, faster at 4096: the crossover is the last passage, between 1024 and 4096.
    wobble = [_entry("selective_scan", 256, 0.1), _entry("selective_scan", 1024, 100.0),
              _entry("selective_scan", 4096, 1.0)]
    c = alternatives.crossover(next(iter(alternatives.series(_ds(es + wobble)).values()))["selective_scan"])
    assert c.length is not None and 1024 < c.length < 4096


def test_negative_controls_other_shape_and_mask_do_not_pair():
    scans = [_entry("selective_scan", L, 1.0) for L in (256, 1024)]
    other_width = [_entry("flash2", L, 2.0, H=8) for L in (256, 1024)]
    not_causal = [_entry("flash2", L, 2.0, mask="none") for L in (256, 1024)]
    assert alternatives.series(_ds(scans + other_width + not_causal)) == {}
    built = alternatives.build(_ds(scans + other_width + not_causal))
    assert built.charts == [] and any("no causal softmax entry" in n for n in built.notes)


def test_chart_and_report_section():
    ds = _ds(_quadratic_against_linear())
    built = alternatives.build(ds)
    assert [c.stem for c in built.charts] == ["alternatives_fp32"]
    s = built.charts[0].summary
    assert s["lengths"] == [256, 1024, 4096] and s["attention"] == ["flash2"]
    assert math.isclose(s["crossover"]["selective_scan"], 400) and s["crossover"]["wkv"] is None
    text = "\n".join(alternatives.section(ds))
    assert "## Attention against its alternatives" in text
    assert "| 1024 | flash2 | 10.5 | 4.1 | 2.56× | 0.102 | 102.40× |" in text
    assert "crossover of **selective_scan**: L ≈ 400" in text
    # The whole report carries the section and the chart.
    md = report.render(ds, built, "/tmp")
    assert "crossover of **wkv**: below the measured range" in md
    assert alternatives.section(_ds([dataclasses.replace(e, status="failed") for e in _quadratic_against_linear()])) == []


def test_a_sweep_over_the_state_gives_one_series_per_n():
    es = [_entry("flash2", L, 1e-5 * L * L) for L in (256, 1024)]
    for n, per_step in ((16, 4e-3), (64, 1.6e-2)):
        for L in (256, 1024):
            e = _entry("selective_scan", L, per_step * L)
            es.append(dataclasses.replace(e, name=f"{e.name}/N:{n}", raw={"dstate": n, "ngroups": 1}))
    rows = next(iter(alternatives.series(_ds(es)).values()))
    assert sorted(rows) == ["selective_scan N16", "selective_scan N64"]
    assert [p.L for p in rows["selective_scan N64"]] == [256, 1024]
    assert alternatives.crossover(rows["selective_scan N16"]).length is not None
    assert alternatives.crossover(rows["selective_scan N64"]).text.startswith("not reached")  # equal at L = 1600
    assert [c.summary["scans"] for c in alternatives.build(_ds(es)).charts][0].keys() == rows.keys()

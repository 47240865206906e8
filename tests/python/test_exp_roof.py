"""The exp roof: entries' `exps` and the ceilings' exp rate make a third lower bound on
the time; the report, the roofline, the bound breakdown chart and the HTML page name the binding roof
among compute, memory and exp. Files without `exps` (written before the exp roof) keep compute/memory
bounds and say the exp roof is unknown. Controls: a rate high enough that exp never binds draws no
exp marks; an entry without exps is never exp-bound."""
from __future__ import annotations

import dataclasses
import json

import pytest

from abreport import bounds, html_report, report, roofline
from abreport.errors import InputError
from abreport.load import load_dataset
from abreport.roofs import position


def _with_exps(fx, tmp_path, name: str, rate_measured=None, rate_theoretical=None, per_pair: float = 1.05,
               only=None) -> str:
    """A copy of fixture `name` whose ok entries carry exps = per_pair x flops / (4 d) (only the
    variants in `only`, when given) and whose ceilings carry the given exp rates."""
    doc = json.load(open(fx(name)))
    ceil = doc["context"].setdefault("ceilings", {})
    if rate_measured is not None:
        ceil.setdefault("measured", {})["exps_per_s"] = rate_measured
    if rate_theoretical is not None:
        ceil.setdefault("theoretical", {})["exps_per_s"] = rate_theoretical
    for e in doc["benchmarks"]:
        if e.get("flops") and (only is None or e["variant"] in only):
            e["exps"] = per_pair * e["flops"] / (4 * e["d"])
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return str(path)


def _slowest_exp_rate(ds) -> float:
    """An exp rate at which the exp bound of every entry is 3x its compute/memory bound."""
    worst = []
    for e in ds.ok_entries:
        p = position(e, ds.ceilings)
        worst.append(e.exps / (3 * max(p.compute_ms, p.memory_ms) * 1e-3))
    return min(worst)


def test_exp_binds_and_percent_of_bound_follows_the_exp_time(fx, tmp_path):
    ds = load_dataset([_with_exps(fx, tmp_path, "cpu_small.json", rate_measured=1e12)])
    rate = _slowest_exp_rate(ds)
    ds = load_dataset([_with_exps(fx, tmp_path, "cpu_small.json", rate_measured=rate)])
    assert ds.ceilings.measured.exps_per_s == pytest.approx(rate)
    for e in ds.ok_entries:
        p = position(e, ds.ceilings)
        assert p.bound == "exp"
        exp_ms = e.exps / rate * 1e3
        assert p.exp_ms == pytest.approx(exp_ms)
        assert p.pct_of_roof == pytest.approx(100 * exp_ms / e.time_ms, rel=1e-6)
        assert p.attainable_tflops == pytest.approx(e.flops / (exp_ms * 1e-3) / 1e12)
        assert p.exp_ms > p.compute_ms and p.exp_ms > p.memory_ms


def test_a_fast_exp_rate_leaves_compute_and_memory_as_before(load, fx, tmp_path):
    """Control: the third roof changes nothing where it does not bind."""
    old = load("cpu_small.json")
    ds = load_dataset([_with_exps(fx, tmp_path, "cpu_small.json", rate_measured=1e20)])
    for a, b in zip(old.ok_entries, ds.ok_entries):
        pa, pb = position(a, old.ceilings), position(b, ds.ceilings)
        assert pa.bound == pb.bound and pa.bound in ("compute", "memory")
        assert pa.pct_of_roof == pb.pct_of_roof and pa.attainable_tflops == pb.attainable_tflops
        assert pb.exp_ms is not None and pb.exp_note == "" and pa.exp_ms is None
    assert roofline.build(ds).charts[0].summary["exp_marks"] == {}


def test_old_files_say_the_exp_roof_is_unknown(load, tmp_path):
    ds = load("cpu_small.json")  # no exps, no exp rate: a file from before the exp roof
    for e in ds.ok_entries:
        p = position(e, ds.ceilings)
        assert p.exp_ms is None and p.bound in ("compute", "memory")
        assert "exp roof unknown" in p.exp_note
    path, built = report.write(ds, str(tmp_path), formats=("png",))
    md = open(path).read()
    assert "the exp roof is unknown" in md
    assert "exp roof unknown: the entry records no exps" in md
    rows = [l for l in md.splitlines() if l.startswith("| naive | fp32 |")]
    assert rows and "(exp roof unknown for" in rows[0]
    assert "bounds_fp32" not in {c.stem for c in built.charts}
    assert any("no entry records exps" in n for n in built.notes)
    # One entry with exps but no exp rate in the ceilings: the chart is drawn, its exp bars unknown.
    doc = json.load(open(ds.runs[0].path))
    doc["benchmarks"][0]["exps"] = 1e6
    p = tmp_path / "one.json"
    p.write_text(json.dumps(doc))
    chart = bounds.build(load_dataset([str(p)])).charts[0]
    assert all(r["exp"] is None for r in chart.summary["rows"].values())


def test_a_peer_without_exps_says_a_library_is_not_modeled(load):
    ds = load("cpu_small.json")
    e = ds.ok_entries[0]
    assert "a file written before the exp roof" in position(e, ds.ceilings).exp_note
    e = dataclasses.replace(e, peer_device="cpu")  # a library peer: its exponentials are not modeled
    assert position(e, ds.ceilings).exp_note == "exp roof unknown: a library's exponentials are not modeled"


def test_entries_without_exps_are_never_exp_bound(fx, tmp_path):
    """Control: a rate that would bind everything leaves an entry without exps on compute/memory."""
    ds = load_dataset([_with_exps(fx, tmp_path, "cpu_small.json", rate_measured=1.0, only={"flash2"})])
    seen = set()
    for e in ds.ok_entries:
        p = position(e, ds.ceilings)
        seen.add((e.variant == "flash2", p.bound == "exp"))
    assert seen == {(True, True), (False, False)}


def test_report_names_the_exp_bound_and_the_rate(fx, tmp_path):
    ds = load_dataset([_with_exps(fx, tmp_path, "cpu_small.json", rate_measured=1e12)])
    rate = _slowest_exp_rate(ds)
    ds = load_dataset([_with_exps(fx, tmp_path, "cpu_small.json", rate_measured=rate)])
    path, built = report.write(ds, str(tmp_path / "out"), formats=("png",))
    md = open(path).read()
    assert "| exp rate (the exp roof) |" in md
    table = [l.split("|")[1:-1] for l in md.splitlines() if l.startswith("| flash2 | fp32 |")]
    assert table and table[0][9].strip() == "exp"
    line = next(l for l in md.splitlines() if l.startswith("- **flash2**"))
    assert "exp-bound" in line and "% of that roof" in line
    stems = [c.stem for c in built.charts]
    assert "bounds_fp32" in stems and "![Bound breakdown (fp32)](bounds_fp32.png)" in md
    rows = next(c for c in built.charts if c.stem == "bounds_fp32").summary["rows"]
    assert {r["binding"] for r in rows.values()} == {"exp"}
    assert all(r["exp"] > r["compute"] and r["exp"] > r["memory"] for r in rows.values())
    marks = next(c for c in built.charts if c.stem == "roofline_fp32").summary["exp_marks"]
    assert len(marks) == len(ds.ok_entries)


def test_gpu_theoretical_rate_binds_hd64_style_entries(fx, tmp_path):
    """cuda_multi (H100): with the datasheet exp rate (132 x 16 x 1830 MHz) and 1.03 exps per pair,
    an entry at the tensor peak would be exp-bound exactly when 4d x rate < peak: the report's
    binding roof follows the head dim, not a fixed verdict."""
    ds = load_dataset([_with_exps(fx, tmp_path, "cuda_multi.json", rate_theoretical=132 * 16 * 1.83e9,
                                  per_pair=1.031)])
    for e in ds.ok_entries:
        p = position(e, ds.ceilings)
        assert p.exp_note == "exp roof from the theoretical exp rate"
        assert p.exp_ms == pytest.approx(e.exps / (132 * 16 * 1.83e9) * 1e3)
        assert p.bound == max(p.bounds_ms, key=lambda k: p.bounds_ms[k] if p.bounds_ms[k] is not None else -1)


def test_bounds_chart_alone(fx, tmp_path):
    ds = load_dataset([_with_exps(fx, tmp_path, "cpu_small.json", rate_measured=1e20)])
    built = bounds.build(ds)
    assert [c.stem for c in built.charts] == ["bounds_fp32"]
    rows = built.charts[0].summary["rows"]
    assert set(rows) == {e.variant for e in ds.ok_entries}
    assert {r["binding"] for r in rows.values()} <= {"compute", "memory"}


def test_html_page_carries_the_exp_roof(fx, tmp_path):
    ds = load_dataset([_with_exps(fx, tmp_path, "cpu_small.json", rate_measured=1e12)])
    ds = load_dataset([_with_exps(fx, tmp_path, "cpu_small.json", rate_measured=_slowest_exp_rate(ds))])
    data = html_report.report_data(ds)
    charts = {c["id"]: c for c in data["charts"]}
    roof = charts["roofline_fp32"]
    assert [r["exp"] for r in roof["roofs"]] == [pytest.approx(ds.ceilings.measured.exps_per_s)]
    assert len(roof["exp_marks"]) == len(roof["points"])
    b = charts["bounds_fp32"]
    assert b["roofs"] == ["compute", "memory", "exp"] and {r[2] for r in b["rows"]} == {"exp"}
    assert all(i["roof"]["bound"] == "exp" and i["roof"]["bounds_ms"]["exp"] > 0 for i in data["info"])
    page = html_report.render(data)
    assert "renderBounds" in page and "exp_marks" in page


def test_negative_exps_are_refused(fx, tmp_path):
    doc = json.load(open(fx("cpu_small.json")))
    doc["benchmarks"][0]["exps"] = -1
    path = tmp_path / "neg.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match="exps"):
        load_dataset([str(path)])

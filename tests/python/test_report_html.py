"""report.html and compare's HTML page, without a browser: what the page carries.

Every expectation is computed from the results file itself, not from the page's own data layer;
each check has a control that makes it fail (an entry dropped, a script fetched from the network).
"""
from __future__ import annotations

import glob
import json
import os
import re
import subprocess
import sys

import pytest

from conftest import ENTRY, ROOT, fixture_path

from abreport import compare, html_report, report
from abreport.chart import Built
from abreport.data import Dataset
from abreport.load import load_run



def committed_cpu_run() -> str:
    """The newest committed CPU quick run whose report folder holds report.html (the
    committed results include the page); today results/amd-epyc/quick-bd1d079.json."""
    runs = []
    for path in glob.glob(os.path.join(ROOT, "results", "*", "quick-*.json")):
        if path.endswith(".peers.json") or not os.path.isfile(os.path.join(path[:-5], "report.html")):
            continue
        with open(path, encoding="utf-8") as f:
            ctx = json.load(f)["context"]
        if ctx.get("backend") == "cpu":
            runs.append((ctx.get("date", ""), path))
    assert runs, "no committed CPU quick run under results/ has a report.html beside its report.md"
    return max(runs)[1]


RUN_JSON = committed_cpu_run()
MAX_PAGE_BYTES = 2_000_000  # the committed CPU quick run's page is ~0.5 MB; docs/charts.md states the bound


def page_data(html_text: str) -> dict:
    m = re.search(r'<script type="application/json" id="abdata">(.*?)</script>', html_text, re.S)
    assert m, "no embedded data"
    return json.loads(m.group(1))


def missing_entries(data: dict, run_json: str) -> list[str]:
    """Entries that ran in the results file but are not on the page exactly as the file holds them."""
    with open(run_json, encoding="utf-8") as f:
        ran = [e for e in json.load(f)["benchmarks"] if e["status"] == "ok"]
    on_page = {e["name"]: e for e in data["entries"]}
    return [e["name"] for e in ran if on_page.get(e["name"]) != e]


def external_refs(html_text: str) -> list[str]:
    """Anything the page would fetch: src/href to another host, CSS url() or @import, fetch/XHR."""
    bad = re.findall(r"""(?:src|href)\s*=\s*["']?\s*((?:https?:)?//[^"'\s>]+)""", html_text, re.I)
    bad += re.findall(r"""url\(\s*["']?((?:https?:)?//[^)"']+)""", html_text, re.I)
    bad += re.findall(r"@import\b[^;]*", html_text)
    bad += re.findall(r"\b(?:fetch|XMLHttpRequest|importScripts)\s*\(", html_text)
    bad += re.findall(r"<script[^>]*\bsrc\s*=", html_text, re.I)
    return bad


@pytest.fixture(scope="module")
def committed():
    ds = Dataset(runs=[load_run(RUN_JSON)])
    return ds, html_report.render(html_report.report_data(ds))


def test_every_entry_that_ran_is_on_the_page_with_every_field(committed):
    _, text = committed
    data = page_data(text)
    assert missing_entries(data, RUN_JSON) == []
    # control: drop one entry, alter a field of another: both are caught
    dropped = dict(data, entries=data["entries"][1:])
    assert missing_entries(dropped, RUN_JSON) == [data["entries"][0]["name"]]
    altered = dict(data, entries=[dict(data["entries"][0], time_ms=1.0)] + data["entries"][1:])
    assert missing_entries(altered, RUN_JSON) == [data["entries"][0]["name"]]


def test_charts_place_each_entry_from_its_own_fields(committed):
    _, text = committed
    data = page_data(text)
    E = data["entries"]
    charts = {c["id"]: c for c in data["charts"]}
    with open(RUN_JSON, encoding="utf-8") as f:
        ran = [e for e in json.load(f)["benchmarks"] if e["status"] == "ok"]
    for dt in {e["dtype"] for e in ran}:
        pts = charts[f"roofline_{dt}"]["points"]
        assert sorted(E[i]["name"] for i, _, _ in pts) == sorted(e["name"] for e in ran if e["dtype"] == dt)
        assert all((x, y) == (E[i]["intensity"], E[i]["tflops"]) for i, x, y in pts)  # no measured bytes here
    roofs = charts["roofline_fp32"]["roofs"]
    with open(RUN_JSON, encoding="utf-8") as f:
        meas = json.load(f)["context"]["ceilings"]["measured"]
    assert [(r["kind"], r["bw"], r["peak"]) for r in roofs] == [("measured", meas["bandwidth_gbps"], meas["tflops"]["fp32"])]
    assert roofs[0]["ridge"] == pytest.approx(meas["tflops"]["fp32"] * 1e3 / meas["bandwidth_gbps"])
    # speedup: baseline time / entry time, same problem, against the cpu row tagged baseline (naive)
    with open(RUN_JSON, encoding="utf-8") as f:
        rows_ = json.load(f)["context"]["variants"]
    baseline = next(r["name"] for r in rows_ if r["backend"] == "cpu" and "baseline" in r["tags"])
    n = 0
    for panel in charts["speedup_fp32"]["panels"]:
        for s in panel["series"]:
            for i, x, ratio, b in s["points"]:
                e, base = E[i], E[b]
                assert base["variant"] == baseline and x == e["Nq"] == e["Nkv"]
                assert [base[k] for k in ("B", "H", "Hkv", "Nq", "Nkv", "d", "mask", "dtype")] == \
                       [e[k] for k in ("B", "H", "Hkv", "Nq", "Nkv", "d", "mask", "dtype")]
                assert ratio == pytest.approx(base["time_ms"] / e["time_ms"])
                n += 1
    assert n > 20
    # the versus table: attnbench / library time of the same problem
    rows = charts["versus"]["rows"]
    assert bool(rows) == any(e.get("peer") for e in ran) and all(not E[o].get("peer") and E[lib].get("peer") and r == pytest.approx(E[o]["time_ms"] / E[lib]["time_ms"])
                        for o, lib, r in rows)


def test_filters_have_every_facet_and_pass_defaults_to_fwd(committed, tmp_path):
    _, text = committed
    facets = {f["key"]: f["values"] for f in page_data(text)["facets"]}
    assert list(facets) == ["variant", "dtype", "mask", "d", "pass", "backend"]
    with open(RUN_JSON, encoding="utf-8") as f:
        ran = [e for e in json.load(f)["benchmarks"] if e["status"] == "ok"]
    assert facets["pass"] == sorted({e.get("pass", "fwd") for e in ran}) and "fwd" in facets["pass"]
    assert set(facets["backend"]) == {e["backend"] for e in ran}
    assert facets["d"] == [str(d) for d in sorted({e["d"] for e in ran})]
    assert set(facets["variant"]) == {e["variant"] for e in ran} and set(facets["mask"]) == {e["mask"] for e in ran}
    # an entry that says its pass is filtered by it
    with open(fixture_path("cpu_small.json"), encoding="utf-8") as f:
        run = json.load(f)
    i = next(k for k, e in enumerate(run["benchmarks"]) if e["status"] == "ok")
    run["benchmarks"][i]["pass"] = "bwd"
    p = tmp_path / "bwd.json"
    p.write_text(json.dumps(run))
    data = html_report.report_data(Dataset(runs=[load_run(str(p))]))
    assert {f["key"]: f["values"] for f in data["facets"]}["pass"] == ["bwd", "fwd"]
    name = run["benchmarks"][i]["name"]
    j = next(k for k, e in enumerate(data["entries"]) if e["name"] == name)
    assert data["info"][j]["f"][4] == "bwd"
    assert sum(1 for x in data["info"] if x["f"][4] == "bwd") == 1


def test_page_is_self_contained_and_small(committed):
    _, text = committed
    assert external_refs(text) == []
    assert len(text.encode()) < MAX_PAGE_BYTES
    assert '<a href="report.md"' not in text  # the link is made by the script, from the data
    assert page_data(text)["links"] == [["report.md", "report.md"]]
    # control: a page that loads its library from a CDN is caught
    cdn = text.replace("<head>", '<head><script src="https://cdn.plot.ly/plotly-3.0.1.min.js"></script>', 1)
    assert external_refs(cdn) == ['https://cdn.plot.ly/plotly-3.0.1.min.js', '<script src=']


def test_data_cannot_close_the_script_element(tmp_path):
    with open(fixture_path("cpu_small.json"), encoding="utf-8") as f:
        run = json.load(f)
    e = next(e for e in run["benchmarks"] if e["status"] == "ok")
    e["label"] = "</script><script>alert(1)</script>"
    p = tmp_path / "evil.json"
    p.write_text(json.dumps(run))
    text = html_report.render(html_report.report_data(Dataset(runs=[load_run(str(p))])))
    assert text.count("</script>") == 2  # the data's and the renderer's own
    assert any(x["label"] == e["label"] for x in page_data(text)["entries"])


def test_report_writes_the_page_and_links_it(tmp_path, monkeypatch):
    ds = Dataset(runs=[load_run(fixture_path("cpu_small.json"))])
    monkeypatch.setattr(report, "build_all", lambda ds, baseline=None: Built())  # no charts: fast
    md, _ = report.write(ds, str(tmp_path / "on"))
    assert (tmp_path / "on" / "report.html").is_file()
    assert "Interactive page: [report.html](report.html)" in open(md, encoding="utf-8").read()
    md, _ = report.write(ds, str(tmp_path / "off"), html=False)
    assert not (tmp_path / "off" / "report.html").exists()
    assert "report.html" not in open(md, encoding="utf-8").read()


def test_compare_html_from_the_command_line(tmp_path):
    out = tmp_path / "cmp.html"
    r = subprocess.run([sys.executable, ENTRY, "compare", fixture_path("cpu_small.json"),
                        fixture_path("cpu_small_slower.json"), "--html", str(out)],
                       capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 1, r.stderr  # regressions, as without --html
    data = page_data(out.read_text(encoding="utf-8"))
    a, b = load_run(fixture_path("cpu_small.json")), load_run(fixture_path("cpu_small_slower.json"))
    expect = compare.compare(a, b)
    rows = data["charts"][0]["rows"]
    assert len(rows) == len(expect.rows)
    regs = sorted(r["name"] for r in rows if r["regression"])
    assert regs == sorted(r.name for r in expect.regressions) and regs
    E = data["entries"]
    for r in rows:
        if r["ratio"] is not None:
            assert r["ratio"] == pytest.approx(E[r["b"]]["time_ms"] / E[r["a"]]["time_ms"])
            assert E[r["a"]]["name"] == E[r["b"]]["name"] == r["name"]
    # control: a run against itself has no regression on the page
    same = html_report.compare_data(compare.compare(a, a), a, a)
    assert not any(r["regression"] for r in same["charts"][0]["rows"])
    assert {r["verdict"] for r in same["charts"][0]["rows"]} <= {"same", "not run"}


def test_comparison_section_holds_every_approximation_with_its_distance(committed):
    """Every entry of the file that carries a distance to exact attention is on the page's
    comparison section as an approximation, with that distance; exact rows (attnbench's softmax
    rows and the softmax peers) at 0. Control: the section is absent for a run without one."""
    _, text = committed
    data = page_data(text)
    E = data["entries"]
    charts = {c["id"]: c for c in data["charts"]}
    with open(RUN_JSON, encoding="utf-8") as f:
        ran = [e for e in json.load(f)["benchmarks"] if e["status"] == "ok"]
    approx = {e["name"]: e["approx_err_vs_exact"] for e in ran if e.get("approx_err_vs_exact") is not None}
    assert approx, "the committed CPU quick run has comparison rows"
    rows = [r for p in charts["comparison"]["problems"] for r in p]
    on_page = {E[i]["name"]: (kind, dist) for i, kind, dist, _, _ in rows}
    fastest = {n for n in approx if n in on_page}  # each variant at its fastest tile per problem
    assert fastest and all(on_page[n] == ("approximation", approx[n]) for n in fastest)
    assert {E[i]["variant"] for i, kind, *_ in rows if kind == "exact"} >= {"flash2", "torch_sdpa"}
    assert all(dist == 0 for _, kind, dist, *_ in rows if kind == "exact")
    small = html_report.report_data(Dataset(runs=[load_run(fixture_path("cpu_small.json"))]))
    assert "comparison" not in {c["id"] for c in small["charts"]}

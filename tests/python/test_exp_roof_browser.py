"""The exp roof on report.html in headless Chromium (the harness of
test_report_html_browser.py): a run whose entries carry exps and whose exp rate binds them draws
the bound breakdown (three bars per variant, the binding one outlined) and a purple exp-roof tick
over every roofline point, with no script error; hovering a bar shows its entry's three lower
bounds. Control: a file from before the exp roof gets neither. Skipped without Chromium."""
from __future__ import annotations

import json

import pytest

from test_exp_roof import _slowest_exp_rate, _with_exps
from test_report_html_browser import Browser, _browser

from abreport import html_report
from abreport.load import load_dataset

pytestmark = pytest.mark.skipif(_browser() is None, reason="no Chromium on PATH (Debian package chromium)")


@pytest.fixture(scope="module")
def browser():
    b = Browser(_browser())  # type: ignore[arg-type]
    yield b
    b.close()


def _page(ds, path) -> str:
    path.write_text(html_report.render(html_report.report_data(ds)))
    return str(path)


def test_bound_breakdown_and_exp_ticks_are_drawn(browser, fx, tmp_path):
    ds = load_dataset([_with_exps(fx, tmp_path, "cpu_small.json", rate_measured=1e12)])
    ds = load_dataset([_with_exps(fx, tmp_path, "cpu_small.json", rate_measured=_slowest_exp_rate(ds))])
    data = html_report.report_data(ds)
    rows = next(c for c in data["charts"] if c["id"] == "bounds_fp32")["rows"]
    marks = next(c for c in data["charts"] if c["id"] == "roofline_fp32")["exp_marks"]
    browser.open(_page(ds, tmp_path / "report.html"))
    assert browser.errors() == []
    n = json.loads(browser.eval("""JSON.stringify({
        bars: document.querySelectorAll('svg[data-chart="bounds_fp32"] rect.bbar').length,
        binding: document.querySelectorAll('svg[data-chart="bounds_fp32"] rect.bbar.exp.binding').length,
        ticks: document.querySelectorAll('svg[data-chart="roofline_fp32"] line.roof.exp').length})"""))
    assert n == {"bars": 3 * len(rows), "binding": len(rows), "ticks": len(marks)}
    browser.hover('svg[data-chart="bounds_fp32"] rect.bbar.exp')
    card = browser.eval("document.getElementById('tip').textContent")
    assert "lower bounds" in card and "exp " in card and " ms" in card


def test_old_file_has_no_exp_marks_or_breakdown(browser, load, tmp_path):
    """Control: no exps in the file, nothing of the exp roof drawn (and the card says unknown)."""
    browser.open(_page(load("cpu_small.json"), tmp_path / "old.html"))
    assert browser.errors() == []
    n = json.loads(browser.eval("""JSON.stringify({
        bounds: document.querySelectorAll('svg[data-chart^="bounds_"]').length,
        ticks: document.querySelectorAll('svg[data-chart^="roofline_"] line.roof.exp').length})"""))
    assert n == {"bounds": 0, "ticks": 0}
    browser.hover('svg[data-chart="roofline_fp32"] .pt')
    assert "exp unknown" in browser.eval("document.getElementById('tip').textContent")

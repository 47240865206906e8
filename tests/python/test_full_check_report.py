"""The check of every output in the report: the loader reads its fields (rows_total, rows_checked,
nonfinite_outputs, worst_row_err, worst_row, row_tolerance), refuses malformed ones, keeps files
written before them loading, and the error column shows the worst row and where it is."""
from __future__ import annotations

import json

import pytest

from abreport.errors import InputError
from abreport.load import load_run
from abreport.report import error_text


def _file(tmp_path, fx, **fields):
    """The first ok entry of the CPU fixture with `fields` set (None removes a field)."""
    data = json.loads(open(fx("cpu_small.json")).read())
    entry = next(e for e in data["benchmarks"] if e["status"] == "ok")
    for k, v in fields.items():
        if v is None:
            entry.pop(k, None)
        else:
            entry[k] = v
    data["benchmarks"] = [entry]
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    return str(path)


NEW = {"rows_total": 2048, "rows_checked": 2048, "nonfinite_outputs": 0, "worst_row_err": 3.1e-3,
       "worst_row": {"b": 0, "h": 2, "i": 17}, "row_tolerance": 3e-2, "rel_err": 1.2e-3, "err_ok": True}


def test_the_error_column_shows_the_worst_row(tmp_path, fx):
    (e,) = load_run(_file(tmp_path, fx, **NEW)).entries
    assert (e.rows_total, e.rows_checked, e.nonfinite_outputs) == (2048, 2048, 0)
    assert e.worst_row == (0, 2, 17) and e.row_tolerance == pytest.approx(3e-2)
    assert error_text(e) == "0.0031 at b0 h2 i17 ✓"
    (bad,) = load_run(_file(tmp_path, fx, **{**NEW, "worst_row_err": 0.25, "err_ok": False})).entries
    assert error_text(bad) == "0.25 at b0 h2 i17 ✗ over tolerance"


def test_files_before_issue_30_show_rel_err(tmp_path, fx):
    (e,) = load_run(_file(tmp_path, fx, rows_total=None, rows_checked=None, nonfinite_outputs=None,
                          worst_row_err=None, worst_row=None, row_tolerance=None, rel_err=1.2e-3,
                          err_ok=True)).entries
    assert e.worst_row is None and e.rows_checked is None
    assert error_text(e) == "0.0012 ✓"


@pytest.mark.parametrize("field,value", [("rows_checked", -1), ("rows_total", 1.5), ("nonfinite_outputs", "0"),
                                         ("worst_row", [0, 2, 17]), ("worst_row", {"b": 0, "h": 2}),
                                         ("worst_row", {"b": 0, "h": -1, "i": 3}), ("worst_row_err", "x")])
def test_malformed_fields_are_refused_naming_them(tmp_path, fx, field, value):
    with pytest.raises(InputError) as err:
        load_run(_file(tmp_path, fx, **{**NEW, field: value}))
    assert field in str(err.value)

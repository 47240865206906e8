"""The entry command: exit statuses and the one-line error contract (never a traceback)."""
from __future__ import annotations

import os

import pytest

MALFORMED = ["bad_missing_field.json", "bad_wrong_type.json", "bad_not_json.json",
             "bad_empty_benchmarks.json", "bad_ceiling_type.json", "bad_log.log.jsonl", "bad_variants.json"]


@pytest.mark.parametrize("name", MALFORMED)
@pytest.mark.parametrize("cmd", ["report", "roofline"])
def test_malformed_input_exits_2_with_one_line(cli, fx, tmp_path, name, cmd):
    r = cli(cmd, fx(name), "--out", str(tmp_path / "out"))
    assert r.returncode == 2
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith(f"attnbench_report: error: {fx(name)}: ")
    assert "Traceback" not in r.stderr
    assert not (tmp_path / "out").exists()  # nothing written for bad input


def test_missing_file_exits_2(cli, tmp_path):
    r = cli("report", str(tmp_path / "nope.json"), "--out", str(tmp_path))
    assert r.returncode == 2
    assert r.stderr.strip() == f"attnbench_report: error: {tmp_path / 'nope.json'}: cannot read (No such file or directory)"


def test_compare_with_malformed_input_exits_2(cli, fx):
    r = cli("compare", fx("cpu_small.json"), fx("bad_wrong_type.json"))
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1


def test_validate(cli, fx):
    r = cli("validate", fx("cpu_small.json"), fx("cuda_multi.json"))
    assert r.returncode == 0
    assert len(r.stdout.splitlines()) == 2
    assert "1 skipped, 1 failed" in r.stdout


def test_chart_subcommands_write_png_and_svg(cli, fx, tmp_path):
    for cmd, stem in [("roofline", "roofline_fp32"), ("speedup", "speedup_fp32"), ("tiles", "tiles_fp32"),
                      ("gqa", "gqa_fp32"), ("decode", "decode_fp32")]:
        out = tmp_path / cmd
        r = cli(cmd, fx("cpu_small.json"), "--out", str(out))
        assert r.returncode == 0, r.stderr
        for ext in ("png", "svg"):
            assert (out / f"{stem}.{ext}").stat().st_size > 1000


def test_chart_with_nothing_to_draw_notes_why(cli, fx, tmp_path):
    r = cli("model-vs-measured", fx("cpu_small.json"), "--out", str(tmp_path))
    assert r.returncode == 0
    assert r.stderr.startswith("attnbench_report: note: model vs measured: no entry has dram_bytes_measured")
    assert os.listdir(tmp_path) == []


def test_internal_errors_are_one_line(tmp_path, fx, monkeypatch, capsys):
    from abreport import cli as cli_mod, roofline

    def boom(ds):
        raise ValueError("bad\nthing")
    monkeypatch.setattr(roofline, "build", boom)
    monkeypatch.delenv("ATTNBENCH_REPORT_DEBUG", raising=False)
    assert cli_mod.main(["roofline", fx("cpu_small.json"), "--out", str(tmp_path)]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal: ValueError: bad thing" in err


def test_bad_formats_option_exits_2(cli, fx, tmp_path):
    r = cli("roofline", fx("cpu_small.json"), "--out", str(tmp_path), "--formats", "gif")
    assert r.returncode == 2 and "expected png, svg" in r.stderr


def test_unwritable_output_exits_2_with_one_line(cli, fx, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    r = cli("roofline", fx("cpu_small.json"), "--out", str(blocker / "sub"), "--formats", "png")
    assert r.returncode == 2
    assert r.stderr.splitlines() == [f"attnbench_report: error: {blocker / 'sub'}: Not a directory"]


@pytest.mark.parametrize("cmd", ["report", "compare"])
@pytest.mark.parametrize("kind", ["digits", "deep", "deep_log"])
def test_pathological_json_exits_2_with_one_line(cli, fx, tmp_path, cmd, kind):
    """A 5000-digit number and 1,000,000-deep nesting are input errors, not crashes."""
    bad = tmp_path / ("bad.log.jsonl" if kind == "deep_log" else "bad.json")
    if kind == "digits":
        bad.write_text('{"context": {}, "benchmarks": [{"time_ms": ' + "9" * 5000 + "}]}")
    else:
        bad.write_text("[" * 1_000_000 + "]" * 1_000_000 + "\n")
    args = [str(bad), "--out", str(tmp_path / "out")] if cmd == "report" else [fx("cpu_small.json"), str(bad)]
    r = cli(cmd, *args)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("attnbench_report: error: "), r.stderr
    assert "Traceback" not in r.stderr

"""context.variants: the harness's registry rows drive baselines and greys (no names in the scripts)."""
from __future__ import annotations

import json
from typing import Callable

import pytest

from abreport import report, speedup, style
from abreport.errors import InputError
from abreport.load import load_dataset, load_run


def _copy(fx, tmp_path, name: str, edit: Callable[[dict], None], out: str = "") -> str:
    """A copy of fixture `name` with `edit` applied to its parsed JSON; returns its path."""
    doc = json.load(open(fx(name)))
    edit(doc)
    p = tmp_path / (out or name)
    p.write_text(json.dumps(doc))
    return str(p)


def _drop_rows(doc: dict) -> None:
    del doc["context"]["variants"]


def _move_tag(tag: str, to: str, backend: str = "cpu") -> Callable[[dict], None]:
    def edit(doc: dict) -> None:
        for r in doc["context"]["variants"]:
            if r["backend"] == backend:
                r["tags"] = [t for t in r["tags"] if t != tag] + ([tag] if r["name"] == to else [])
    return edit


def _speedup(ds, baseline=None):
    return {c.stem: c for c in speedup.build(ds, baseline).charts}


def test_rows_are_typed_in_registry_order(fx):
    run = load_run(fx("cpu_small.json"))
    assert [r.name for r in run.variants] == ["naive", "naive_gqa_expand", "flash1", "flash2", "sparse", "linear"]
    naive = run.variants[0]
    assert naive.backend == "cpu" and naive.math == "softmax" and naive.writes_lse is False
    assert naive.tags == ("baseline", "unfused") and naive.has("unfused")
    assert naive.capabilities.dtypes == ("fp32",) and naive.capabilities.head_dims == ()
    assert naive.capabilities.max_nq is None and naive.capabilities.gqa is True
    assert run.default_baseline == "naive"
    cuda = load_run(fx("cuda_multi.json"))
    assert {r.backend for r in cuda.variants} == {"cpu", "cuda"}  # a CUDA build lists both backends
    assert cuda.default_baseline == "cublas_unfused"
    assert [r.name for r in cuda.rows_of_backend()][:3] == ["naive", "naive_gqa_expand", "cublas_unfused"]
    splitkv = next(r for r in cuda.variants if r.name == "flash2_splitkv")
    assert splitkv.capabilities.max_nq == 16 and splitkv.capabilities.head_dims == (64, 128)


def test_results_log_context_line_carries_rows(fx):
    assert load_run(fx("cpu_small.log.jsonl")).default_baseline == "naive"
    assert load_run(fx("cpu_harness.json")).default_baseline == "naive"
    assert load_run(fx("cpu_harness.json.log.jsonl")).variants == ()  # the harness log has no context


def test_baseline_comes_from_the_tag(fx, tmp_path):
    path = _copy(fx, tmp_path, "cpu_small.json", _move_tag("baseline", "flash1"))
    sp = _speedup(load_dataset([path]))["speedup_fp32"]
    assert sp.summary["baseline"] == "flash1"
    assert set(sp.summary["points"]) == {"naive", "flash2"}
    path = _copy(fx, tmp_path, "cuda_multi.json", _move_tag("baseline", "flash2", "cuda"))
    sp = _speedup(load_dataset([path]))["speedup_fp16"]
    assert sp.summary["baseline"] == "flash2" and set(sp.summary["points"]) == {"cublas_unfused", "flash1"}


def test_no_rows_leave_speedup_out_with_a_note(fx, tmp_path):
    ds = load_dataset([_copy(fx, tmp_path, "cpu_small.json", _drop_rows, "old.json")])
    built = speedup.build(ds)
    assert [c.stem for c in built.charts] == ["tflops_seq_fp32"]  # TFLOP/s needs no baseline
    assert len(built.notes) == 1
    assert "run old lists no variant rows" in built.notes[0] and "--baseline" in built.notes[0]
    tf = built.charts[0]
    assert all(ln.get_linestyle() == "-" for ax in tf.fig.axes for ln in ax.get_lines())  # nothing dashed


def test_no_baseline_row_for_the_backend_is_a_note(fx, tmp_path):
    path = _copy(fx, tmp_path, "cpu_small.json", _move_tag("baseline", "none"))
    built = speedup.build(load_dataset([path]))
    assert "speedup_fp32" not in {c.stem for c in built.charts}
    assert any("has no cpu row tagged baseline" in n for n in built.notes)


def test_baseline_option_overrides_the_tag_and_covers_files_without_rows(fx, tmp_path):
    assert _speedup(load_dataset([fx("cpu_small.json")]), "flash1")["speedup_fp32"].summary["baseline"] == "flash1"
    ds = load_dataset([_copy(fx, tmp_path, "cpu_small.json", _drop_rows, "old.json")])
    built = speedup.build(ds, "naive")
    assert built.notes == []
    assert {c.stem: c for c in built.charts}["speedup_fp32"].summary["points"] == {"flash1": 11, "flash2": 11}


def test_two_runs_one_without_rows(fx, tmp_path):
    old = _copy(fx, tmp_path, "cpu_small_slower.json", _drop_rows, "old.json")
    built = speedup.build(load_dataset([fx("cpu_small.json"), old]))
    sp = {c.stem: c for c in built.charts}["speedup_fp32"]
    assert set(sp.summary["ratios"]) == {"flash1 [cpu_small]", "flash2 [cpu_small]"}
    assert [n for n in built.notes if "run old lists no variant rows" in n]


def test_report_cli_without_rows_and_with_baseline(cli, fx, tmp_path):
    old = _copy(fx, tmp_path, "cpu_small.json", _drop_rows, "old.json")
    r = cli("report", old, "--out", str(tmp_path / "a"), "--formats", "png")
    assert r.returncode == 0, r.stderr
    md = (tmp_path / "a" / "report.md").read_text()
    assert not (tmp_path / "a" / "speedup_fp32.png").exists() and (tmp_path / "a" / "tflops_seq_fp32.png").exists()
    assert "lists no variant rows" in md and "pass --baseline VARIANT" in md
    assert "This run lists no variant rows" in md  # the Variants section says it too
    r = cli("report", old, "--out", str(tmp_path / "b"), "--formats", "png", "--baseline", "naive")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "b" / "speedup_fp32.png").exists()
    assert "Speedup over naive (fp32)" in (tmp_path / "b" / "report.md").read_text()
    r = cli("speedup", old, "--out", str(tmp_path / "c"))
    assert r.returncode == 0 and "note: speedup: run old lists no variant rows" in r.stderr


BAD_ROWS = [
    (lambda c: c.update(variants={"naive": {}}), "context.variants: expected an array of variant rows, got an object"),
    (lambda c: c["variants"].__setitem__(2, "flash1"), 'context.variants[2]: expected an object, got "flash1"'),
    (lambda c: c["variants"][0].pop("name"), "context.variants[0].name: missing"),
    (lambda c: c["variants"][1].update(backend="gpu"), 'context.variants[1].backend: expected "cpu" or "cuda", got "gpu"'),
    (lambda c: c["variants"][1].update(writes_lse=1), "context.variants[1].writes_lse: expected true or false, got 1"),
    (lambda c: c["variants"][1].update(summary=None), "context.variants[1].summary: expected a string, got null"),
    (lambda c: c["variants"][3].update(tags="fused"), 'context.variants[3].tags: expected an array, got "fused"'),
    (lambda c: c["variants"][3].update(tags=["fused", ""]), 'context.variants[3].tags[1]: expected a non-empty string, got ""'),
    (lambda c: c["variants"][3].pop("capabilities"), "context.variants[3].capabilities: missing"),
    (lambda c: c["variants"][3]["capabilities"].update(head_dims=[64, 0]),
     "context.variants[3].capabilities.head_dims[1]: expected a positive integer, got 0"),
    (lambda c: c["variants"][3]["capabilities"].update(max_nq=0),
     "context.variants[3].capabilities.max_nq: expected null or a positive integer, got 0"),
    (lambda c: c["variants"][3]["capabilities"].pop("max_nq"),
     "context.variants[3].capabilities.max_nq: missing (null when there is no limit)"),
    (lambda c: c["variants"][3]["capabilities"].update(gqa="yes"),
     'context.variants[3].capabilities.gqa: expected true or false, got "yes"'),
    (lambda c: c["variants"][3]["capabilities"].update(dtypes="fp32"),
     'context.variants[3].capabilities.dtypes: expected an array, got "fp32"'),
    (lambda c: c["variants"][4].update(name="flash2"), "context.variants[4].name: duplicate row flash2 (cpu), also context.variants[3]"),
    (lambda c: c["variants"][3]["tags"].append("baseline"),
     "context.variants[3].tags: second cpu row tagged baseline (flash2; context.variants[0] naive is too)"),
]


@pytest.mark.parametrize("edit,message", BAD_ROWS)
def test_malformed_rows_are_one_line_errors(fx, tmp_path, edit, message):
    path = _copy(fx, tmp_path, "cpu_small.json", lambda d: edit(d["context"]))
    with pytest.raises(InputError) as e:
        load_run(path)
    assert e.value.line() == f"{path}: {message}"


def test_malformed_rows_exit_2_one_line(cli, fx, tmp_path):
    r = cli("report", fx("bad_variants.json"), "--out", str(tmp_path / "out"))
    assert r.returncode == 2 and not (tmp_path / "out").exists()
    assert r.stderr.splitlines() == [f"attnbench_report: error: {fx('bad_variants.json')}: "
                                     'context.variants[1].tags: expected an array, got "unfused"']
    log = tmp_path / "run.json.log.jsonl"  # a results log's context line is checked the same way
    doc = json.load(open(fx("cpu_small.json")))
    doc["context"]["variants"][0]["backend"] = 3
    log.write_text(json.dumps({"context": doc["context"]}) + "\n" + json.dumps(doc["benchmarks"][0]) + "\n")
    r = cli("validate", str(log))
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1
    assert "context.variants[0].backend: expected a non-empty string, got 3" in r.stderr


def test_unfused_rows_are_grey(load, fx, tmp_path):
    ds = load("cuda_multi.json")
    colors = style.colors_for(ds)
    assert set(colors) == {"cublas_unfused", "flash1", "flash2"}
    assert colors["cublas_unfused"] in style.GREYS
    assert colors["flash1"] in style.PALETTE and colors["flash2"] in style.PALETTE
    # the drawn curves use them: the TFLOP/s chart's cublas_unfused lines are grey
    tf = _speedup(ds)["tflops_seq_fp16"]
    lines = [ln for ax in tf.fig.axes for ln in ax.get_lines() if ln.get_label() == "cublas_unfused"]
    assert lines and all(ln.get_color() == colors["cublas_unfused"] for ln in lines)
    # the tag, not the name: without it naive gets a palette colour; without rows nothing is grey
    untagged = _copy(fx, tmp_path, "cpu_small.json", _move_tag("unfused", "flash1"), "untagged.json")
    c = style.colors_for(load_dataset([untagged]))
    assert c["naive"] in style.PALETTE and c["flash1"] in style.GREYS
    old = _copy(fx, tmp_path, "cpu_small.json", _drop_rows, "old.json")
    assert not set(style.colors_for(load_dataset([old])).values()) & set(style.GREYS)


def test_greys_are_stable_by_name():
    c = style.variant_colors(["naive", "flash2", "cublas_unfused", "flash1"], grey={"naive", "cublas_unfused"})
    assert c == {"cublas_unfused": style.GREYS[0], "naive": style.GREYS[1],
                 "flash1": style.PALETTE[0], "flash2": style.PALETTE[1]}
    assert style.variant_colors(reversed(list(c)), grey={"naive", "cublas_unfused"}) == c


def test_report_lists_the_rows_of_the_run_backend(load, tmp_path):
    path, _ = report.write(load("cuda_multi.json"), str(tmp_path), formats=("png",))
    md = open(path).read()
    i = md.index("## Variants")
    section = md[i:md.index("## Best configuration")]
    assert "| cublas_unfused | baseline, unfused, library | yes | 56 | baseline: cuBLAS batched GEMMs" in section
    assert "| flash2_splitkv | fused, decode, gqa | yes | 0 |" in section
    assert "S = QK^T and P = softmax(S)" not in section  # the cpu rows of a CUDA build are not this run's

"""Loading and validation: typed entries, ceilings, results logs, one-line errors."""
from __future__ import annotations

import json

import pytest

from abreport.errors import InputError
from abreport.load import load_run, run_label


def test_cpu_fixture_entries_and_ceilings(fx):
    run = load_run(fx("cpu_small.json"))
    statuses = [e.status for e in run.entries]
    assert statuses.count("skipped") == 1 and statuses.count("failed") == 1
    assert run.backend == "cpu"
    assert run.ceilings.measured.bandwidth_gbps == pytest.approx(11.5)
    assert run.ceilings.measured.peak("fp32") == pytest.approx(0.085)
    assert run.ceilings.theoretical.empty
    ok = [e for e in run.entries if e.ok]
    assert all(e.time_ms > 0 and e.tflops > 0 and e.intensity > 0 for e in ok)
    assert run.commit == "1c2d7ce5a3f0"


def test_cuda_fixture_has_both_ceiling_kinds(fx):
    run = load_run(fx("cuda_multi.json"))
    assert run.ceilings.measured.peak("fp16") == pytest.approx(720.0)
    assert run.ceilings.theoretical.bandwidth_gbps == pytest.approx(3352.0)
    assert run.ceilings.measured.ridge("fp16") == pytest.approx(720.0e3 / 3010.0)
    assert {e.dtype for e in run.entries} == {"fp16", "bf16", "fp32"}


def test_results_log_with_context_line(fx):
    run = load_run(fx("cpu_small.log.jsonl"))
    assert len(run.entries) == 20
    assert run.device.startswith("Intel")
    assert run.label == "cpu_small"


def test_results_log_without_context_and_torn_tail(tmp_path, fx):
    doc = json.load(open(fx("cpu_small.json")))
    lines = [json.dumps(b) for b in doc["benchmarks"][:3]]
    p = tmp_path / "run.json.log.jsonl"
    p.write_text("\n".join(lines) + "\n" + lines[0][:40])  # killed while writing the 4th
    run = load_run(str(p))
    assert len(run.entries) == 3
    assert run.device == "unknown" and run.ceilings.measured.empty
    assert run.label == "run"


def test_null_model_fields_make_an_entry_unplotted(tmp_path, fx):
    doc = json.load(open(fx("cpu_small.json")))
    doc["benchmarks"][0]["flops"] = None
    doc["benchmarks"][0]["tflops"] = None
    p = tmp_path / "nullmodel.json"
    p.write_text(json.dumps(doc))
    e = load_run(str(p)).entries[0]
    assert not e.ok and e.status == "unplotted" and "flops" in e.error_message


def test_other_gbench_aggregates_are_ignored(tmp_path, fx):
    doc = json.load(open(fx("cpu_small.json")))
    extra = dict(doc["benchmarks"][0], aggregate_name="stddev", time_ms="not a time")
    doc["benchmarks"].append(extra)
    p = tmp_path / "agg.json"
    p.write_text(json.dumps(doc))
    assert len(load_run(str(p)).entries) == len(doc["benchmarks"]) - 1


@pytest.mark.parametrize("name, field", [
    ("bad_missing_field.json", "benchmarks[3].time_ms: missing"),
    ("bad_wrong_type.json", 'benchmarks[2].Nq: expected a number, got "256"'),
    ("bad_not_json.json", "not valid JSON (line 3"),
    ("bad_empty_benchmarks.json", "benchmarks: empty"),
    ("bad_ceiling_type.json", "context.ceilings.measured.bandwidth_gbps: expected a number"),
    ("bad_log.log.jsonl", "not valid JSON (line 3"),
])
def test_malformed_inputs_name_file_and_field(fx, name, field):
    with pytest.raises(InputError) as err:
        load_run(fx(name))
    line = err.value.line()
    assert line.startswith(fx(name) + ": ")
    assert field in line
    assert "\n" not in line


@pytest.mark.parametrize("mutate, field", [
    (lambda d: d.pop("context"), "context: missing"),
    (lambda d: d["benchmarks"][0].update(status="done"), "benchmarks[0].status: expected one of"),
    (lambda d: d["benchmarks"][1].update(time_ms=-1.0), "benchmarks[1].time_ms: expected a positive number"),
    (lambda d: d["benchmarks"][0].update(d=64.5), "benchmarks[0].d: expected a positive integer"),
    (lambda d: d["benchmarks"][0].update(err_ok="yes"), "benchmarks[0].err_ok: expected true or false"),
    (lambda d: d.update(benchmarks={}), "benchmarks: expected an array"),
    (lambda d: d["benchmarks"].__setitem__(0, 7), "benchmarks[0]: expected an object"),
    (lambda d: d["context"].update(backend="tpu"), "context.backend: expected"),
    # integers beyond the float range were an internal OverflowError (exit 3), not bad input
    (lambda d: d["benchmarks"][0].update(flops=10**400), "benchmarks[0].flops: expected a finite number"),
    (lambda d: d["benchmarks"][0].update(Nq=10**400), "benchmarks[0].Nq: expected a finite number"),
])
def test_more_malformed_fields(tmp_path, fx, mutate, field):
    doc = json.load(open(fx("cpu_small.json")))
    mutate(doc)
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(InputError) as err:
        load_run(str(p))
    assert field in err.value.line()


def test_unreadable_file(tmp_path):
    with pytest.raises(InputError) as err:
        load_run(str(tmp_path / "absent.json"))
    assert "cannot read" in err.value.line()


def test_json_that_is_not_an_object(tmp_path):
    p = tmp_path / "list.json"
    p.write_text("[1, 2]")
    with pytest.raises(InputError) as err:
        load_run(str(p))
    assert "expected a JSON object" in err.value.line()


def test_run_label():
    assert run_label("results/h100/abc.json") == "abc"
    assert run_label("x/run.json.log.jsonl") == "run"
    assert run_label("x/run.log.jsonl") == "run"

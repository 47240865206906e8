"""Read attnbench JSON (Google Benchmark layout) and results logs (.log.jsonl), validated.

Every problem becomes an `InputError` naming the file and the field, e.g.
`run.json: benchmarks[3].time_ms: expected a number, got "fast"`.
"""
from __future__ import annotations

import dataclasses

import json
import os
from typing import Any, Optional

from .check import _Checker, _describe
from .data import Ceilings, CeilingSet, Dataset, Entry, Run
from .errors import InputError
from .variants import VariantRow, parse_variants

STATUSES = ("ok", "skipped", "failed")
STR_FIELDS = ("name", "variant", "backend", "dtype", "mask", "status")
INT_FIELDS = ("B", "H", "Hkv", "Nq", "Nkv", "d")
TILE_FIELDS = ("Br", "Bc")  # positive, or 0 for a library peer (its tiles are its own)
PEER_DEVICES = ("cpu", "cuda")
# Needed by every chart for an entry that ran.
OK_POSITIVE_FIELDS = ("time_ms", "flops", "bytes")
OK_NONNEG_FIELDS = ("tflops", "gbps", "intensity")
OPTIONAL_NONNEG_FIELDS = ("time_cv", "bytes_min", "dram_bytes_measured", "l2_bytes_measured",
                          "kernel_time_ncu", "max_abs_err", "lse_err", "exps")


def parse_entry(file: str, run: str, where: str, obj: Any) -> Entry:
    if not isinstance(obj, dict):
        raise InputError(file, where, f"expected an object, got {_describe(obj)}")
    c = _Checker(file, where, obj)
    s = {k: c.string(k) for k in STR_FIELDS}
    if s["status"] not in STATUSES:
        raise c.fail("status", f'expected one of ok, skipped, failed, got "{s["status"]}"')
    ints = {k: c.integer(k) for k in INT_FIELDS}
    peer = obj.get("peer", False)
    if not isinstance(peer, bool):
        raise c.fail("peer", f"expected true or false, got {_describe(peer)}")
    if peer:
        dev = c.string("peer_device")
        if dev not in PEER_DEVICES or s["backend"] in PEER_DEVICES:
            raise c.fail("peer_device" if dev not in PEER_DEVICES else "backend",
                         f'a peer needs peer_device "cpu" or "cuda" and a library backend, got '
                         f'peer_device {_describe(dev)}, backend {_describe(s["backend"])}')
        for k in TILE_FIELDS:
            v = c.number(k, nonneg=True)
            if v != int(v):
                raise c.fail(k, f"expected a non-negative integer, got {v}")
            ints[k] = int(v)
        kw_peer: dict[str, Any] = {"peer_device": dev, "library": c.string("library", required=False) or ""}
    else:
        ints.update({k: c.integer(k) for k in TILE_FIELDS})
        kw_peer = {}
    group = c.string("group", required=False) or ""
    msg: Any = obj.get("error_message")
    kw: dict[str, Any] = {}
    nulls = [k for k in OK_POSITIVE_FIELDS + OK_NONNEG_FIELDS if k in obj and obj[k] is None]
    if s["status"] == "ok" and nulls:
        # Ran, but the harness had no model or no time for it: listed, never plotted.
        s["status"] = "unplotted"
        msg = f"ran, but {', '.join(nulls)} null (no model or zero time)"
    if s["status"] == "ok":
        for k in OK_POSITIVE_FIELDS:
            kw[k] = c.number(k, positive=True)
        for k in OK_NONNEG_FIELDS:
            kw[k] = c.number(k, nonneg=True)
    for k in OPTIONAL_NONNEG_FIELDS:
        v = c.number(k, required=False, nonneg=True, nullable=True)
        if k in Entry.__dataclass_fields__ and v is not None:
            kw[k] = v
    kw["rel_err"] = c.number("rel_err", required=False, nonneg=True, nullable=True)
    kw["err_ok"] = c.boolean("err_ok")
    kw["tolerance"] = c.number("tolerance", required=False, nonneg=True, nullable=True)
    kw["e2e_rel_err"] = c.number("e2e_rel_err", required=False, nonneg=True, nullable=True)
    kw["out_dtype"] = c.string("out_dtype", required=False) if obj.get("out_dtype") is not None else None
    kw["input_scales"] = _input_scales(c, obj.get("input_scales"))
    for k in ("rows_total", "rows_checked", "nonfinite_outputs"):
        kw[k] = _count(c, k)
    kw["worst_row_err"] = c.number("worst_row_err", required=False, nonneg=True, nullable=True)
    kw["row_tolerance"] = c.number("row_tolerance", required=False, nonneg=True, nullable=True)
    kw["worst_row"] = _worst_row(c, obj.get("worst_row"))
    kw["pass_"] = c.string("pass", required=False) or "fwd"
    if kw["pass_"] not in ("fwd", "bwd", "fwd_bwd"):
        raise c.fail("pass", f"expected fwd, bwd or fwd_bwd, got '{kw['pass_']}'")
    kw["grad_err"] = c.number("grad_err", required=False, nonneg=True, nullable=True)
    return Entry(run=run, group=group, error_message=msg if isinstance(msg, str) else "",
                 **s, **ints, **kw, **kw_peer, raw=obj)


def _count(c: _Checker, key: str, required: bool = False) -> Optional[int]:
    """A non-negative integer field; None when absent or null (unless required)."""
    v = c.number(key, required=required, nonneg=True, nullable=not required)
    if v is None:
        return None
    if v != int(v):
        raise c.fail(key, f"expected a non-negative integer, got {v}")
    return int(v)


def _worst_row(c: _Checker, obj: Any) -> Optional[tuple[int, int, int]]:
    """The worst row {"b", "h", "i"}; None when absent or null."""
    if obj is None:
        return None
    if not isinstance(obj, dict):
        raise c.fail("worst_row", f"expected an object with b, h, i, got {_describe(obj)}")
    wc = _Checker(c.file, c._path("worst_row"), obj)
    b, h, i = (_count(wc, k, required=True) for k in ("b", "h", "i"))
    assert b is not None and h is not None and i is not None
    return (b, h, i)


def _input_scales(c: _Checker, obj: Any) -> Optional[tuple[float, float, float]]:
    """The per-tensor e4m3 scales {"q", "k", "v"} (e4m3 entries only); None when absent or null."""
    if obj is None:
        return None
    if not isinstance(obj, dict):
        raise c.fail("input_scales", f"expected an object with q, k, v, got {_describe(obj)}")
    sc = _Checker(c.file, c._path("input_scales"), obj)
    q, k, v = (sc.number(t, positive=True) for t in ("q", "k", "v"))
    assert q is not None and k is not None and v is not None
    return (q, k, v)


def _ceiling_set(file: str, where: str, obj: Any) -> CeilingSet:
    if obj is None:
        return CeilingSet()
    if not isinstance(obj, dict):
        raise InputError(file, where, f"expected an object, got {_describe(obj)}")
    c = _Checker(file, where, obj)
    bw = c.number("bandwidth_gbps", required=False, positive=True, nullable=True)
    tf = obj.get("tflops", {})
    if tf is None:
        tf = {}
    if not isinstance(tf, dict):
        raise c.fail("tflops", f"expected an object, got {_describe(tf)}")
    tc = _Checker(file, f"{where}.tflops", tf)
    peaks: dict[str, float] = {}
    for k in tf:
        v = tc.number(k, positive=True, nullable=True)
        if v is not None:
            peaks[k] = v
    ex = c.number("exps_per_s", required=False, positive=True, nullable=True)  # the exp roof's rate
    return CeilingSet(bandwidth_gbps=bw, tflops=peaks, exps_per_s=ex)


def parse_context(file: str, obj: Any) -> tuple[dict, Ceilings, tuple[VariantRow, ...]]:
    """The context as read, its ceilings and its variant rows (() when it lists none)."""
    if obj is None:
        return {}, Ceilings(), ()
    if not isinstance(obj, dict):
        raise InputError(file, "context", f"expected an object, got {_describe(obj)}")
    c = _Checker(file, "context", obj)
    for k in ("backend", "device", "git_commit", "date", "preset", "host"):
        if k in obj and obj[k] is not None and not isinstance(obj[k], str):
            raise c.fail(k, f"expected a string, got {_describe(obj[k])}")
    if obj.get("backend") not in (None, "cpu", "cuda"):
        raise c.fail("backend", f'expected "cpu" or "cuda", got {_describe(obj["backend"])}')
    rows = parse_variants(file, obj.get("variants"))
    ceil = obj.get("ceilings")
    if ceil is None:
        return obj, Ceilings(), rows
    if not isinstance(ceil, dict):
        raise c.fail("ceilings", f"expected an object, got {_describe(ceil)}")
    measured = _ceiling_set(file, "context.ceilings.measured", ceil.get("measured"))
    if obj.get("backend") == "cpu":
        measured = dataclasses.replace(measured, fp32_compute=True)
    return obj, Ceilings(measured=measured,
                         theoretical=_ceiling_set(file, "context.ceilings.theoretical",
                                                  ceil.get("theoretical"))), rows


def _keep(obj: Any) -> bool:
    """Google Benchmark aggregates other than the median (mean, stddev, cv) are not entries."""
    if isinstance(obj, dict):
        agg = obj.get("aggregate_name")
        if obj.get("run_type") == "aggregate" and isinstance(agg, str) and agg != "median":
            return False
    return True


def _read_text(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except UnicodeDecodeError:
        raise InputError(path, "", "not UTF-8 text") from None
    except OSError as e:
        raise InputError(path, "", f"cannot read ({e.strerror or e})") from None


def _json(path: str, text: str, line: Optional[int] = None) -> Any:
    """Parses text; `line` is the line number of a results-log record."""
    where = "" if line is None else f"line {line}: "
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        lineno = e.lineno if line is None else line
        raise InputError(path, "", f"not valid JSON (line {lineno} column {e.colno}: {e.msg})") from None
    except RecursionError:
        raise InputError(path, "", f"{where}JSON nested too deeply to read") from None
    except ValueError as e:  # e.g. an integer of more digits than Python converts
        raise InputError(path, "", f"{where}unreadable JSON value ({str(e).splitlines()[0]})") from None


def load_json(path: str, label: str) -> Run:
    doc = _json(path, _read_text(path))
    if not isinstance(doc, dict):
        raise InputError(path, "", f"expected a JSON object with context and benchmarks, got {_describe(doc)}")
    if "benchmarks" not in doc:
        raise InputError(path, "benchmarks", "missing")
    bms = doc["benchmarks"]
    if not isinstance(bms, list):
        raise InputError(path, "benchmarks", f"expected an array, got {_describe(bms)}")
    if "context" not in doc:
        raise InputError(path, "context", "missing")
    context, ceilings, rows = parse_context(path, doc["context"])
    entries = [parse_entry(path, label, f"benchmarks[{i}]", b) for i, b in enumerate(bms) if _keep(b)]
    if not entries:
        raise InputError(path, "benchmarks", "empty (no entries)")
    return Run(path=path, label=label, context=context, ceilings=ceilings, entries=entries, variants=rows)


def load_log(path: str, label: str) -> Run:
    """A results log: one JSON object per line, each a finished benchmark entry; a line
    holding a `context` object (written first by the harness) gives the run's context."""
    context: dict = {}
    ceilings = Ceilings()
    rows: tuple[VariantRow, ...] = ()
    entries: list[Entry] = []
    text = _read_text(path)
    lines = text.splitlines()
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        if n == len(lines) and not text.endswith("\n"):
            try:  # a sweep killed mid-write leaves a torn last line: the harness reruns it
                json.loads(line)
            except (ValueError, RecursionError):
                continue
        obj = _json(path, line, line=n)
        if isinstance(obj, dict) and isinstance(obj.get("context"), dict) and "name" not in obj:
            context, ceilings, rows = parse_context(path, obj["context"])
            continue
        if _keep(obj):
            entries.append(parse_entry(path, label, f"line {n}", obj))
    if not entries:
        raise InputError(path, "", "empty (no entries)")
    return Run(path=path, label=label, context=context, ceilings=ceilings, entries=entries, variants=rows)


def run_label(path: str) -> str:
    base = os.path.basename(path)  # run.json, run.json.log.jsonl -> run
    for suffix in (".jsonl", ".log", ".json"):
        if base.endswith(suffix) and len(base) > len(suffix):
            base = base[: -len(suffix)]
    return base


def load_run(path: str) -> Run:
    label = run_label(path)
    if path.endswith(".jsonl"):
        return load_log(path, label)
    return load_json(path, label)


def load_dataset(paths: list[str]) -> Dataset:
    runs = [load_run(p) for p in paths]
    labels = [r.label for r in runs]
    for i, r in enumerate(runs):  # two files with one stem stay apart
        if labels.count(r.label) > 1:
            r.label = f"{r.label}#{i + 1}"
            r.entries = [_relabel(e, r.label) for e in r.entries]
    return Dataset(runs=runs)


def _relabel(e: Entry, label: str) -> Entry:
    from dataclasses import replace
    return replace(e, run=label)

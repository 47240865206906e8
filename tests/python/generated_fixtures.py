"""Fixtures made from one good fixture plus the one change each needs (they were 3,200-line
copies of cpu_small.json differing in a line): written on first use into a folder of this test
session and named as before, so `fx("bad_wrong_type.json")` is the path of such a file."""
from __future__ import annotations

import atexit
import copy
import json
import os
import random
import shutil
import tempfile
from typing import Any, Callable, Optional

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")


def _set(path: list, value: Any) -> Callable[[dict], None]:
    def change(doc: dict) -> None:
        obj = doc
        for k in path[:-1]:
            obj = obj[k]
        obj[path[-1]] = value
    return change


def _delete(path: list) -> Callable[[dict], None]:
    def change(doc: dict) -> None:
        obj = doc
        for k in path[:-1]:
            obj = obj[k]
        del obj[path[-1]]
    return change


def _scaled(factor_of: Callable[[dict], float]) -> Callable[[dict], None]:
    """Every ok entry's times multiplied (rates divided) by factor_of(entry): another run of
    the same sweep, for `compare` and the multi-run charts."""
    def change(doc: dict) -> None:
        for b in doc["benchmarks"]:
            if b["status"] != "ok":
                continue
            f = factor_of(b)
            for k in ("real_time", "cpu_time", "time_ms", "time_ms_min", "time_ms_max"):
                b[k] *= f
            b["tflops"] /= f
            b["gbps"] /= f
    return change


_noise = random.Random(5)

# name -> the change to cpu_small.json (a function of the parsed document), or raw text
CHANGES: dict[str, Callable[[dict], None]] = {
    # compare: 1.6x slower on flash2's causal seq-group configurations; noise within the spread
    "cpu_small_slower.json": _scaled(lambda b: 1.6 if (b["variant"] == "flash2" and b["mask"] == "causal"
                                                       and b["group"] == "seq") else 1.0),
    "cpu_small_noise.json": _scaled(lambda b: _noise.uniform(0.98, 1.03)),
    "bad_missing_field.json": _delete(["benchmarks", 3, "time_ms"]),
    "bad_wrong_type.json": _set(["benchmarks", 2, "Nq"], "256"),
    "bad_empty_benchmarks.json": _set(["benchmarks"], []),
    "bad_ceiling_type.json": _set(["context", "ceilings", "measured", "bandwidth_gbps"], "fast"),
    "bad_variants.json": _set(["context", "variants", 1, "tags"], "unfused"),
    "cpu_no_ceilings.json": _delete(["context", "ceilings"]),  # as --no-ceilings writes it
}


def _raw(name: str) -> Optional[str]:
    if name == "bad_not_json.json":
        return '{"context": {"backend": "cpu"}, "benchmarks": [\n  {"name": "x",\n'
    if name == "bad_log.log.jsonl":  # the good log's first two lines, then a torn one
        lines = open(os.path.join(FIXTURES, "cpu_small.log.jsonl")).read().split("\n")
        return lines[0] + "\n" + lines[1] + "\n{not json\n"
    return None


_dir: Optional[str] = None


def generated_path(name: str) -> Optional[str]:
    """The generated fixture's path (written on first use), or None for a committed one."""
    global _dir
    raw = _raw(name)
    if raw is None and name not in CHANGES:
        return None
    if _dir is None:
        _dir = tempfile.mkdtemp(prefix="attnbench-fixtures-")
        atexit.register(shutil.rmtree, _dir, True)
    path = os.path.join(_dir, name)
    if not os.path.exists(path):
        if raw is None:
            doc = json.load(open(os.path.join(FIXTURES, "cpu_small.json")))
            doc = copy.deepcopy(doc)
            CHANGES[name](doc)
            raw = json.dumps(doc, indent=1) + "\n"
        with open(path, "w", encoding="utf-8") as f:
            f.write(raw)
    return path

"""The harness's variant rows (`context.variants`, docs/json_schema.md), typed and validated.

The C++ registry is the only list of variants: baselines, greys and every other fact about
a variant come from these rows, never from names written here. A file written before the
harness recorded its rows has none (an empty tuple): it then has no default baseline.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Optional

from .check import _Checker, _describe, _is_number
from .errors import InputError

BACKENDS = ("cpu", "cuda")
# Tags the charts act on; the rest of the vocabulary (fused, tiled, library, decode, gqa)
# is shown in the report only. An unknown tag is kept, not refused: a newer harness may add one.
BASELINE = "baseline"  # the speedup baseline of its backend (at most one row per backend)
UNFUSED = "unfused"    # materialises S/P in memory: drawn in grey


@dataclass(frozen=True)
class Capabilities:
    """What a row declares it can run (the registry's `capabilities`)."""

    dtypes: tuple[str, ...]
    masks: tuple[str, ...]  # mask features: none, causal, local, global
    head_dims: tuple[int, ...]  # empty: any head dim
    gqa: bool  # Hkv < H accepted
    max_nq: Optional[int]  # None: no limit


@dataclass(frozen=True)
class VariantRow:
    """One registry row: a (name, backend) the harness can run."""

    name: str
    backend: str
    math: str  # softmax | linear | linformer | performer | additive | routing
    summary: str
    writes_lse: bool
    tags: tuple[str, ...]
    capabilities: Capabilities

    def has(self, tag: str) -> bool:
        return tag in self.tags


def baseline_of(rows: Iterable[VariantRow], backend: str) -> Optional[str]:
    """Name of the row of `backend` tagged baseline, None when no row is."""
    return next((r.name for r in rows if r.backend == backend and r.has(BASELINE)), None)


def names_tagged(rows: Iterable[VariantRow], tag: str) -> set[str]:
    return {r.name for r in rows if r.has(tag)}


def _capabilities(file: str, where: str, obj: dict) -> Capabilities:
    c = _Checker(file, where, obj)
    dims = []
    for i, v in enumerate(c.array("head_dims")):
        if not _is_number(v) or v != int(v) or v <= 0:
            raise c.fail(f"head_dims[{i}]", f"expected a positive integer, got {_describe(v)}")
        dims.append(int(v))
    if "max_nq" not in obj:
        raise c.fail("max_nq", "missing (null when there is no limit)")
    max_nq = obj["max_nq"]
    if max_nq is not None and (not _is_number(max_nq) or max_nq != int(max_nq) or max_nq <= 0):
        raise c.fail("max_nq", f"expected null or a positive integer, got {_describe(max_nq)}")
    gqa = c.boolean("gqa", required=True)
    assert gqa is not None
    return Capabilities(dtypes=c.strings("dtypes"), masks=c.strings("masks"), head_dims=tuple(dims),
                        gqa=gqa, max_nq=None if max_nq is None else int(max_nq))


def parse_row(file: str, where: str, obj: Any) -> VariantRow:
    if not isinstance(obj, dict):
        raise InputError(file, where, f"expected an object, got {_describe(obj)}")
    c = _Checker(file, where, obj)
    name, backend, math = c.string("name"), c.string("backend"), c.string("math")
    assert name is not None and backend is not None and math is not None
    if backend not in BACKENDS:
        raise c.fail("backend", f'expected "cpu" or "cuda", got {_describe(backend)}')
    lse = c.boolean("writes_lse", required=True)
    assert lse is not None
    caps = _capabilities(file, f"{where}.capabilities", c.obj_at("capabilities"))
    return VariantRow(name=name, backend=backend, math=math, summary=c.text("summary"), writes_lse=lse,
                      tags=c.strings("tags"), capabilities=caps)


def parse_variants(file: str, obj: Any, where: str = "context.variants") -> tuple[VariantRow, ...]:
    """The rows of `context.variants`; () when the key is absent or null (older files)."""
    if obj is None:
        return ()
    if not isinstance(obj, list):
        raise InputError(file, where, f"expected an array of variant rows, got {_describe(obj)}")
    rows: list[VariantRow] = []
    seen: dict[tuple[str, str], int] = {}
    baseline: dict[str, int] = {}
    for i, item in enumerate(obj):
        at = f"{where}[{i}]"
        r = parse_row(file, at, item)
        key = (r.name, r.backend)
        if key in seen:
            raise InputError(file, f"{at}.name", f"duplicate row {r.name} ({r.backend}), "
                                                 f"also {where}[{seen[key]}]")
        seen[key] = i
        if r.has(BASELINE):
            if r.backend in baseline:
                j = baseline[r.backend]
                raise InputError(file, f"{at}.tags", f"second {r.backend} row tagged baseline "
                                                     f"({r.name}; {where}[{j}] {rows[j].name} is too)")
            baseline[r.backend] = i
        rows.append(r)
    return tuple(rows)

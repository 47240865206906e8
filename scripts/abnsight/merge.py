"""Join Nsight Compute kernels to attnbench benchmark entries by NVTX range.

The key: attnbench's --profile mode runs each selected configuration once
inside an NVTX push/pop range of domain `attnbench` whose name is exactly the
benchmark `name` of the JSON entry. Every kernel ncu profiled inside that
range belongs to the entry; several kernels (QK^T, softmax, PV) are summed.

Fields added to a matched entry (docs/profiling.md):
  dram_bytes_measured  bytes  sum of dram__bytes_read.sum + dram__bytes_write.sum
  l2_bytes_measured    bytes  sum of lts__t_bytes.sum
  kernel_time_ncu      ms     sum of gpu__time_duration.sum (same unit as time_ms)
  ncu_kernels          count  kernels profiled in the range
  ncu_metrics          object every metric column summed, in base units (bytes, ns, counts)
A field whose metric is missing (no column, or an empty cell in one of the
range's kernels) is left out with a warning.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

from . import units
from .ncu_csv import KernelRow, NcuCsvError, NcuTable

DOMAIN = "attnbench"
DRAM_READ = "dram__bytes_read.sum"
DRAM_WRITE = "dram__bytes_write.sum"
L2_BYTES = "lts__t_bytes.sum"
DURATION = "gpu__time_duration.sum"

# field -> (metrics summed, factor from base units to the field's unit)
FIELDS: dict[str, tuple[tuple[str, ...], float]] = {
    "dram_bytes_measured": ((DRAM_READ, DRAM_WRITE), 1.0),
    "l2_bytes_measured": ((L2_BYTES,), 1.0),
    "kernel_time_ncu": ((DURATION,), 1e-6),  # ns -> ms
}
# The unit dimension each field's metrics must have.
_FIELD_DIMENSION = {"dram_bytes_measured": "bytes", "l2_bytes_measured": "bytes", "kernel_time_ncu": "time"}

Warn = Callable[[str], None]


@dataclass
class RangeData:
    name: str
    kernels: list[KernelRow] = field(default_factory=list)


@dataclass
class MergeResult:
    matched: dict[str, RangeData] = field(default_factory=dict)  # benchmark name -> kernels
    unmatched: dict[str, RangeData] = field(default_factory=dict)  # range name -> kernels
    outside: int = 0  # kernels in no attnbench range


def _boundary_pattern(name: str) -> re.Pattern[str]:
    # The name as a whole field of the NVTX cell: after ':', '@', a quote or
    # whitespace, before ':', a quote, whitespace or the end.
    return re.compile(r'(?:^|(?<=[:@"\s]))' + re.escape(name) + r'(?=[:"\s]|$)')


class RangeResolver:
    """Finds the benchmark a kernel row belongs to."""

    def __init__(self, table: NcuTable, names: list[str]) -> None:
        self.table = table
        self.names = set(names)
        # Longest first, so a name that is a prefix of another never wins.
        self._by_length = sorted(self.names, key=len, reverse=True)
        self._patterns: dict[str, re.Pattern[str]] = {}

    def _contained(self, cell: str) -> str | None:
        for n in self._by_length:
            if n in cell:
                p = self._patterns.setdefault(n, _boundary_pattern(n))
                if p.search(cell):
                    return n
        return None

    def resolve(self, row: KernelRow) -> tuple[str | None, str | None]:
        """(benchmark name, None) on a match; (None, range name) for an attnbench
        range that matches no benchmark; (None, None) outside attnbench ranges."""
        ranges = self.table.push_pop_ranges(row, DOMAIN)
        for r in reversed(ranges):  # innermost first
            if r in self.names:
                return r, None
        cell = " ".join(row.nvtx.values())
        found = self._contained(cell)
        if found is not None:
            return found, None
        if ranges:
            return None, ranges[-1]
        m = re.search(re.escape(DOMAIN) + r"[:@]([^\"]+)", cell)
        if m:
            return None, m.group(1).strip()
        return None, None


def group_kernels(table: NcuTable, names: list[str]) -> MergeResult:
    res = MergeResult()
    resolver = RangeResolver(table, names)
    for row in table.rows:
        bench, other = resolver.resolve(row)
        if bench is not None:
            res.matched.setdefault(bench, RangeData(bench)).kernels.append(row)
        elif other is not None:
            res.unmatched.setdefault(other, RangeData(other)).kernels.append(row)
        else:
            res.outside += 1
    return res


def _metric_sum(table: NcuTable, kernels: list[KernelRow], metric: str) -> float | None:
    """Sum of a metric over kernels in base units; None if any cell is empty."""
    unit = table.units[metric]
    total = 0.0
    for k in kernels:
        try:
            v = units.to_base(k.cells[metric], unit)
        except units.UnitError as e:
            raise NcuCsvError(f"column {metric}: {e}") from None
        except ValueError:
            raise NcuCsvError(f"line {k.line}: {metric} is not a number: {k.cells[metric]!r}") from None
        if v is None:
            return None
        total += v
    return total


def _tidy(v: float) -> float | int:
    """Whole numbers (bytes, counts) as JSON integers."""
    return int(v) if v.is_integer() and abs(v) < 2**53 else v


def measured_fields(table: NcuTable, data: RangeData, warn: Warn) -> dict[str, Any]:
    """The fields to add to the entry of one range (module docstring)."""
    out: dict[str, Any] = {}
    for fname, (metrics, factor) in FIELDS.items():
        if any(m not in table.units for m in metrics):
            continue  # reported once per file by check_columns
        parts = [_metric_sum(table, data.kernels, m) for m in metrics]
        if any(p is None for p in parts):
            warn(f"range {data.name!r}: a kernel has no value for {'/'.join(metrics)}; {fname} omitted")
            continue
        out[fname] = _tidy(sum(p for p in parts if p is not None) * factor)
    out["ncu_kernels"] = len(data.kernels)
    metrics_out: dict[str, float] = {}
    for m, unit in table.units.items():
        if not m.endswith(".sum"):
            continue  # per-launch attributes (launch__*, profiler__*) do not add up
        try:
            units.scale(unit)
        except units.UnitError:
            continue  # a column we do not interpret (percentages, rates)
        v = _metric_sum(table, data.kernels, m)
        if v is not None:
            metrics_out[m] = _tidy(v)
    if metrics_out:
        out["ncu_metrics"] = metrics_out
    return out


def check_columns(table: NcuTable, warn: Warn) -> None:
    """Warn once per missing metric column; fail on a unit of the wrong kind."""
    for fname, (metrics, _) in FIELDS.items():
        missing = [m for m in metrics if m not in table.units]
        if missing:
            warn(f"ncu CSV has no column {', '.join(missing)}: {fname} omitted "
                 "(not collected, or not available on this GPU)")
            continue
        for m in metrics:
            try:
                dim = units.dimension(table.units[m])
            except units.UnitError as e:
                raise NcuCsvError(f"column {m}: {e}") from None
            if dim != _FIELD_DIMENSION[fname]:
                raise NcuCsvError(f"column {m}: unit {table.units[m]!r} is not a {_FIELD_DIMENSION[fname]} unit")


def merge(bench: dict[str, Any], table: NcuTable, warn: Warn, csv_label: str = "") -> dict[str, Any]:
    """Add the measured fields to the entries of `bench` (modified in place and returned)."""
    entries = bench.get("benchmarks")
    if not isinstance(entries, list):
        raise ValueError('benchmark JSON has no "benchmarks" list')
    names = [e["name"] for e in entries if isinstance(e, dict) and isinstance(e.get("name"), str)]
    check_columns(table, warn)
    res = group_kernels(table, names)

    for rng in res.unmatched.values():
        warn(f"NVTX range {rng.name!r} ({len(rng.kernels)} kernel(s)) matches no benchmark in the JSON; ignored")
    if res.outside:
        warn(f"{res.outside} kernel(s) outside any {DOMAIN} NVTX range; ignored")
    if table.rows and not res.matched:
        warn("no profiled kernel matched a benchmark: was the JSON written by the same build and filter?")

    fields = {name: measured_fields(table, data, warn) for name, data in res.matched.items()}
    for e in entries:
        if isinstance(e, dict) and e.get("name") in fields:
            e.update(fields[e["name"]])
    ctx = bench.setdefault("context", {})
    if isinstance(ctx, dict):
        ctx["ncu_merge"] = {
            "csv": csv_label,
            "benchmarks_merged": len(res.matched),
            "ranges_unmatched": len(res.unmatched),
            "metrics": sorted(table.units),
        }
    return bench

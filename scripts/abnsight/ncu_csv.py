"""Read Nsight Compute's `--csv --page raw` table.

Layout (ncu 2023-2025; the header and cell forms below were taken from public
exports of those versions):

    "ID","Process ID","Process Name","Host Name","thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg","Kernel Name",...,"dram__bytes_read.sum",...
    "","","","","","",...,"byte",...                       <- unit row
    "0","4242","attnbench","host",<push/pop cell>,"flash2_fwd_kernel",...,"1048576",...

and the push/pop cell, once CSV-unquoted, reads
    1  "attnbench:NAME:none:none:none:none:none:none"

One row per profiled kernel. The push/pop column holds the thread id and then
one quoted piece per open range, bottom of the stack first, each
`<domain>:<range name>:<k trailing fields>` where the trailing fields are the
ones the header names after `Push/Pop_Range` (six with Msg_Type, five in older
versions without it). Range names may contain ':' (attnbench's do: `B:1`), so
the name is what lies between the domain and the last k fields. Other NVTX
column forms (start/end ranges, a plain "NVTX" column) are kept as raw text;
the merge then finds a known benchmark name inside the cell.

Lines ncu prints around the table (`==PROF==`, `==WARNING==`, application
output when --csv went to stdout) are skipped before the header and ignored
after it.
"""
from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field

ID_COLUMN = "ID"
KERNEL_COLUMN = "Kernel Name"
# ncu metric names: <unit>__<counter>[.<rollup>[.<submetric>]]
_METRIC_RE = re.compile(r"^[a-z0-9]+__[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*$")
_QUOTED_RE = re.compile(r'"([^"]*)"')


class NcuCsvError(ValueError):
    """The file is not a usable Nsight Compute raw-page CSV (one line of text)."""


@dataclass
class NvtxColumn:
    name: str
    kind: str  # "push_pop" | "start_end" | "other"
    trailing_fields: int | None  # fields after the range name in each piece (push_pop only)


@dataclass
class KernelRow:
    line: int  # 1-based line in the file, for messages
    id: str
    kernel: str
    nvtx: dict[str, str]  # NVTX column name -> raw cell
    cells: dict[str, str]  # metric column -> raw cell


@dataclass
class NcuTable:
    units: dict[str, str]  # metric column -> unit as printed (byte, Kbyte, nsecond, ...)
    nvtx_columns: list[NvtxColumn]
    rows: list[KernelRow] = field(default_factory=list)

    def push_pop_ranges(self, row: KernelRow, domain: str) -> list[str]:
        """Range names of `domain` open around the kernel, bottom of the stack first."""
        names: list[str] = []
        for col in self.nvtx_columns:
            if col.kind == "push_pop" and col.trailing_fields is not None:
                names += split_push_pop_cell(row.nvtx.get(col.name, ""), domain, col.trailing_fields)
        return names


def classify_nvtx_column(header: str) -> NvtxColumn | None:
    """An NvtxColumn for a header naming NVTX ranges, else None."""
    parts = header.split(":")
    for i, p in enumerate(parts):
        if "Push/Pop_Range" in p:
            return NvtxColumn(header, "push_pop", len(parts) - 1 - i)
        if "Start/Stop_Range" in p or "Start/End_Range" in p:
            return NvtxColumn(header, "start_end", None)
    if "nvtx" in header.lower():
        return NvtxColumn(header, "other", None)
    return None


def split_push_pop_cell(cell: str, domain: str, trailing_fields: int) -> list[str]:
    """Range names of `domain` in one push/pop cell (see the module docstring)."""
    out: list[str] = []
    prefix = domain + ":"
    for piece in _QUOTED_RE.findall(cell):
        if not piece.startswith(prefix):
            continue
        parts = piece[len(prefix):].split(":")
        if trailing_fields and len(parts) > trailing_fields:
            parts = parts[:-trailing_fields]
        out.append(":".join(parts))
    return out


def _is_header(row: list[str]) -> bool:
    return bool(row) and row[0].strip() == ID_COLUMN and KERNEL_COLUMN in row


def _is_noise(row: list[str]) -> bool:
    """A line ncu or the application printed, not part of the table."""
    return not row or all(c.strip() == "" for c in row) or row[0].lstrip().startswith("==")


def parse(text: str) -> NcuTable:
    """Parse the raw page; NcuCsvError with one line of text when it is not one."""
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        table = list(csv.reader(io.StringIO(text)))
    except csv.Error as e:
        raise NcuCsvError(f"not CSV: {e}") from None
    start = next((i for i, r in enumerate(table) if _is_header(r)), None)
    if start is None:
        raise NcuCsvError(
            'no Nsight Compute raw-page header (a row starting "ID" with a "Kernel Name" column); '
            "export with: ncu --import REPORT.ncu-rep --csv --page raw")
    header = [h.strip() for h in table[start]]
    if "Metric Name" in header and "Metric Value" in header:
        raise NcuCsvError("this is the details page (one row per metric); export with --page raw")
    if len(set(header)) != len(header):
        raise NcuCsvError("duplicate column names in the header row")
    if start + 1 >= len(table):
        raise NcuCsvError("no unit row after the header (expected ncu --csv --page raw)")
    unit_row = table[start + 1]
    if len(unit_row) != len(header) or unit_row[0].strip() != "":
        raise NcuCsvError("second row is not a unit row (expected ncu --csv --page raw: header, units, kernels)")

    nvtx = [c for c in (classify_nvtx_column(h) for h in header) if c is not None]
    if not nvtx:
        raise NcuCsvError("no NVTX column: profile with ncu --nvtx (scripts/profile_ncu.sh does)")
    metric_cols = [h for h in header if _METRIC_RE.match(h)]
    units = {h: unit_row[header.index(h)].strip() for h in metric_cols}
    out = NcuTable(units=units, nvtx_columns=nvtx)

    idx = {h: i for i, h in enumerate(header)}
    for n, row in enumerate(table[start + 2:], start=start + 3):
        if _is_noise(row):
            continue
        if len(row) != len(header):
            raise NcuCsvError(f"line {n}: {len(row)} cells, header has {len(header)}")
        out.rows.append(KernelRow(
            line=n,
            id=row[idx[ID_COLUMN]].strip(),
            kernel=row[idx[KERNEL_COLUMN]].strip(),
            nvtx={c.name: row[idx[c.name]] for c in nvtx},
            cells={h: row[idx[h]] for h in metric_cols},
        ))
    return out


def read(path: str) -> NcuTable:
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise NcuCsvError(f"cannot read {path}: {e}") from None
    return parse(text)

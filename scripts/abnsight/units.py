"""Numbers and units as Nsight Compute prints them, converted to base units.

The unit row of `--csv --page raw` names each column's unit. With
`--print-units base` (ncu's default under --csv in recent versions) these are
`byte`, `nsecond`, `inst`; older versions, or `--print-units auto`, scale them:
`Kbyte`, `Mbyte`, `usecond`, `msecond`, `Kinst`. Decimal prefixes (K = 1e3)
are ncu's convention; binary ones (`KiB`, `Kibyte`) are accepted too.
Numbers may carry thousands separators ("1,234,567.5").
"""
from __future__ import annotations

# Base unit per dimension: bytes, seconds (returned in ns), plain counts.
_TIME_NS = {
    "nsecond": 1.0, "ns": 1.0,
    "usecond": 1e3, "us": 1e3,
    "msecond": 1e6, "ms": 1e6,
    "second": 1e9, "s": 1e9,
}
_DECIMAL = {"": 1.0, "K": 1e3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
_BINARY = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40}
_BYTE_BASES = ("byte", "B")
# Count-like units: instructions, sectors, requests, warps, threads, cycles.
_COUNT_BASES = ("inst", "sector", "request", "warp", "thread", "cycle", "block", "")




class UnitError(ValueError):
    """A unit string that this module does not know how to scale."""


def dimension(unit: str) -> str:
    """'bytes', 'time' or 'count' for a unit string; UnitError when unknown."""
    return _parse(unit)[0]


def scale(unit: str) -> float:
    """Factor from `unit` to its base unit (byte, nanosecond, count)."""
    return _parse(unit)[1]


def _parse(unit: str) -> tuple[str, float]:
    u = unit.strip()
    if u in _TIME_NS:
        return "time", _TIME_NS[u]
    # Try every prefix: "Kinst" is K + inst, not Ki + nst.
    for prefixes in (_BINARY, _DECIMAL):
        for prefix, factor in prefixes.items():
            if not u.startswith(prefix):
                continue
            base = u[len(prefix):]
            if base in _BYTE_BASES:
                return "bytes", factor
            if base in _COUNT_BASES and (base != "" or prefix == ""):
                return "count", factor
    raise UnitError(f"unknown unit {unit!r}")


def parse_number(text: str) -> float | None:
    """A metric cell as a float; None for an empty or 'n/a' cell.

    Raises ValueError for anything else that is not a number.
    """
    t = text.strip().replace(",", "").replace("\u202f", "").replace("\u00a0", "")
    if t == "" or t.lower() in ("n/a", "na", "-", "nan"):
        return None
    return float(t)


def to_base(text: str, unit: str) -> float | None:
    """A cell converted to its base unit (bytes, ns, count); None when empty."""
    v = parse_number(text)
    return None if v is None else v * scale(unit)

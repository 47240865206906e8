"""Number and Markdown formatting shared by the report's sections."""
from __future__ import annotations

from typing import Optional


def fmt(x: Optional[float], digits: int = 3) -> str:
    if x is None:
        return "—"
    if x == 0:
        return "0"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    return f"{x:.{digits}g}"


def pct(x: Optional[float]) -> str:
    if x is None:
        return "—"
    return f"{x:.0f}%" if x >= 10 else f"{x:.2g}%"


def md_escape(s: str) -> str:
    return s.replace("|", "\\|")


def one_line(s: str, limit: int = 70) -> str:
    """A reason shortened to one table cell: first line, at most `limit` characters."""
    words = " ".join(s.split())
    return words if len(words) <= limit else words[: limit - 1].rstrip() + "…"


def fmt_num(x: float) -> str:
    if x == 0:
        return "0"
    if abs(x) >= 1024 and float(x).is_integer() and int(x) % 1024 == 0:
        return f"{int(x) // 1024}k"  # sequence lengths: 1k, 4k, 64k
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    if abs(x) >= 100:
        return f"{x:.0f}"
    if abs(x) >= 1:
        return f"{x:.3g}"
    return f"{x:.2g}"

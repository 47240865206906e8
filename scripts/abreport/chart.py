"""What every chart builder returns: figures with a data summary, and notes on what was not drawn."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from matplotlib.figure import Figure

from . import style


@dataclass
class Chart:
    stem: str  # file name without extension: roofline_fp32
    title: str  # one line for the report
    fig: Figure
    # What was drawn, for tests and the report: e.g. {"points": {"flash2": 6}, ...}
    summary: dict[str, Any] = field(default_factory=dict)
    paths: list[str] = field(default_factory=list)


@dataclass
class Built:
    charts: list[Chart] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # why a chart was not drawn

    def extend(self, other: "Built") -> None:
        self.charts += other.charts
        self.notes += other.notes

    def save(self, out_dir: str, close: bool = True, formats: tuple[str, ...] = style.FORMATS) -> None:
        for c in self.charts:
            c.paths = style.save(c.fig, out_dir, c.stem, formats)
            if close:
                style.close(c.fig)

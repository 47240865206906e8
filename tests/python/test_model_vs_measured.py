"""Model vs measured DRAM bytes."""
from __future__ import annotations

import pytest

from abreport import model_vs_measured


def test_bars_per_variant_with_median_ratio(load):
    ds = load("cuda_ncu.json")
    built = model_vs_measured.build(ds)
    c = built.charts[0]
    assert c.summary["variants"] == ["cublas_unfused", "flash1", "flash2"]
    # the fixture scales measured bytes by 1.05 / 1.3 / 0.92 (+-3%)
    med = c.summary["median_ratio"]
    assert med["cublas_unfused"] == pytest.approx(1.05, abs=0.04)
    assert med["flash1"] == pytest.approx(1.3, abs=0.05)
    assert med["flash2"] == pytest.approx(0.92, abs=0.04)
    ax = c.fig.axes[0]
    assert len(ax.patches) == 3  # one bar per variant
    assert [t.get_text() for t in ax.get_xticklabels()] == c.summary["variants"]
    assert any(l.get_ydata()[0] == 1.0 for l in ax.get_lines())  # the "model exact" line


def test_without_measured_bytes_there_is_a_note(load):
    built = model_vs_measured.build(load("cpu_small.json"))
    assert built.charts == []
    assert "dram_bytes_measured" in built.notes[0]

"""Roofline: points per variant, ceilings (solid measured, dashed theoretical), ridge, scales, title."""
from __future__ import annotations

from collections import Counter

import pytest
from matplotlib.collections import PathCollection

from abreport import roofline


def _scatter_points(ax) -> int:
    return sum(len(c.get_offsets()) for c in ax.collections if isinstance(c, PathCollection))


def _lines(ax) -> dict[str, str]:
    return {l.get_label(): l.get_linestyle() for l in ax.get_lines() if not l.get_label().startswith("_")}


def test_cpu_roofline_has_one_point_per_ok_entry_and_measured_ceilings_only(load):
    ds = load("cpu_small.json")
    built = roofline.build(ds)
    assert [c.stem for c in built.charts] == ["roofline_fp32"]
    chart = built.charts[0]
    ax = chart.fig.axes[0]
    ok = Counter(e.variant for e in ds.ok_entries)
    assert chart.summary["points"] == dict(ok)
    assert _scatter_points(ax) == sum(ok.values())
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    lines = _lines(ax)
    assert lines == {"measured bandwidth 11.5 GB/s": "-", "measured fp32 peak 0.085 TFLOP/s": "-"}
    assert chart.summary["ceilings"] == ["measured_bandwidth", "measured_peak"]
    assert chart.summary["ridges"] == {"measured": pytest.approx(0.085e3 / 11.5)}
    title = ax.get_title()
    assert "Intel(R) Xeon(R) CPU @ 2.20GHz" in title and "fp32" in title and "1c2d7ce5a3f0" in title
    assert "FLOP / byte" in ax.get_xlabel() and "TFLOP/s" in ax.get_ylabel()
    # the legend sits outside the data area
    leg = ax.get_legend()
    assert leg is not None
    assert leg.get_bbox_to_anchor().x0 >= ax.bbox.x1 - 1


def test_cuda_roofline_one_chart_per_dtype_with_both_ceiling_kinds(load):
    ds = load("cuda_multi.json")
    built = roofline.build(ds)
    assert [c.stem for c in built.charts] == ["roofline_fp32", "roofline_fp16", "roofline_bf16"]
    for chart in built.charts:
        dt = chart.summary["dtype"]
        ax = chart.fig.axes[0]
        assert _scatter_points(ax) == sum(1 for e in ds.ok_entries if e.dtype == dt)
        styles = _lines(ax)
        measured = [s for k, s in styles.items() if k.startswith("measured")]
        theoretical = [s for k, s in styles.items() if k.startswith("theoretical")]
        assert measured == ["-", "-"] and theoretical == ["--", "--"]
        assert set(chart.summary["ridges"]) == {"measured", "theoretical"}
        assert dt in ax.get_title() and "NVIDIA H100" in ax.get_title()
        assert chart.summary["marker_by"] == "d"


def test_skipped_and_failed_entries_are_not_plotted(load):
    ds = load("cuda_multi.json")
    fp32 = next(c for c in roofline.build(ds).charts if c.summary["dtype"] == "fp32")
    # flash2 fp32 d=128 was skipped (8 configurations): only d=64 points remain
    assert fp32.summary["points"]["flash2"] == 8


def test_measured_dram_bytes_move_points_and_are_marked(load):
    ds = load("cuda_ncu.json")
    chart = roofline.build(ds).charts[0]
    n_ok = len(ds.ok_entries)
    assert chart.summary["measured_points"] == n_ok
    ax = chart.fig.axes[0]
    xs = sorted(x for c in ax.collections if isinstance(c, PathCollection) for x, _ in c.get_offsets())
    expected = sorted(e.flops / e.dram_bytes_measured for e in ds.ok_entries)
    assert xs == pytest.approx(expected)
    assert "measured DRAM bytes" in ax.get_xlabel()


def test_no_ceilings_still_draws_points(load):
    chart = roofline.build(load("cpu_no_ceilings.json")).charts[0]
    assert chart.summary["ceilings"] == [] and chart.summary["ridges"] == {}
    assert _scatter_points(chart.fig.axes[0]) == 67
    assert any("no ceilings" in t.get_text() for t in chart.fig.axes[0].texts)


def test_points_above_error_tolerance_are_ringed(fx, tmp_path):
    import json

    from abreport.load import load_dataset
    doc = json.load(open(fx("cpu_harness.json")))
    doc["benchmarks"][0]["err_ok"] = False
    p = tmp_path / "bad_err.json"
    p.write_text(json.dumps(doc))
    chart = roofline.build(load_dataset([str(p)])).charts[0]
    assert chart.summary["above_tolerance"] == 1
    ax = chart.fig.axes[0]
    rings = [c for c in ax.collections if isinstance(c, PathCollection) and len(c.get_facecolors()) == 0]
    assert len(rings) == 1 and len(rings[0].get_offsets()) == 1


def test_a_long_legend_gets_columns_and_the_axes_keep_their_size(tmp_path):
    """40 entries beside a 5.4-inch axes: one column collapsed the constrained layout (a
    UserWarning, and axes of zero width in the quick sweep's roofline); control: 5 entries."""
    import warnings

    from matplotlib.lines import Line2D

    from abreport import style

    for n, want_cols in ((40, 2), (5, 1)):
        fig = style.new_figure(9.0, 5.4)
        ax = fig.add_subplot()
        ax.plot([1, 2], [1, 2])
        handles = [Line2D([], [], label=f"v{i}", marker="o", linestyle="none") for i in range(n)]
        leg = style.section_legend(ax, [("variant", handles)])
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            style.save(fig, str(tmp_path), f"legend{n}", ("png",))
        assert leg._ncols == want_cols
        assert ax.get_position().width > 0.3  # a fraction of the (possibly widened) figure
        style.close(fig)

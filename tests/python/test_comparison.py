"""The comparison section (scripts/abreport/comparison.py): per problem, exact rows beside the
comparison rows with the distance to exact attention; negative controls: a run without comparison
entries gets no section, and an entry without approx_err_vs_exact is not called an approximation."""
from __future__ import annotations

from abreport import comparison
from abreport.data import Ceilings, Dataset, Entry, Run
from abreport.variants import Capabilities, VariantRow


def _row(name: str, math: str, tags: tuple[str, ...]) -> VariantRow:
    caps = Capabilities(dtypes=("fp32",), masks=("none",), head_dims=(), gqa=True, max_nq=None)
    return VariantRow(name=name, backend="cpu", math=math, summary="", writes_lse=True, tags=tags, capabilities=caps)


ROWS = (_row("flash2", "softmax", ("fused", "tiled")), _row("flash1", "softmax", ("fused",)),
        _row("linformer", "linformer", ("fused", "comparison")), _row("additive", "additive", ("fused", "comparison")))


def _entry(variant: str, time_ms: float, distance: float | None = None, nq: int = 512, br: int = 64) -> Entry:
    raw = {} if distance is None else {"approx_err_vs_exact": distance}
    flops = 4.0 * 64 * nq * 512 * 2
    return Entry(run="r", name=f"{variant}/{nq}/{br}", variant=variant, backend="cpu", dtype="fp32", mask="none",
                 group="comparison", status="ok", B=1, H=2, Hkv=2, Nq=nq, Nkv=512, d=64, Br=br, Bc=64,
                 time_ms=time_ms, tflops=flops / time_ms / 1e9, gbps=1.0, intensity=1.0, flops=flops, bytes=1.0,
                 raw=raw)


def _ds(entries: list[Entry]) -> Dataset:
    return Dataset(runs=[Run(path="x.json", label="r", context={}, ceilings=Ceilings(), entries=entries,
                             variants=ROWS)])


def test_each_problem_lists_exact_rows_first_with_speed_and_distance():
    es = [_entry("flash2", 8.0), _entry("flash2", 6.0, br=32), _entry("flash1", 12.0),
          _entry("linformer", 3.0, distance=2.5), _entry("additive", 24.0),
          _entry("flash2", 1.0, nq=1)]  # another problem, without comparison rows: left out
    problems = comparison.comparison_problems(_ds(es))
    assert len(problems) == 1
    rows = next(iter(problems.values()))
    assert [(r.entry.variant, r.kind) for r in rows] == [
        ("flash2", "exact"), ("flash1", "exact"), ("linformer", "approximation"), ("additive", "another function")]
    assert rows[0].entry.time_ms == 6.0  # the fastest tile
    assert [r.distance for r in rows] == [0.0, 0.0, 2.5, None]
    assert [r.vs_exact for r in rows] == [1.0, 0.5, 2.0, 0.25]
    text = "\n".join(comparison.section(_ds(es)))
    assert "| linformer | approximation | 3 |" in text and "| 2.5 |" in text


def test_negative_controls():
    assert comparison.section(_ds([_entry("flash2", 8.0), _entry("flash1", 9.0)])) == []
    # A comparison row whose entry carries no distance is another function, not an approximation.
    rows = next(iter(comparison.comparison_problems(_ds([_entry("flash2", 8.0), _entry("linformer", 3.0)])).values()))
    assert rows[1].kind == "another function" and rows[1].distance is None

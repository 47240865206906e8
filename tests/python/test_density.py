"""Block-sparse density chart (scripts/abreport/density.py): density from the FLOP model,
speedup against the dense flash2 entry of the same run and shape; negative control: without a
dense flash2 entry there is no speedup and a note says why."""
from __future__ import annotations

import dataclasses

from abreport import density
from abreport.data import Ceilings, Dataset, Entry, Run


def _entry(variant: str, mask: str, visible_frac: float, time_ms: float, run: str = "r") -> Entry:
    B, H, Nq, Nkv, d = 1, 2, 1024, 1024, 64
    flops = 4.0 * d * Nq * Nkv * B * H * visible_frac
    return Entry(run=run, name=f"{variant}/{mask}", variant=variant, backend="cuda", dtype="bf16", mask=mask,
                 group="density", status="ok", B=B, H=H, Hkv=H, Nq=Nq, Nkv=Nkv, d=d, Br=64, Bc=64,
                 time_ms=time_ms, tflops=flops / time_ms / 1e9, gbps=1.0, intensity=1.0, flops=flops, bytes=1.0)


def _ds(entries: list[Entry]) -> Dataset:
    return Dataset(runs=[Run(path="x.json", label="r", context={}, ceilings=Ceilings(), entries=entries)])


def test_density_and_speedup_over_dense_flash2():
    es = [_entry("flash2", "none", 1.0, 8.0), _entry("flash2", "random:64,4", 0.25, 8.0),
          _entry("sparse", "random:64,4", 0.25, 2.5), _entry("sparse", "random:64,1", 1 / 16, 1.0)]
    assert abs(density.density(es[3]) - 1 / 16) < 1e-12
    built = density.build(_ds(es))
    assert [c.stem for c in built.charts] == ["density_bf16"]
    s = built.charts[0].summary
    assert s["points"] == {"flash2": 2, "sparse": 2}
    sp = dict((round(x, 6), y) for x, y in s["speedup"]["sparse"])
    assert sp[0.0625] == 8.0 and sp[0.25] == 8.0 / 2.5
    assert not built.notes
    # The dense entry may sit in another group (a sweep keeps a configuration under its first group).
    moved = [dataclasses.replace(es[0], group="masks")] + es[1:]
    assert density.build(_ds(moved)).charts[0].summary["speedup"]["sparse"] == s["speedup"]["sparse"]


def test_negative_control_no_dense_baseline_no_speedup():
    es = [_entry("sparse", "random:64,4", 0.25, 2.5), _entry("sparse", "random:64,1", 1 / 16, 1.0)]
    built = density.build(_ds(es))
    assert built.charts and built.charts[0].summary["speedup"] == {}
    assert any("no dense flash2" in n for n in built.notes)


def test_other_groups_are_not_drawn():
    e = dataclasses.replace(_entry("sparse", "random:64,4", 0.25, 2.5), group="masks")
    assert density.build(_ds([e])).charts == []

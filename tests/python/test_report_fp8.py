"""FP8 beside BF16 (scripts/abreport/fp8.py, fp8_chart.py): per problem, the e4m3 rows,
their bf16 partners (flash3_fp8 -> flash3; fp32 on the CPU backend, which has no bf16), the
speed ratios from the same run, both errors; skipped and partner-less fp8 rows, entries written
before the new fields; negative controls (pairing across problems, pairing by dtype only, a
partner rule that ignores `_fp8`) give another table, so these tests can fail."""
from __future__ import annotations

import json

import numpy as np
import pytest

from abreport import fp8, fp8_chart, report, roofline
from abreport.chart import Built
from abreport.errors import InputError
from abreport.load import load_dataset
from make_fixtures import CPU_ROWS, CUDA_ROWS, context, entry, row

TOL_E4M3 = 2.0 ** -4
LONG_REASON = ("flash3_fp8 needs sm_90a (fp8 wgmma is Hopper-only); this device is sm_80, "
               "so the row is not instantiated for it")
# (platform, variant, dtype, d, mask, N, Br, Bc, time ms or None for skipped, extra fields)
CUDA_SHAPE = dict(B=1, H=16, Hkv=16)
CPU_SHAPE = dict(B=1, H=4, Hkv=4)


def _entry(platform, variant, dtype, d, mask, n, br, bc, time_ms, status="ok", msg="", new=True,
           rel_err=None, tol=None, e2e=None, err_ok=True, scales=(0.0125, 0.0142, 0.0131)):
    shape = CUDA_SHAPE if platform == "cuda" else CPU_SHAPE
    e = entry(variant, platform, dtype, "seq", shape["B"], shape["H"], shape["Hkv"], n, n, d, mask, br, bc,
              1.0, 1.0, np.random.default_rng(3), status=status, msg=msg)
    if status != "ok":
        e.update(rel_err=None, err_ok=None, tolerance=TOL_E4M3 if dtype == "e4m3" else 2e-2)
        if new:
            e.update(e2e_rel_err=None, out_dtype="bf16" if dtype == "e4m3" else dtype)
        return e
    e.update(time_ms=time_ms, real_time=time_ms, cpu_time=time_ms, tflops=e["flops"] / time_ms / 1e9,
             gbps=e["bytes"] / time_ms / 1e6, err_ok=err_ok,
             rel_err=rel_err if rel_err is not None else (0.021 if dtype == "e4m3" else 0.0031),
             tolerance=tol if tol is not None else (TOL_E4M3 if dtype == "e4m3" else 2e-2))
    if new:
        e["e2e_rel_err"] = e2e if e2e is not None else (0.034 if dtype == "e4m3" else 0.0042)
        e["out_dtype"] = "bf16" if dtype == "e4m3" else dtype
        if dtype == "e4m3":
            e["input_scales"] = dict(zip("qkv", scales))
    else:  # written before fp8: none of the new fields, no tolerance either
        for k in ("tolerance", "e2e_rel_err", "out_dtype", "input_scales"):
            e.pop(k, None)
    return e


def _peer(variant, dtype, d, mask, n, time_ms):
    e = _entry("cuda", "x", dtype, d, mask, n, 64, 64, time_ms)
    name = f"{variant}/torch/{dtype}/B:1/H:16/Hkv:16/Nq:{n}/Nkv:{n}/d:{d}/mask:{mask}/on:cuda"
    e.update(name=name, run_name=name, variant=variant, backend="torch", Br=0, Bc=0, peer=True,
             peer_device="cuda", library="torch 9.9", bytes=e["bytes_min"])
    return e


def benchmarks():
    c = "cuda"
    b = [
        # cuda d128 none N=4096: fp8 at two tiles (128x128 the fastest); its partner flash3; cudnn_sdpa
        # is the fastest bf16; linear (another math) and a torch peer are faster still and left out
        _entry(c, "flash3_fp8", "e4m3", 128, "none", 4096, 128, 128, 0.16),
        _entry(c, "flash3_fp8", "e4m3", 128, "none", 4096, 128, 64, 0.2),
        _entry(c, "flash3", "bf16", 128, "none", 4096, 128, 128, 0.256),
        _entry(c, "flash3", "bf16", 128, "none", 4096, 128, 64, 0.3),
        _entry(c, "cudnn_sdpa", "bf16", 128, "none", 4096, 128, 128, 0.2),
        _entry(c, "flash2", "bf16", 128, "none", 4096, 128, 64, 0.4),
        _entry(c, "linear", "bf16", 128, "none", 4096, 64, 64, 0.05),
        _entry(c, "naive", "bf16", 128, "none", 4096, 64, 64, None, status="skipped", msg="needs 34 GiB, 12 GiB free"),
        _peer("torch_sdpa_flash", "bf16", 128, "none", 4096, 0.1),
        # the same shape at N=1024
        _entry(c, "flash3_fp8", "e4m3", 128, "none", 1024, 128, 128, 0.02),
        _entry(c, "flash3", "bf16", 128, "none", 1024, 128, 128, 0.03),
        _entry(c, "cudnn_sdpa", "bf16", 128, "none", 1024, 128, 128, 0.028),
        # causal: the fp8 row is skipped
        _entry(c, "flash3_fp8", "e4m3", 128, "causal", 4096, 128, 128, None, status="skipped", msg=LONG_REASON),
        _entry(c, "flash3", "bf16", 128, "causal", 4096, 128, 128, 0.15),
        # d64: no flash3 bf16 row (no partner); flash2 bf16 written before fp8
        _entry(c, "flash3_fp8", "e4m3", 64, "none", 2048, 128, 128, 0.05),
        _entry(c, "flash2", "bf16", 64, "none", 2048, 128, 64, 0.09, new=False),
        # a bf16 problem without any e4m3 entry: no table
        _entry(c, "flash3", "bf16", 256, "none", 4096, 128, 64, 0.5),
        # CPU backend: flash2 runs e4m3; no bf16 there, so fp32 is the reference; N=256's e4m3 entry
        # is old-style (no e2e_rel_err, out_dtype, scales, tolerance); N=512's is over tolerance
        _entry("cpu", "flash2", "e4m3", 64, "causal", 256, 64, 64, 2.0, new=False),
        _entry("cpu", "flash2", "fp32", 64, "causal", 256, 64, 64, 3.0),
        _entry("cpu", "naive", "fp32", 64, "causal", 256, 64, 64, 5.0),
        _entry("cpu", "flash2", "e4m3", 64, "causal", 512, 64, 64, 6.0, rel_err=0.09, err_ok=False),
        _entry("cpu", "flash2", "fp32", 64, "causal", 512, 64, 64, 9.0),
        _entry("cpu", "naive", "fp32", 64, "causal", 512, 64, 64, None, status="skipped", msg="workspace limit"),
    ]
    return b


CEILINGS = {"measured": {"bandwidth_gbps": 4200.0, "tflops": {"bf16": 715.0}},
            "theoretical": {"bandwidth_gbps": 4800.0, "tflops": {"bf16": 989.4, "e4m3": 1978.9}}}


def doc(bms=None):
    ctx = context("cuda", "NVIDIA H200", CEILINGS, "quick")
    ctx["variants"] = CPU_ROWS + CUDA_ROWS + [
        row("flash3", "cuda", "FA3-style Hopper kernel", ["tiled", "fused"], ["fp16", "bf16"]),
        row("flash3_fp8", "cuda", "flash3 with e4m3 inputs", ["tiled", "fused"], ["e4m3"]),
        row("cudnn_sdpa", "cuda", "cuDNN fused SDPA", ["library", "fused"], ["fp16", "bf16"])]
    return {"context": ctx, "benchmarks": benchmarks() if bms is None else bms}


@pytest.fixture
def ds(tmp_path):
    p = tmp_path / "fp8run.json"
    p.write_text(json.dumps(doc()))
    return load_dataset([str(p)])


def _time(variant, dtype, platform, d, mask, n, br=None):
    """The fixture's time for an entry (the fastest tile unless br is given)."""
    ts = [b["time_ms"] for b in benchmarks() if b["variant"] == variant and b["dtype"] == dtype
          and b["backend"] == platform and b["d"] == d and b["mask"] == mask and b["Nq"] == n
          and b["status"] == "ok" and (br is None or b["Br"] == br)]
    return min(ts)


def _table(ts, platform, d, mask, n):
    return next(t for t in ts if (t.problem.platform, t.problem.d, t.problem.mask, t.problem.Nq) == (platform, d, mask, n))


# ---- pairing -----------------------------------------------------------------------------------

def test_one_table_per_problem_with_e4m3(ds):
    ts = fp8.tables(ds)
    keys = [(t.problem.platform, t.problem.d, t.problem.mask, t.problem.Nq) for t in ts]
    assert keys == [("cpu", 64, "causal", 256), ("cpu", 64, "causal", 512), ("cuda", 64, "none", 2048),
                    ("cuda", 128, "none", 1024), ("cuda", 128, "none", 4096), ("cuda", 128, "causal", 4096)]
    assert [t.ref_dtype for t in ts] == ["fp32", "fp32", "bf16", "bf16", "bf16", "bf16"]


def test_partner_and_best_ratios_from_the_same_problem(ds):
    t = _table(fp8.tables(ds), "cuda", 128, "none", 4096)
    (r,) = t.fp8
    assert (r.entry.variant, r.entry.Br, r.entry.Bc) == ("flash3_fp8", 128, 128)  # fastest tile
    assert r.partner.variant == "flash3" and r.partner.dtype == "bf16" and r.partner.Nq == 4096
    expected = _time("flash3", "bf16", "cuda", 128, "none", 4096) / _time("flash3_fp8", "e4m3", "cuda", 128, "none", 4096)
    assert r.vs_partner == expected == 0.256 / 0.16
    assert t.best_ref.variant == "cudnn_sdpa"  # linear (another math) and the torch peer are left out
    assert r.vs_best == _time("cudnn_sdpa", "bf16", "cuda", 128, "none", 4096) / 0.16 == 0.2 / 0.16
    assert [e.variant for e in t.ref] == ["cudnn_sdpa", "flash3", "flash2", "naive"]
    assert t.ref[-1].status == "skipped"
    t1k = _table(fp8.tables(ds), "cuda", 128, "none", 1024)
    assert t1k.fp8[0].vs_partner == 0.03 / 0.02 and t1k.fp8[0].vs_best == 0.028 / 0.02


def test_skipped_and_partnerless_fp8_rows(ds):
    ts = fp8.tables(ds)
    (sk,) = _table(ts, "cuda", 128, "causal", 4096).fp8
    assert sk.entry.status == "skipped" and sk.vs_partner is None and sk.vs_best is None
    assert sk.partner.variant == "flash3" and sk.partner.ok
    (lone,) = _table(ts, "cuda", 64, "none", 2048).fp8
    assert lone.partner is None and lone.vs_partner is None and lone.why_no_ratio == "no bf16 flash3"
    assert lone.vs_best == 0.09 / 0.05  # the fastest bf16 (flash2, an old-style entry)


def test_cpu_compares_with_fp32_and_tolerates_old_entries(ds):
    ts = fp8.tables(ds)
    t = _table(ts, "cpu", 64, "causal", 256)
    (r,) = t.fp8
    assert r.partner.variant == "flash2" and r.partner.dtype == "fp32" and r.vs_partner == 3.0 / 2.0
    assert r.entry.e2e_rel_err is None and r.entry.tolerance is None and r.entry.input_scales is None
    t512 = _table(ts, "cpu", 64, "causal", 512)
    assert t512.fp8[0].vs_partner == 9.0 / 6.0 and t512.fp8[0].entry.err_ok is False
    assert t512.best_ref.variant == "flash2"  # naive skipped there


def test_failed_entry_keeps_its_measured_errors():
    from abreport.data import Entry
    e = Entry(run="r", name="x", variant="flash3_fp8", backend="cuda", dtype="e4m3", mask="none", group="seq",
              status="failed", B=1, H=1, Hkv=1, Nq=1, Nkv=1, d=64, Br=64, Bc=64, error_message="rel_err above",
              rel_err=0.2, err_ok=False, tolerance=TOL_E4M3, e2e_rel_err=0.21)
    assert fp8.rel_err_text(e) == "0.2 > 0.0625 ✗" and fp8._na(e.e2e_rel_err, e) == "0.21"
    skipped = Entry(run="r", name="x", variant="flash3_fp8", backend="cuda", dtype="e4m3", mask="none",
                    group="seq", status="skipped", B=1, H=1, Hkv=1, Nq=1, Nkv=1, d=64, Br=64, Bc=64)
    assert fp8.rel_err_text(skipped) == "—" and fp8._na(None, skipped) == "—"


def test_new_fields_load(ds):
    e = next(e for e in ds.ok_entries if e.variant == "flash3_fp8" and e.Nq == 4096 and e.Br == 128 and e.Bc == 128)
    assert e.out_dtype == "bf16" and e.tolerance == TOL_E4M3 and e.e2e_rel_err == 0.034
    assert e.input_scales == (0.0125, 0.0142, 0.0131)


def test_bad_input_scales_is_one_input_error(tmp_path):
    d = doc()
    d["benchmarks"][0]["input_scales"] = {"q": 0.1, "k": "big", "v": 0.1}
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(d))
    with pytest.raises(InputError, match=r"benchmarks\[0\]\.input_scales\.k: expected a number"):
        load_dataset([str(p)])


# ---- negative controls ---------------------------------------------------------------------------

def test_control_a_partner_from_another_problem_gives_another_ratio(ds, monkeypatch):
    """A problem key without the lengths (pairing across problems) merges N=1024 and N=4096:
    the fp8 row then takes N=1024's entry and the table's ratio is not the one asserted above."""
    right = _table(fp8.tables(ds), "cuda", 128, "none", 4096).fp8[0].vs_partner
    monkeypatch.setattr(fp8, "problem_key", lambda e: (e.run, e.platform, e.B, e.H, e.Hkv, e.d, e.mask))
    merged = [t for t in fp8.tables(ds) if (t.problem.platform, t.problem.d, t.problem.mask) == ("cuda", 128, "none")]
    assert len(merged) == 1
    assert merged[0].fp8[0].vs_partner == 0.03 / 0.02 != right  # N=1024's fp8 against N=1024's flash3


def test_control_pairing_by_dtype_only_gives_another_ratio(ds):
    """Pairing each fp8 row with the fastest bf16 entry (dtype only) is the 'vs fastest' column,
    not the partner's: on this problem they differ (cudnn_sdpa, not flash3)."""
    r = _table(fp8.tables(ds), "cuda", 128, "none", 4096).fp8[0]
    assert r.vs_best != r.vs_partner


def test_control_partner_rule_without_the_suffix_finds_no_partner(ds, monkeypatch):
    monkeypatch.setattr(fp8, "partner_name", lambda v: v)
    r = _table(fp8.tables(ds), "cuda", 128, "none", 4096).fp8[0]
    assert r.partner is None and r.vs_partner is None and r.why_no_ratio == "no bf16 flash3_fp8"


# ---- Markdown ------------------------------------------------------------------------------------

def _rows_after(md: str, heading: str) -> list[list[str]]:
    lines = md.splitlines()
    i = lines.index(heading)
    j = next(k for k in range(i, len(lines)) if lines[k].startswith("| variant |"))
    out = []
    for line in lines[j + 2:]:
        if not line.startswith("|"):
            break
        out.append([c.strip() for c in line.strip("|").split("|")])
    return out


def test_section_tables_rows_ratios_and_errors(ds, tmp_path):
    md = report.render(ds, Built(), str(tmp_path))
    assert "## FP8 beside BF16" in md
    rows = _rows_after(md, "### cuda · B1 H16 Hkv16 Nq4096 Nkv4096 d128 none")
    assert [r[0] for r in rows] == ["flash3_fp8", "cudnn_sdpa", "flash3", "flash2", "naive"]
    f = rows[0]
    assert f[1:4] == ["e4m3 (O bf16)", "128×128", "ok"]
    assert f[4] == "0.16" and f[5] == report.fmt(4 * 128 * 4096 * 4096 * 16 / 0.16 / 1e9)
    assert f[6] == "0.021 ≤ 0.0625 ✓" and f[7] == "0.034"
    assert f[8] == "1.60× (flash3)" and f[9] == "1.25× (cudnn_sdpa)"
    assert rows[1][3] == "ok, fastest" and rows[1][8:] == ["—", "—"]
    assert rows[4][3] == "skipped: needs 34 GiB, 12 GiB free" and rows[4][4:8] == ["—"] * 4
    i = md.splitlines().index("### cuda · B1 H16 Hkv16 Nq4096 Nkv4096 d128 none")
    after = md.splitlines()[i + 2 + len(rows) + 2:i + 2 + len(rows) + 5]
    assert "e4m3 input scales (q / k / v): flash3_fp8 0.0125 / 0.0142 / 0.0131." in after
    assert fp8.TABLE_SENTENCE in after and md.count(fp8.TABLE_SENTENCE) == len(fp8.tables(ds))
    assert md.count(fp8.ERRORS_SENTENCE) == 1  # the long form once, under the summary


def test_section_skipped_partnerless_old_and_cpu_rows(ds, tmp_path):
    md = report.render(ds, Built(), str(tmp_path))
    sk = _rows_after(md, "### cuda · B1 H16 Hkv16 Nq4096 Nkv4096 d128 causal")[0]
    assert sk[3].startswith("skipped: flash3_fp8 needs sm_90a") and sk[3].endswith("…") and len(sk[3]) < 90
    assert sk[4:] == ["—"] * 6
    lone, old = _rows_after(md, "### cuda · B1 H16 Hkv16 Nq2048 Nkv2048 d64 none")
    assert lone[8] == "n/a (no bf16 flash3)" and lone[9] == "1.80× (flash2)"
    assert old[0] == "flash2" and old[1] == "bf16" and old[6] == "0.0031 (tolerance n/a) ✓" and old[7] == "n/a"
    cpu = _rows_after(md, "### cpu · B1 H4 Hkv4 Nq256 Nkv256 d64 causal")
    head = next(l for l in md.splitlines()[md.splitlines().index("### cpu · B1 H4 Hkv4 Nq256 Nkv256 d64 causal"):]
                if l.startswith("| variant |"))
    assert "speed vs fp32 partner" in head
    assert cpu[0][:2] == ["flash2", "e4m3"] and cpu[0][7] == "n/a" and cpu[0][8] == "1.50× (flash2)"
    over = _rows_after(md, "### cpu · B1 H4 Hkv4 Nq512 Nkv512 d64 causal")[0]
    assert over[6] == "0.09 > 0.0625 ✗" and over[8] == "1.50× (flash2)"


def test_section_summary_per_fp8_variant(ds, tmp_path):
    md = report.render(ds, Built(), str(tmp_path))
    lines = md.splitlines()
    i = next(k for k, l in enumerate(lines) if l.startswith("| fp8 variant |"))
    rows = [[c.strip() for c in l.strip("|").split("|")] for l in lines[i + 2:i + 4]]
    # flash2 (CPU): 2 problems, both ran, N=512's over tolerance; e2e only from N=512 (N=256's is old-style)
    assert rows[0] == ["flash2", "flash2", "2", "2", "1", "1.50× (1.50–1.50×, n=2)", "0.09", "0.034"]
    # flash3_fp8: 4 problems, the causal one skipped; ratios 1.5 (N=1024) and 1.6 (N=4096), the
    # d64 one has no partner
    assert rows[1] == ["flash3_fp8", "flash3", "4", "3", "3", "1.55× (1.50–1.60×, n=2)", "0.021", "0.034"]


def test_no_section_without_e4m3(load, tmp_path):
    ds = load("cuda_multi.json")
    md = report.render(ds, Built(), str(tmp_path))
    assert "FP8" not in md and "e4m3" not in md
    assert fp8.section(ds) == [] and fp8.tables(ds) == []
    built = fp8_chart.build(ds)
    assert built.charts == [] and built.notes == []


# ---- charts --------------------------------------------------------------------------------------

def test_chart_fp8_beside_partner_with_peaks(ds):
    built = fp8_chart.build(ds)
    assert not built.notes
    (c,) = built.charts
    s = c.summary
    assert c.stem == "fp8_vs_bf16"
    assert s["panels"] == ["cpu d=64 causal", "cuda d=64 none", "cuda d=128 none"]  # causal's fp8 was skipped
    assert s["points"] == {"flash2 (e4m3)": 2, "flash2 (fp32)": 2, "flash3_fp8 (e4m3)": 3, "flash3 (bf16)": 2}
    assert s["ratios"]["flash3_fp8"] == [[1024, 0.03 / 0.02], [4096, 0.256 / 0.16]]
    peaks = ["measured bf16 peak 715 TFLOP/s", "theoretical bf16 peak 989.4 TFLOP/s",
             "theoretical e4m3 peak 1979 TFLOP/s"]
    assert sorted(s["peaks"]["cuda d=128 none"]) == peaks
    assert "cpu d=64 causal" not in s["peaks"]  # the context's ceilings are the GPU's
    ax = c.fig.axes[2]
    lines = {l.get_label(): l for l in ax.get_lines()}
    assert lines["flash3_fp8 (e4m3)"].get_linestyle() == "-" and lines["flash3 (bf16)"].get_linestyle() == "--"
    assert list(lines["flash3_fp8 (e4m3)"].get_xdata()) == [1024, 4096]
    assert list(lines["flash3 (bf16)"].get_ydata()) == [e.tflops for e in sorted(
        (e for e in ds.ok_entries if e.variant == "flash3" and e.d == 128 and e.mask == "none"
         and e.Br == 128 and e.Bc == 128), key=lambda e: e.Nq)]
    e4 = lines["theoretical e4m3 peak 1979 TFLOP/s"]
    assert list(e4.get_ydata()) == [1978.9, 1978.9] and e4.get_linestyle() == "--"
    assert ax.get_yscale() == "log" and ax.get_xscale() == "log"


def test_chart_needs_two_lengths(tmp_path):
    bms = [b for b in benchmarks() if b["Nq"] in (2048, 4096)]
    p = tmp_path / "one_n.json"
    p.write_text(json.dumps(doc(bms)))
    built = fp8_chart.build(load_dataset([str(p)]))
    assert built.charts == [] and "two or more sequence lengths" in built.notes[0]


def test_roofline_and_ceilings_table_take_e4m3(ds, tmp_path):
    c = next(c for c in roofline.build(ds).charts if c.stem == "roofline_e4m3")
    assert c.summary["ceilings"] == ["measured_bandwidth", "theoretical_bandwidth", "theoretical_peak"]
    assert c.summary["points"] == {"flash2": 2, "flash3_fp8": 4}  # every tile is a point
    md = report.render(ds, Built(), str(tmp_path))
    assert "| e4m3 peak (TFLOP/s) | — | 1,979 |" in md
    lines = md.splitlines()
    section = lines[lines.index("## Best configuration per variant"):lines.index("## Versus libraries")]
    best = [l.split("|")[1:3] for l in section if l.startswith("| ") and l.count("|") > 10][1:]
    dtypes = [d.strip() for _, d in best]
    assert dtypes[-2:] == ["e4m3", "e4m3"] and set(dtypes[:-2]) == {"fp32", "bf16"}
    roof = next(l for l in md.splitlines() if l.startswith("| flash3_fp8 | e4m3 |")).split("|")[8].strip()
    assert roof == report.fmt(1978.9)  # compute-bound under the theoretical e4m3 peak


def test_report_command_writes_section_and_chart(tmp_path, cli):
    p = tmp_path / "fp8run.json"
    p.write_text(json.dumps(doc()))
    r = cli("report", str(p), "--out", str(tmp_path / "out"), "--formats", "png")
    assert r.returncode == 0, r.stderr
    md = (tmp_path / "out" / "report.md").read_text()
    assert "## FP8 beside BF16" in md and "![FP8 beside BF16: TFLOP/s vs sequence length](fp8_vs_bf16.png)" in md
    assert (tmp_path / "out" / "fp8_vs_bf16.png").is_file()


def test_e4m3_roof_takes_the_datasheet_peak_when_none_was_measured(ds):
    """The run measured no fp8 GEMM: the roof of an e4m3 entry is min(theoretical e4m3 peak, measured
    bandwidth x intensity), not the bandwidth roof alone (which sits far above the fp8 peak here)."""
    from abreport.roofs import position
    e = min((e for e in ds.ok_entries if e.variant == "flash3_fp8" and e.Nq == 4096), key=lambda e: e.time_ms)
    p = position(e, ds.ceilings)
    assert 4200.0 * e.intensity / 1e3 > 1978.9  # the negative control: bandwidth alone is no roof here
    assert p.attainable_tflops == 1978.9 and p.bound == "compute"
    assert p.ridge == 1978.9 * 1e3 / 4200.0
    assert p.ceilings == "measured bandwidth and theoretical e4m3 peak"
    bf = min((e for e in ds.ok_entries if e.variant == "flash3" and e.Nq == 4096 and e.d == 128
              and e.mask == "none"), key=lambda e: e.time_ms)
    assert position(bf, ds.ceilings).ceilings == "measured"  # bf16 has its measured peak


def test_fp8_chart_command(tmp_path, capsys):
    from abreport import cli
    p = tmp_path / "fp8run.json"
    p.write_text(json.dumps(doc()))
    assert cli.main(["fp8", str(p), "--out", str(tmp_path / "c"), "--formats", "svg"]) == 0
    assert (tmp_path / "c" / "fp8_vs_bf16.svg").is_file()
    assert capsys.readouterr().out.strip().endswith("fp8_vs_bf16.svg")


def test_cpu_roof_of_e4m3_is_the_fp32_gemm():
    """The CPU backend computes e4m3 (and bf16) in fp32: its measured fp32 GEMM is their compute
    roof, said in the ceilings table; a CUDA context with the same figures gets no fp32 stand-in
    (the control: there e4m3 has its own tensor-core peak or none)."""
    from abreport.load import parse_context
    ctx = {"backend": "cpu", "ceilings": {"measured": {"bandwidth_gbps": 20.0, "tflops": {"fp32": 0.19}}}}
    _, cpu, _ = parse_context("x.json", ctx)
    assert cpu.measured.peak("e4m3") == 0.19 and cpu.measured.peak_is_fp32_compute("e4m3")
    assert cpu.measured.ridge("e4m3") == 0.19 * 1e3 / 20.0
    assert cpu.measured.peak("fp32") == 0.19 and not cpu.measured.peak_is_fp32_compute("fp32")
    _, cuda, _ = parse_context("x.json", {**ctx, "backend": "cuda"})
    assert cuda.measured.peak("e4m3") is None and not cuda.measured.peak_is_fp32_compute("e4m3")

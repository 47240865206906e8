"""The interactive page: report.html beside report.md, and compare's HTML view.

One self-contained file per page: the data (every plotted entry as the file holds it, plus what
the charts place it at) is embedded as JSON and drawn by a small hand-written SVG renderer
(assets/page.js, assets/page.css, inlined), so the page opens offline and weighs little more than
its data. What is plotted comes from `views` (the same selections, ratios and roofs the
matplotlib charts draw) and `compare` (the same verdicts as the Markdown table): this module
only serialises them. No matplotlib here.
"""
from __future__ import annotations

import html
import json
import math
import os
from collections import Counter
from typing import Any, Optional

from .compare import ORDER, Comparison
from .comparison import comparison_problems
from .data import Dataset, Entry, Run
from .palette import colors_for, variant_colors
from .roofs import ROOFS, position
from .views import bound_rows, exp_marks, marker_axis, roofline_entries, roofs, seq_view, versus_rows

ASSETS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "assets")
PAGE_NAME = "report.html"
# The facets a reader filters by: (key in the page data, label). `pass` is the
# backward-pass axis (docs/backward.md); an entry without the field is a forward pass.
FACETS = (("variant", "variant"), ("dtype", "dtype"), ("mask", "mask"), ("d", "head dim"),
          ("pass", "pass"), ("backend", "backend"))
DEFAULT_PASS = "fwd"


def pass_of(e: Entry) -> str:
    """The entry's pass (fwd | bwd | fwd_bwd); files written before the field existed: fwd."""
    p = (e.raw or {}).get("pass")
    return p if isinstance(p, str) and p else DEFAULT_PASS


def facet_values(e: Entry) -> list[str]:
    return [e.variant, e.dtype, e.mask, str(e.d), pass_of(e), e.backend]


def raw_of(e: Entry) -> dict:
    """The entry as the file holds it (every field); an entry built in code: its typed fields."""
    if e.raw is not None:
        return e.raw
    return {k: getattr(e, k) for k in ("name", "variant", "backend", "dtype", "mask", "status", "B", "H",
                                       "Hkv", "Nq", "Nkv", "d", "Br", "Bc", "time_ms", "tflops", "gbps",
                                       "intensity", "flops", "bytes", "rel_err", "err_ok")}


class _Entries:
    """The page's entry table: each entry once, referred to by its index."""

    def __init__(self, ds: Optional[Dataset]) -> None:
        self.rows: list[dict] = []
        self.info: list[dict] = []
        self._index: dict[int, int] = {}
        self._ds = ds

    def add(self, e: Entry) -> int:
        i = self._index.get(id(e))
        if i is not None:
            return i
        i = self._index[id(e)] = len(self.rows)
        self.rows.append(raw_of(e))
        info: dict[str, Any] = {"f": facet_values(e), "run": e.run, "peer": e.peer, "on": e.platform}
        if self._ds is not None and e.ok and e.roof_intensity is not None and e.tflops is not None:
            p = position(e, self._ds.ceilings)
            info["roof"] = {"intensity": p.intensity, "source": p.intensity_source, "roof": p.attainable_tflops,
                            "pct": p.pct_of_roof, "ridge": p.ridge, "bound": p.bound, "ceilings": p.ceilings,
                            "bounds_ms": p.bounds_ms, "exp_note": p.exp_note}
        self.info.append(info)
        return i


def _roofline_chart(ds: Dataset, dtype: str, ents: _Entries) -> Optional[dict]:
    entries = roofline_entries(ds, dtype)
    if not entries:
        return None
    mkey, mvals = marker_axis(entries)
    measured = any(e.measured_intensity is not None for e in entries)
    return {
        "type": "roofline", "id": f"roofline_{dtype}", "dtype": dtype,
        "title": f"Roofline — {ds.title_suffix(dtype)}",
        "x_label": "arithmetic intensity (FLOP / byte, "
                   + ("measured DRAM bytes where present)" if measured else "modeled bytes)"),
        "y_label": "achieved TFLOP/s",
        "marker_by": mkey, "marker_values": [str(v) for v in mvals],
        "points": [[ents.add(e), e.roof_intensity, e.tflops] for e in entries],
        "roofs": [{"kind": r.kind, "bw": r.bandwidth_gbps, "peak": r.peak_tflops, "ridge": r.ridge,
                   "exp": r.exps_per_s,
                   "label_bw": r.label_bandwidth() if r.bandwidth_gbps else None,
                   "label_peak": r.label_peak(dtype) if r.peak_tflops else None,
                   "label_exp": r.label_exp() if r.exps_per_s else None} for r in roofs(ds.ceilings, dtype)],
        # The third roof where it binds: [entry, intensity, its exp roof in TFLOP/s] (views.exp_marks).
        "exp_marks": [[ents.add(m.entry), m.intensity, m.exp_roof_tflops] for m in exp_marks(ds, entries)],
    }


def _bounds_chart(ds: Dataset, dtype: str, ents: _Entries) -> Optional[dict]:
    """The bound breakdown (bounds.py): per variant's best entry, each roof's lower bound as % of its time."""
    rows = bound_rows(ds, dtype)
    if not rows or not any(e.exps is not None for e in ds.ok_entries):  # as bounds.build: no exps, no chart
        return None
    return {"type": "bounds", "id": f"bounds_{dtype}", "dtype": dtype,
            "title": f"Bound breakdown — {ds.title_suffix(dtype)}",
            "roofs": list(ROOFS),
            "rows": [[ents.add(r.entry), {k: r.pct(k) for k in ROOFS}, r.binding,
                      r.pos.exp_note if r.pos.exp_ms is None else ""] for r in rows]}


def _seq_charts(ds: Dataset, dtype: str, baseline: Optional[str], ents: _Entries) -> list[dict]:
    v = seq_view(ds, dtype, baseline)
    if v is None:
        return []
    panels = [(d, m) for d in v.d_vals for m in v.masks]
    # rows = head dims, columns = masks while there are at most 3 masks, else 3 columns (as the PNG)
    cols = len(v.masks) if len(v.masks) <= 3 else 3
    common = {"dtype": dtype, "x_label": "sequence length N (= Nq = Nkv)", "x_ticks": v.seqs, "cols": cols,
              "marker_by": None, "marker_values": []}  # circles, as the PNG (peers: hollow diamonds)

    def series(key: str, pts: list[list], e: Entry, dash: str) -> dict:
        return {"key": key, "variant": e.variant, "peer": e.peer, "dash": "dotted" if e.peer else dash,
                "points": sorted(pts, key=lambda p: p[1])}

    tflops_panels = []
    for d, m in panels:
        sel = [e for e in v.pts if e.d == d and e.mask == m]
        ss = []
        for key in sorted({v.series_key(e) for e in sel}):
            s = [e for e in sel if v.series_key(e) == key]
            ss.append(series(key, [[ents.add(e), e.Nq, e.tflops] for e in s], s[0],
                             "dashed" if v.is_baseline(s[0]) else "solid"))
        tflops_panels.append({"title": f"d = {d}, mask {m}", "series": ss})
    out = [dict(common, type="lines", id=f"tflops_seq_{dtype}", y_label="TFLOP/s",
                title=f"TFLOP/s vs sequence length — {ds.title_suffix(dtype)}", panels=tflops_panels)]
    if v.ratios:
        sp_panels = []
        for d, m in panels:
            ss = []
            for key in sorted(v.ratios):
                rs = [r for r in v.ratios[key] if r.entry.d == d and r.entry.mask == m]
                if rs:
                    ss.append(series(key, [[ents.add(r.entry), r.entry.Nq, r.ratio, ents.add(r.base)] for r in rs],
                                     rs[0].entry, "solid"))
            sp_panels.append({"title": f"d = {d}, mask {m}", "series": ss})
        out.append(dict(common, type="lines", id=f"speedup_{dtype}", hline=1.0, baseline=v.base_names,
                        y_label=f"speedup over {v.base_names} (×)",
                        title=f"Speedup over {v.base_names} (time ratio, >1 = faster) — {ds.title_suffix(dtype)}",
                        panels=sp_panels))
    return out


def _versus(ds: Dataset, ents: _Entries) -> dict:
    rows = versus_rows(ds)
    return {"type": "versus", "id": "versus",
            "rows": [[ents.add(o), ents.add(lib), r] for o, lib, r in rows]}


def _comparison(ds: Dataset, ents: _Entries) -> Optional[dict]:
    """The comparison section (report.md's, scripts/abreport/comparison.py): per problem the exact
    rows beside the approximations and other scores; None when the run has none."""
    problems = comparison_problems(ds)
    if not problems:
        return None
    return {"type": "comparison", "id": "comparison",
            "problems": [[[ents.add(r.entry), r.kind, r.distance, r.bound, r.vs_exact] for r in rows]
                         for rows in problems.values()]}


def report_data(ds: Dataset, baseline: Optional[str] = None) -> dict:
    """Everything the report page draws, as plain JSON-able data."""
    ents = _Entries(ds)
    # Every entry that ran is on the page (hover, table, filters), charted or not.
    for e in ds.ok_entries:
        ents.add(e)
    charts: list[dict] = []
    for dt in ds.dtypes:
        c = _roofline_chart(ds, dt, ents)
        if c:
            charts.append(c)
    for dt in ds.dtypes:
        c = _bounds_chart(ds, dt, ents)
        if c:
            charts.append(c)
    seq = [c for dt in ds.dtypes for c in _seq_charts(ds, dt, baseline, ents)]
    charts += [c for c in seq if c["id"].startswith("tflops_seq_")]
    charts += [c for c in seq if c["id"].startswith("speedup_")]
    if not any(c["id"].startswith("speedup_") for c in seq):
        bases = sorted({b for b in (baseline or r.default_baseline for r in ds.runs) if b})
        charts.append({"type": "note", "id": "speedup",
                       "text": "No speedup chart: " + ("the baseline " + ", ".join(bases) + " shares no problem "
                               "with another variant." if bases else "this run has no default baseline "
                               "(no row tagged baseline in context.variants); pass --baseline VARIANT.")})
    charts.append(_versus(ds, ents))
    comparison = _comparison(ds, ents)
    if comparison:
        charts.append(comparison)
    r = ds.runs[0]
    counts = Counter(e.status for e in ds.entries)
    meta = [("device", ds.device), ("backend", ds.backend), ("commit", ds.commit), ("date", r.ctx("date")),
            ("host", r.ctx("host", r.ctx("host_name"))), ("preset", r.ctx("preset")),
            ("entries", f"{counts.get('ok', 0)} ran, {counts.get('skipped', 0)} skipped, "
                        f"{counts.get('failed', 0)} failed (skipped and failed: report.md)"),
            ("input", ", ".join(os.path.basename(x.path) for x in ds.runs))]
    return {"kind": "report", "title": f"attnbench report — {ds.device} ({ds.backend}), commit {ds.commit}",
            "meta": meta, "links": [["report.md", "report.md"]],
            "facets": _facets(ents.info), "colors": colors_for(ds), "entries": ents.rows, "info": ents.info,
            "charts": charts}


def _facets(info: list[dict]) -> list[dict]:
    out = []
    for j, (key, label) in enumerate(FACETS):
        vals = sorted({i["f"][j] for i in info}, key=lambda s: (0, int(s), "") if s.isdigit() else (1, 0, s))
        if key == "pass" and DEFAULT_PASS not in vals:
            vals = [DEFAULT_PASS] + vals
        out.append({"key": key, "label": label, "values": vals})
    return out


def compare_data(c: Comparison, a: Run, b: Run) -> dict:
    """The comparison page: per configuration both entries, ratio B/A, its noise band, verdict."""
    ents = _Entries(None)
    rows = []
    regs = {id(r) for r in c.regressions}
    for row in sorted(c.rows, key=lambda r: (ORDER[r.verdict], -(r.ratio or 0))):
        rows.append({"name": row.name, "a": _maybe(ents, row.a), "b": _maybe(ents, row.b), "ratio": row.ratio,
                     "limit": row.limit, "verdict": row.verdict, "regression": id(row) in regs})
    ok_variants = {e.variant for e in a.entries + b.entries if e.ok}
    peers = {e.variant for e in a.entries + b.entries if e.peer}
    n = Counter(r.verdict for r in c.rows)
    return {"kind": "compare", "title": f"attnbench compare — {a.label} (A) → {b.label} (B)",
            "meta": [("A", f"{a.path} — {a.device}, commit {a.commit}"),
                     ("B", f"{b.path} — {b.device}, commit {b.commit}"),
                     ("rule", f"ratio = time B / time A; slower when ratio > 1 + max({c.threshold:g}, "
                              f"{c.spread_k:g} · (cv_A + cv_B)); faster when ratio < 1 / that limit"),
                     ("verdicts", ", ".join(f"{n[v]} {v}" for v in ORDER if n.get(v))),
                     ("result", f"{len(c.regressions)} regression(s)" if c.regressions else "no regression")],
            "links": [], "facets": _facets(ents.info),
            "colors": variant_colors(ok_variants, peers=peers), "entries": ents.rows, "info": ents.info,
            "charts": [{"type": "compare", "id": "compare", "rows": rows,
                        "threshold": c.threshold, "spread_k": c.spread_k}]}


def _maybe(ents: _Entries, e: Optional[Entry]) -> Optional[int]:
    return None if e is None else ents.add(e)


def _json_for_script(data: dict) -> str:
    """JSON safe inside <script>: no '</' can close the element, no NaN (not JSON: a file read
    with Python's json may hold one; it is shown as the string "NaN")."""
    try:
        text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except ValueError:
        text = json.dumps(_finite(data), separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return text.replace("</", "<\\/").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _finite(o: Any) -> Any:
    if isinstance(o, float) and not math.isfinite(o):
        return str(o)
    if isinstance(o, dict):
        return {k: _finite(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_finite(v) for v in o]
    return o


def _asset(name: str) -> str:
    with open(os.path.join(ASSETS, name), encoding="utf-8") as f:
        return f.read()


def render(data: dict) -> str:
    """The whole page: CSS, the data, the renderer; nothing fetched."""
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{html.escape(data['title'])}</title>\n<style>\n{_asset('page.css')}</style>\n</head>\n"
            "<body>\n<noscript>This page draws its charts with JavaScript; report.md holds the same "
            "results as text.</noscript>\n"
            f"<script type=\"application/json\" id=\"abdata\">{_json_for_script(data)}</script>\n"
            f"<script>\n{_asset('page.js')}</script>\n</body>\n</html>\n")


def write_report(ds: Dataset, out_dir: str, baseline: Optional[str] = None) -> str:
    path = os.path.join(out_dir, PAGE_NAME)
    _write(path, render(report_data(ds, baseline)))
    return path


def write_compare(c: Comparison, a: Run, b: Run, path: str) -> str:
    _write(path, render(compare_data(c, a, b)))
    return path


def _write(path: str, text: str) -> None:
    d = os.path.dirname(path)
    if d:
        os.makedirs(d, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


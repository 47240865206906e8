"""The Markdown report of one run: context, ceilings, the run's variant rows (context.variants),
best configuration per variant (TFLOP/s, GB/s, % of bound, the binding roof among compute, memory
and exp, error),
every chart embedded by relative path, and what was skipped or failed with the reasons."""
from __future__ import annotations

import os
from collections import Counter
from typing import Optional

from . import (alternatives, bounds, comparison, density, fp8, fp8_chart, gqa_decode, html_report, model_vs_measured,
               roofline, speedup, tiles, training)
from .chart import Built
from .data import Dataset, Entry, dtype_order
from .roofs import exp_rate, position
from .text import fmt, md_escape, pct  # noqa: F401 (report.fmt, report.pct: used by tests)
from .variants import BACKENDS
from .views import exp_rate_text, library_row_names, versus_rows  # noqa: F401 (report.versus_rows: used by tests)


# One line under each chart: how to read it (docs/charts.md has the long form).
CAPTIONS = {
    "roofline": "Left of the dotted ridge line a point is memory-bound (roof = bandwidth × intensity), "
                "right of it compute-bound (roof = peak); the vertical gap to the roof is what is left. "
                "Solid ceilings measured, dashed theoretical. A purple tick over a point is its exp roof, where "
                "that roof (exps / exp rate) binds.",
    "bounds": "Each variant's best configuration: its three lower bounds (compute, memory, exp) as a share of "
              "its measured time; the longest bar binds, its length is the % of bound.",
    "tflops_seq": "Achieved TFLOP/s per variant against sequence length; the baseline is dashed.",
    "speedup": "Baseline time / variant time for the same problem in this run; above 1 the variant is faster.",
    "tiles": "TFLOP/s for each tile shape; the boxed cell is the best tile for that variant and head dim.",
    "gqa": "Fewer KV heads mean fewer K/V bytes; time follows the bytes only while the kernel is memory-bound.",
    "decode": "Decode is memory-bound: the gap between a curve and the copy-bandwidth line is its headroom "
              "(above the line: the KV cache fits in a cache level).",
    "density": "Block-sparse masks: useful TFLOP/s and time of dense flash2 / time against the fraction of "
               "visible pairs; the dotted 1/density is the speedup of skipping every invisible pair at equal speed.",
    "fp8_vs_bf16": "Each fp8 row (solid) beside its bf16 partner (dashed) in the same run; the horizontal lines "
                   "are the device's e4m3 and bf16 peaks (measured solid, theoretical dashed).",
    "alternatives": "Causal attention (dashed) against each scan (solid) on the problem of the same width; right: "
                    "attention time / scan time, above 1 the scan is faster, the dotted line its crossover length.",
    "model_vs_measured": "1.0 = the byte model is exact; above, the kernel moves more bytes than modeled; "
                         "below, caches absorb reuse the model counts as DRAM traffic.",
}


def caption(stem: str) -> str:
    for prefix in sorted(CAPTIONS, key=len, reverse=True):
        if stem.startswith(prefix):
            return CAPTIONS[prefix]
    return ""


def build_all(ds: Dataset, baseline: Optional[str] = None) -> Built:
    out = Built()
    out.extend(roofline.build(ds))
    out.extend(bounds.build(ds))
    out.extend(speedup.build(ds, baseline))
    out.extend(tiles.build(ds))
    out.extend(gqa_decode.build_gqa(ds))
    out.extend(gqa_decode.build_decode(ds))
    out.extend(model_vs_measured.build(ds))
    out.extend(density.build(ds))
    out.extend(fp8_chart.build(ds))
    out.extend(alternatives.build(ds))
    return out


def shape_text(e: Entry) -> str:
    """The problem; a backward entry says its pass (the forward's text is unchanged)."""
    text = f"B{e.B} H{e.H} Hkv{e.Hkv} Nq{e.Nq} Nkv{e.Nkv} d{e.d} {e.mask}"
    return text if e.pass_ == "fwd" else f"{text} pass:{e.pass_}"


def config_text(e: Entry) -> str:
    if e.peer:
        return f"{shape_text(e)} on {e.peer_device}"
    return f"{shape_text(e)} Br{e.Br} Bc{e.Bc}"


def _versus_table(ds: Dataset) -> list[str]:
    if not ds.peers and not library_row_names(ds) & {e.variant for e in ds.ok_entries}:
        return ["No library peers in this run (scripts/peers.py writes them; scripts/run_main.sh runs it "
                "when PyTorch is importable)."]
    libs = sorted({(e.variant, e.library or "attnbench row, a library call") for e in ds.ok_entries
                   if (e.peer and e.library) or e.variant in library_row_names(ds)})
    lines = ["Per problem: the fastest attnbench softmax variant (over its tiles; rows of another math, "
             "such as linear attention, compute another function and are left out) and the fastest library peer "
             "(scripts/peers.py: same problems, same timing method, same FLOP model and fp64 check; an "
             "entry over its error tolerance never counts as fastest). Ratio = attnbench time / library "
             "time, so above 1 the library is faster. Libraries: "
             + (", ".join(f"{v} ({lib})" for v, lib in libs) or "—") + ".", "",
             "| dtype | problem | on | best attnbench | time (ms) | best library | time (ms) "
             "| attnbench / library |", "|---|---|---|---|---:|---|---:|---:|"]
    rows = versus_rows(ds)
    for ours, lib, r in rows:
        lines.append(f"| {ours.dtype} | {md_escape(shape_text(ours))} | {ours.platform} | {ours.variant} "
                     f"(Br{ours.Br} Bc{ours.Bc}) | {fmt(ours.time_ms)} | {lib.variant} | {fmt(lib.time_ms)} "
                     f"| {r:.2f}× |")
    if not rows:
        lines.append("| — | no problem has both an attnbench entry and a library peer that passed | | | | | | |")
    else:
        ratios = sorted(r for _, _, r in rows)
        faster = sum(1 for r in ratios if r > 1)
        lines += ["", f"Over {len(rows)} problems: median ratio {ratios[len(ratios) // 2]:.2f}× "
                      f"(range {ratios[0]:.2f}–{ratios[-1]:.2f}×); the library is faster on {faster}."]
    return lines


def error_text(e: Entry) -> str:
    """The worst row's relative error and where it is (every row checked); rel_err,
    pooled over the sampled rows, for files written before."""
    mark = "" if e.err_ok is None else (" ✓" if e.err_ok else " ✗ over tolerance")
    if e.worst_row_err is not None and e.worst_row is not None:
        b, h, i = e.worst_row
        return f"{e.worst_row_err:.2g} at b{b} h{h} i{i}{mark}"
    if e.rel_err is None:
        return "NaN/inf in O" if e.err_ok is False else "—"
    return f"{e.rel_err:.2g}{mark}"


def best_per_variant(ds: Dataset) -> list[Entry]:
    best: dict[tuple[str, str], Entry] = {}
    for e in ds.ok_entries:
        if e.pass_ != "fwd":  # the backward has its own section (training.py)
            continue
        k = (e.variant, e.dtype)
        if k not in best or e.tflops > best[k].tflops:
            best[k] = e
    return [best[k] for k in sorted(best, key=lambda k: (dtype_order(k[1]), k[0]))]


def _context_table(ds: Dataset) -> list[str]:
    r = ds.runs[0]
    c = r.context
    counts = Counter(e.status for e in ds.entries)
    timing = c.get("timing") if isinstance(c.get("timing"), dict) else {}
    rows = [("device", ds.device), ("backend", ds.backend), ("commit", ds.commit),
            ("date", r.ctx("date")), ("host", r.ctx("host", r.ctx("host_name"))),
            ("preset", r.ctx("preset")), ("compiler", r.ctx("compiler")),
            ("build type", r.ctx("build_type")), ("command", r.ctx("command_line"))]
    if timing:
        rows.append(("timing", ", ".join(f"{k} {str(v).lower() if isinstance(v, bool) else v}"
                                         for k, v in timing.items())))
    rows.append(("entries", f"{counts.get('ok', 0)} ok, {counts.get('skipped', 0)} skipped, "
                            f"{counts.get('failed', 0)} failed"))
    rows.append(("input", ", ".join(os.path.basename(x.path) for x in ds.runs)))
    lines = ["| | |", "|---|---|"]
    lines += [f"| {k} | {md_escape(str(v))} |" for k, v in rows]
    return lines


def _ceiling_table(ds: Dataset) -> list[str]:
    ceil = ds.ceilings
    if ceil.measured.empty and ceil.theoretical.empty:
        return ["No ceilings in this run's context (run without `--no-ceilings` to measure them): "
                "% of roofline and bound are not available."]
    dts = sorted(set(ceil.measured.tflops) | set(ceil.theoretical.tflops) | set(ds.dtypes), key=dtype_order)
    lines = ["| ceiling | measured | theoretical |", "|---|---|---|",
             f"| copy bandwidth (GB/s) | {fmt(ceil.measured.bandwidth_gbps)} | {fmt(ceil.theoretical.bandwidth_gbps)} |"]
    for dt in dts:
        note = " (the fp32 GEMM: the CPU computes it in fp32)" if ceil.measured.peak_is_fp32_compute(dt) else ""
        lines.append(f"| {dt} peak (TFLOP/s) | {fmt(ceil.measured.peak(dt))}{note} | "
                     f"{fmt(ceil.theoretical.peak(dt))} |")
    for dt in dts:
        m, t = ceil.measured.ridge(dt), ceil.theoretical.ridge(dt)
        if m or t:
            lines.append(f"| {dt} ridge point (FLOP/byte) | {fmt(m)} | {fmt(t)} |")
    lines.append(f"| exp rate (the exp roof) | {exp_rate_text(ceil.measured.exps_per_s)} | "
                 f"{exp_rate_text(ceil.theoretical.exps_per_s)} |")
    lines.append("")
    lines.append("Measured ceilings (solid lines in the charts) come from copy, GEMM and exp-throughput "
                 "benchmarks run with the sweep; theoretical ones (dashed) from the device's specifications.")
    if exp_rate(ceil)[0] is None:
        lines.append("This run's context has no exp rate (written before the exp roof, or with "
                     "`--no-ceilings`): the exp roof is unknown and the bound is the larger of compute and memory.")
    return lines


def _best_table(ds: Dataset) -> tuple[list[str], list[str]]:
    best = best_per_variant(ds)
    ceil = ds.ceilings
    lines = ["| variant | dtype | best configuration | time (ms) | TFLOP/s | GB/s (modeled bytes) | intensity (FLOP/B) "
             "| roof (TFLOP/s) | % of bound | bound | configs memory / compute / exp-bound "
             "| median % of bound (all configs) | error (worst row) |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---|---|---:|---|"]
    verdicts = []
    for e in best:
        p = position(e, ceil)
        allv = [position(x, ceil) for x in ds.ok_entries if x.variant == e.variant and x.dtype == e.dtype]
        nm = sum(1 for x in allv if x.bound == "memory")
        nc = sum(1 for x in allv if x.bound == "compute")
        ne = sum(1 for x in allv if x.bound == "exp")
        unknown = sum(1 for x in allv if x.exp_ms is None)
        split = f"{nm} / {nc} / {ne}" if nm + nc + ne else "—"
        if unknown and nm + nc + ne:
            split += f" (exp roof unknown for {unknown})"
        pcts = sorted(x.pct_of_roof for x in allv if x.pct_of_roof is not None)
        med = f"{pct(pcts[len(pcts) // 2])} (n={len(pcts)})" if pcts else "—"
        inten = fmt(p.intensity) + (" (measured)" if p.intensity_source == "measured" else "")

        lines.append(f"| {e.variant} | {e.dtype} | {config_text(e)} | {fmt(e.time_ms)} | {fmt(e.tflops)} | "
                     f"{fmt(e.gbps)} | {inten} | {fmt(p.attainable_tflops)} | {pct(p.pct_of_roof)} | {p.bound} | {split} | "
                     f"{med} | {error_text(e)} |")
        verdicts.append(_verdict(e, p, nm, nc, ne))
    return lines, verdicts


def _variants_table(ds: Dataset) -> list[str]:
    """The run's registry rows of its backend (context.variants): what each variant is."""
    run = ds.runs[0]
    rows = run.rows_of_backend()
    if not run.variants:
        return ["This run lists no variant rows (no `context.variants`: written before the harness "
                "recorded its registry), so the speedup chart has no default baseline (pass `--baseline`)."]
    counts = Counter((e.variant, e.backend) for e in ds.ok_entries)
    lines = ["Rows of the harness's registry for this run's backend, in registry order (`context.variants`; "
             "tags in docs/json_schema.md). `baseline` is the speedup baseline; `unfused` rows are grey in "
             "the charts.", "",
             "| variant | tags | writes lse | configurations ok | what it computes |", "|---|---|---|---:|---|"]
    for r in rows:
        name = f"{r.name} ({r.backend})" if run.backend not in BACKENDS else r.name
        lines.append(f"| {md_escape(name)} | {md_escape(', '.join(r.tags)) or '—'} | "
                     f"{'yes' if r.writes_lse else 'no'} | {counts.get((r.name, r.backend), 0)} | {md_escape(r.summary) or '—'} |")
    return lines


def _verdict(e: Entry, p, nm: int, nc: int, ne: int = 0) -> str:
    head = f"- **{e.variant}** ({e.dtype}): "
    if p.pct_of_roof is None:
        return head + f"{fmt(e.tflops)} TFLOP/s at {fmt(p.intensity)} FLOP/byte; no ceilings to compare with."
    if p.bound == "memory":
        why = (f"memory-bound: intensity {fmt(p.intensity)} FLOP/byte is below the ridge point "
               f"{fmt(p.ridge)}, so its roof is bandwidth × intensity = {fmt(p.attainable_tflops)} TFLOP/s")
    elif p.bound == "compute":
        why = (f"compute-bound: intensity {fmt(p.intensity)} FLOP/byte is above the ridge point "
               f"{fmt(p.ridge)}, so its roof is the {e.dtype} peak {fmt(p.attainable_tflops)} TFLOP/s")
    elif p.bound == "exp":
        why = (f"exp-bound: its {fmt(e.exps)} exponentials at {exp_rate_text(p.exp_rate)} take "
               f"{fmt(p.exp_ms)} ms, longer than its FLOPs at the {e.dtype} peak ({fmt(p.compute_ms)} ms) or its "
               f"bytes at the bandwidth ({fmt(p.memory_ms)} ms), so its roof is {fmt(p.attainable_tflops)} TFLOP/s")
    else:
        why = f"{p.bound}; roof {fmt(p.attainable_tflops)} TFLOP/s"
    if p.pct_of_roof > 100:
        gap = (f"it reaches {p.pct_of_roof:.0f}% of that roof ({fmt(e.tflops)} TFLOP/s): above the roof, "
               "so its bytes came from caches faster than the measured bandwidth (working set fits in "
               "cache) or the byte model overcounts")
    else:
        gap = (f"it reaches {pct(p.pct_of_roof)} of that roof ({fmt(e.tflops)} TFLOP/s, "
               f"{p.attainable_tflops / e.tflops:.1f}× headroom)" if e.tflops else "it reaches 0% of that roof")
    tail = (f" Over all its configurations: {nm} memory-bound, {nc} compute-bound, {ne} exp-bound."
            if nm + nc + ne > 1 else "")
    note = f" ({p.exp_note})" if p.exp_note else ""
    return head + f"best configuration is {why}; {gap} ({p.ceilings} ceilings){note}.{tail}"


def _kernel_resources(ds: Dataset) -> list[str]:
    res = ds.runs[0].context.get("kernel_resources")
    if not isinstance(res, list) or not res:
        return []
    lines = ["", "## Kernel resources", "",
             "Registers and shared memory per thread block limit occupancy; spills go to local memory "
             "(extra DRAM traffic the byte model does not count).", "",
             "| kernel | arch | registers | shared memory (bytes) | stack (bytes) | spill stores / loads (bytes) |",
             "|---|---|---:|---:|---:|---|"]
    for k in res:
        if not isinstance(k, dict):
            continue
        g = k.get
        spill = f"{g('spill_store_bytes', '—')} / {g('spill_load_bytes', '—')}"
        lines.append(f"| `{md_escape(str(g('kernel', '?')))}` | {g('arch', '—')} | {g('registers', '—')} | "
                     f"{g('smem_bytes', '—')} | {g('stack_bytes', '—')} | {spill} |")
    return lines


def _not_run(ds: Dataset) -> list[str]:
    bad = [e for e in ds.entries if not e.ok]
    if not bad:
        return ["Every configuration ran."]
    groups = Counter((e.status, e.variant, e.error_message or "(no reason given)") for e in bad)
    example = {}
    for e in bad:
        example.setdefault((e.status, e.variant, e.error_message or "(no reason given)"), e)
    lines = ["| status | variant | count | reason | example configuration |", "|---|---|---:|---|---|"]
    for (st, v, why), n in sorted(groups.items(), key=lambda kv: (kv[0][0] != "failed", -kv[1], kv[0])):
        lines.append(f"| {st} | {v} | {n} | {md_escape(why)} | {md_escape(config_text(example[(st, v, why)]))} |")
    lines.append("")
    lines.append("These entries are listed here only; no chart plots them.")
    return lines


def _accuracy(ds: Dataset) -> list[str]:
    bad = [e for e in ds.ok_entries if e.err_ok is False]
    if not bad:
        return []
    lines = ["", f"**{len(bad)} configuration(s) ran but exceeded the error tolerance:**", ""]
    lines += [f"- `{e.name}`: error (worst row) {error_text(e)}" for e in bad[:20]]
    if len(bad) > 20:
        lines.append(f"- … and {len(bad) - 20} more")
    return lines


def render(ds: Dataset, built: Built, out_dir: str, page: Optional[str] = None) -> str:
    lines = [f"# attnbench report — {ds.device} ({ds.backend})", ""]
    if page:
        lines += [f"Interactive page: [{os.path.basename(page)}]({os.path.relpath(page, out_dir)}) — every point "
                  "with its entry on hover, filters, legend toggles; one file, opens offline (docs/charts.md).", ""]
    lines += _context_table(ds) + ["", "## Ceilings", ""] + _ceiling_table(ds)
    lines += ["", "## Variants", ""] + _variants_table(ds)
    table, verdicts = _best_table(ds)
    lines += ["", "## Best configuration per variant", "",
              "The configuration with the highest TFLOP/s for each variant and dtype. "
              "Three roofs bound the time from below: compute (useful FLOPs / peak), memory (bytes / "
              "bandwidth) and exp (the entry's exponentials / the exp rate); the largest binds and names the "
              "bound, % of bound = that bound / measured time (= achieved / roof), roof = useful FLOPs / that "
              "bound in TFLOP/s. Measured ceilings are used (theoretical when none were measured). Without an "
              "exp count (library peers; files written before the exp roof) or an exp rate the exp roof is unknown: the bound is "
              "then the larger of compute (intensity above the ridge point) and memory. Intensity uses measured "
              "DRAM bytes when Nsight Compute measured them, modeled bytes otherwise. See docs/charts.md.", ""]
    lines += table if verdicts else ["No configuration ran."]
    if verdicts:
        lines += ["", "### Where each variant stands", ""] + verdicts
    lines += ["", "## Versus libraries", ""] + _versus_table(ds)
    lines += _accuracy(ds)
    lines += fp8.section(ds)
    lines += alternatives.section(ds)
    lines += training.section(ds)
    lines += comparison.section(ds)
    lines += _kernel_resources(ds)
    lines += ["", "## Charts", ""]
    for c in built.charts:
        png = next((p for p in c.paths if p.endswith(".png")), None)
        svg = next((p for p in c.paths if p.endswith(".svg")), None)
        lines += [f"### {c.title}", "", caption(c.stem), ""]
        if png:
            lines += [f"![{c.title}]({os.path.relpath(png, out_dir)})", ""]
        if svg:
            lines += [f"[SVG]({os.path.relpath(svg, out_dir)})" if png else
                      f"![{c.title}]({os.path.relpath(svg, out_dir)})", ""]
    if built.notes:
        lines += ["Not drawn:", ""] + [f"- {n}" for n in built.notes] + [""]
    lines += ["## Skipped and failed", ""] + _not_run(ds) + [""]
    return "\n".join(lines)


def write(ds: Dataset, out_dir: str, baseline: Optional[str] = None,
          formats: tuple[str, ...] = ("png", "svg"), html: bool = True) -> tuple[str, Built]:
    """Draws every chart into out_dir and writes out_dir/report.md beside them, and (html)
    the interactive page out_dir/report.html (html_report: same data, drawn in the browser)."""
    built = build_all(ds, baseline)
    os.makedirs(out_dir, exist_ok=True)  # also when no chart could be drawn
    built.save(out_dir, formats=formats)
    page = html_report.write_report(ds, out_dir, baseline) if html else None
    path = os.path.join(out_dir, "report.md")
    with open(path, "w", encoding="utf-8") as f:
        f.write(render(ds, built, out_dir, page))
    return path, built

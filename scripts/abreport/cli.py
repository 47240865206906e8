"""Command line of attnbench_report: one entry command, one subcommand per product.

Exit status: 0 done; 1 `compare` found a regression; 2 bad input (one line on stderr:
`attnbench_report: error: <file>: <field>: <problem>`); 3 internal error (one line;
set ATTNBENCH_REPORT_DEBUG=1 for the traceback).
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Callable, Optional, Sequence

from .data import Dataset
from .errors import InputError

if TYPE_CHECKING:  # matplotlib loads only when a chart is drawn: errors stay fast
    from .chart import Built

PROG = "attnbench_report"


def _charts(name: str) -> Callable[[Dataset, argparse.Namespace], "Built"]:
    def build(ds: Dataset, args: argparse.Namespace) -> "Built":
        from . import alternatives, fp8_chart, gqa_decode, model_vs_measured, roofline, speedup, tiles
        table: dict[str, Callable[[], "Built"]] = {
            "roofline": lambda: roofline.build(ds),
            "speedup": lambda: speedup.build(ds, args.baseline),
            "tiles": lambda: tiles.build(ds),
            "gqa": lambda: gqa_decode.build_gqa(ds),
            "decode": lambda: gqa_decode.build_decode(ds),
            "model-vs-measured": lambda: model_vs_measured.build(ds),
            "fp8": lambda: fp8_chart.build(ds),
            "alternatives": lambda: alternatives.build(ds),
        }
        return table[name]()
    return build


CHART_HELP = {
    "roofline": "roofline per dtype: TFLOP/s vs FLOP/byte with measured (solid) and theoretical (dashed) ceilings",
    "speedup": "speedup over a baseline and TFLOP/s vs sequence length, one panel per head dim x mask",
    "tiles": "heatmap of TFLOP/s over Br x Bc per variant and head dim",
    "gqa": "time and bytes vs KV heads Hkv at fixed H",
    "decode": "decode (Nq <= 16) GB/s vs Nkv with the copy-bandwidth ceiling",
    "model-vs-measured": "measured (Nsight Compute) / modeled DRAM bytes per variant",
    "fp8": "fp8 (e4m3) rows beside their bf16 partners: TFLOP/s vs sequence length with the e4m3 peak",
    "alternatives": "causal attention against each scan (tag scan) at the same width: time, TFLOP/s and "
                    "their ratio vs L, the crossover marked",
}


def _formats(text: str) -> tuple[str, ...]:
    fs = tuple(f.strip().lower() for f in text.split(",") if f.strip())
    bad = [f for f in fs if f not in ("png", "svg")]
    if not fs or bad:
        raise argparse.ArgumentTypeError(f"expected png, svg or png,svg, got '{text}'")
    return fs


def _formats_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--formats", type=_formats, default=("png", "svg"), metavar="png,svg",
                   help="image formats to write (default png,svg)")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description="Charts, Markdown and HTML reports and run comparison "
                                "from attnbench JSON (docs/charts.md).")
    sub = p.add_subparsers(dest="cmd", required=True, metavar="COMMAND")

    r = sub.add_parser("report", help="every chart (PNG + SVG), report.md and report.html for each run")
    r.add_argument("inputs", nargs="+", metavar="RUN", help="attnbench JSON or .log.jsonl results log")
    r.add_argument("--out", required=True, metavar="DIR",
                   help="output folder (one input); with several inputs, DIR/<run name>/ each plus DIR/index.md")
    r.add_argument("--baseline", metavar="VARIANT",
                   help="speedup baseline (default: the run's row tagged baseline in context.variants; "
                        "files without context.variants have none)")
    _formats_arg(r)
    r.add_argument("--no-html", dest="html", action="store_false",
                   help="do not write the interactive page report.html (one self-contained file, opens offline)")

    for name, helptext in CHART_HELP.items():
        c = sub.add_parser(name, help=helptext)
        c.add_argument("inputs", nargs="+", metavar="RUN",
                       help="attnbench JSON or .log.jsonl; several are charted together")
        c.add_argument("--out", required=True, metavar="DIR", help="output folder for PNG and SVG")
        _formats_arg(c)
        if name == "speedup":
            c.add_argument("--baseline", metavar="VARIANT",
                           help="baseline variant (default: the run's row tagged baseline in "
                                "context.variants; files without context.variants have none)")

    cp = sub.add_parser("compare", help="per-configuration time ratio B/A; exit 1 on a slowdown beyond the noise")
    cp.add_argument("a", metavar="A", help="reference run (JSON or .log.jsonl)")
    cp.add_argument("b", metavar="B", help="new run")
    cp.add_argument("--threshold", type=float, default=None, metavar="FRACTION",
                    help="smallest slowdown that counts, as a fraction (default 0.05 = 5%%)")
    cp.add_argument("--spread-k", type=float, default=None, metavar="K",
                    help="allowance in units of cv_A + cv_B (default 3)")
    cp.add_argument("--out", metavar="FILE", help="also write the Markdown table to FILE")
    cp.add_argument("--html", metavar="FILE",
                    help="also write an interactive page: per configuration both times, the ratio with its "
                         "noise band, regressions highlighted (one self-contained file)")

    v = sub.add_parser("validate", help="check that inputs load; print one summary line each")
    v.add_argument("inputs", nargs="+", metavar="RUN")
    return p


def _load(paths: Sequence[str]) -> Dataset:
    from .load import load_dataset
    return load_dataset(list(paths))


def _note(text: str) -> None:
    print(f"{PROG}: note: {text}", file=sys.stderr)


def cmd_report(args: argparse.Namespace) -> int:
    from .load import load_run
    runs = [load_run(p) for p in args.inputs]  # validate everything before writing anything
    from . import report
    if len(runs) == 1:
        path, _ = report.write(Dataset(runs=runs), args.out, args.baseline, args.formats, args.html)
        print(path)
        return 0
    index = ["# attnbench reports", ""]
    used: set[str] = set()
    for run in runs:
        sub = run.label
        while sub in used:
            sub += "_"
        used.add(sub)
        path, _ = report.write(Dataset(runs=[run]), os.path.join(args.out, sub), args.baseline, args.formats,
                               args.html)
        page = f" ([interactive]({sub}/report.html))" if args.html else ""
        index.append(f"- [{run.label}]({sub}/report.md){page} — {run.device} ({run.backend}), commit {run.commit}")
        print(path)
    with open(os.path.join(args.out, "index.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(index) + "\n")
    return 0


def cmd_chart(args: argparse.Namespace) -> int:
    ds = _load(args.inputs)
    built = _charts(args.cmd)(ds, args)
    built.save(args.out, formats=args.formats)
    for n in built.notes:
        _note(n)
    for c in built.charts:
        for p in c.paths:
            print(p)
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from . import compare
    from .load import load_run
    th = compare.DEFAULT_THRESHOLD if args.threshold is None else args.threshold
    k = compare.DEFAULT_SPREAD_K if args.spread_k is None else args.spread_k
    if th < 0 or k < 0:
        raise InputError("", "--threshold" if th < 0 else "--spread-k", "must not be negative")
    a, b = load_run(args.a), load_run(args.b)
    result = compare.compare(a, b, th, k)
    text = compare.render(result, a, b)
    sys.stdout.write(text)
    if args.out:
        d = os.path.dirname(args.out)
        if d:
            os.makedirs(d, exist_ok=True)
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
    if args.html:
        from . import html_report
        html_report.write_compare(result, a, b, args.html)
    return 1 if result.regressions else 0


def cmd_validate(args: argparse.Namespace) -> int:
    from collections import Counter
    from .load import load_run
    for p in args.inputs:
        r = load_run(p)
        n = Counter(e.status for e in r.entries)
        print(f"{p}: {len(r.entries)} entries ({n.get('ok', 0)} ok, {n.get('skipped', 0)} skipped, "
              f"{n.get('failed', 0)} failed), {r.device}, {r.backend}, commit {r.commit}")
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parser().parse_args(argv)
    try:
        if args.cmd == "report":
            return cmd_report(args)
        if args.cmd == "compare":
            return cmd_compare(args)
        if args.cmd == "validate":
            return cmd_validate(args)
        return cmd_chart(args)
    except InputError as e:
        print(f"{PROG}: error: {e.line()}", file=sys.stderr)
        return 2
    except OSError as e:  # output folder not writable, disk full
        print(f"{PROG}: error: {e.filename or ''}: {e.strerror or e}".replace(": : ", ": "), file=sys.stderr)
        return 2
    except Exception as e:  # noqa: BLE001 - one line, never a traceback, unless debugging
        if os.environ.get("ATTNBENCH_REPORT_DEBUG"):
            raise
        msg = " ".join(str(e).split())
        print(f"{PROG}: error: internal: {type(e).__name__}: {msg} "
              f"(ATTNBENCH_REPORT_DEBUG=1 shows the traceback)", file=sys.stderr)
        return 3

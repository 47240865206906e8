#!/usr/bin/env python3
"""Merge Nsight Compute measurements into an attnbench JSON file.

    python3 scripts/ncu_merge.py --json bench.json --csv ncu.csv [--out merged.json]

ncu.csv is `ncu --import REPORT.ncu-rep --csv --page raw` of a run of
`attnbench sweep --profile` (scripts/profile_ncu.sh writes both). Each kernel
is assigned to the benchmark whose name is its NVTX range; kernels of one
range are summed. Adds dram_bytes_measured and l2_bytes_measured (bytes),
kernel_time_ncu (ms), ncu_kernels and ncu_metrics (docs/profiling.md).

Exit status: 0 when merged (warnings on stderr: a missing metric, a range
that matches no benchmark), 2 when the CSV or JSON cannot be used (one line
on stderr).
"""
from __future__ import annotations

import argparse
import json
import sys

from abnsight import merge, ncu_csv

PROG = "ncu_merge"


def _warn(msg: str) -> None:
    print(f"{PROG}: warning: {msg}", file=sys.stderr)


def _fail(msg: str) -> int:
    print(f"{PROG}: error: {msg}", file=sys.stderr)
    return 2


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("--json", required=True, help="attnbench benchmark JSON (docs/json_schema.md)")
    p.add_argument("--csv", required=True, help="ncu --csv --page raw export")
    p.add_argument("--out", default="-", help="merged JSON (default: standard output)")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        with open(args.json, encoding="utf-8") as f:
            bench = json.load(f)
    except (OSError, ValueError) as e:
        return _fail(f"cannot read benchmark JSON {args.json}: {str(e).splitlines()[0]}")
    except RecursionError:
        return _fail(f"cannot read benchmark JSON {args.json}: nested too deeply")
    if not isinstance(bench, dict):
        return _fail(f"{args.json}: not a benchmark JSON object")
    try:
        table = ncu_csv.read(args.csv)
        merged = merge.merge(bench, table, _warn, csv_label=args.csv)
    except ncu_csv.NcuCsvError as e:
        return _fail(f"{args.csv}: {e}")
    except ValueError as e:
        return _fail(f"{args.json}: {e}")

    n = merged.get("context", {}).get("ncu_merge", {}).get("benchmarks_merged", 0)
    text = json.dumps(merged, indent=2) + "\n"
    if args.out == "-":
        sys.stdout.write(text)
    else:
        try:
            with open(args.out, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as e:
            return _fail(f"cannot write {args.out}: {e}")
        print(f"{PROG}: merged {n} benchmark(s) into {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

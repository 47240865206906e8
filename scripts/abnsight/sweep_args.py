#!/usr/bin/env python3
"""The sweep arguments a benchmark JSON was made with, for re-running it under a profiler.

    python3 scripts/abnsight/sweep_args.py bench.json      # one argument per line

A configuration can only be profiled if `attnbench sweep` expands it, so the
profiling run needs the same preset, sweep file and axis overrides as the run
that produced the point. They are read from `context.command_line`; options
that concern output, timing or selection (--out, --filter, --reps, --resume,
--shard, --benchmark_*, ...) are dropped: profile_ncu.sh sets its own.
Standalone (no package imports) so that shell scripts can run it by path.
"""
from __future__ import annotations

import json
import shlex
import sys

# Options that take a value and are dropped.
DROP_VALUE = {"--out", "--filter", "--shard", "--reps", "--rep-time"}
# Flags that are dropped.
DROP_FLAG = {"--resume", "--hot", "--profile", "--dry-run", "--dump-sweep", "--no-ceilings"}


def sweep_args(command_line: str) -> list[str]:
    words = shlex.split(command_line)
    if "sweep" not in words:
        return []
    rest = words[words.index("sweep") + 1:]
    out: list[str] = []
    i = 0
    while i < len(rest):
        a = rest[i]
        name = a.split("=", 1)[0]
        if a.startswith("--benchmark_") or name in DROP_FLAG:
            i += 1
        elif name in DROP_VALUE:
            i += 1 if "=" in a else 2
        else:
            out.append(a)
            i += 1
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: sweep_args.py BENCH.json", file=sys.stderr)
        return 2
    try:
        with open(argv[1], encoding="utf-8") as f:
            ctx = json.load(f).get("context", {})
        line = ctx.get("command_line", "")
        args = sweep_args(line) if isinstance(line, str) else []
    except (OSError, ValueError, AttributeError) as e:
        print(f"sweep_args: cannot read {argv[1]}: {e}", file=sys.stderr)
        return 2
    for a in args:
        print(a)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

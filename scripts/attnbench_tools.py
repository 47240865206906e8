#!/usr/bin/env python3
"""attnbench-tools: the Python side of attnbench behind one command.

    attnbench-tools report RUN.json --out DIR        # and every attnbench_report.py subcommand
    attnbench-tools peers --from RUN.json --out P.json
    attnbench-tools ncu-merge --json RUN.json --csv ncu.csv
    attnbench-tools gpu-check-summary OUT_DIR
    attnbench-tools kernel-resources ...

`pip install -e .` (pyproject.toml) puts it on PATH; the scripts under scripts/ stay the
same programs (`python3 scripts/peers.py ...` is `attnbench-tools peers ...`). Each tool keeps
its own options, help and exit statuses (docs/cli.md).
"""
from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Sequence

# tool -> (module, what it does); the module's main(argv) runs it.
TOOLS: dict[str, tuple[str, str]] = {
    "peers": ("peers", "time PyTorch / FlexAttention / flash-attn on a sweep's problems"),
    "ncu-merge": ("ncu_merge", "merge Nsight Compute's DRAM bytes into a run's JSON"),
    "gpu-check-summary": ("gpu_check_summary", "summary.txt of a scripts/gpu_check.sh folder"),
    "kernel-resources": ("kernel_resources", "registers, shared memory and spills per CUDA kernel"),
    "cpu-vs-numpy": ("cpu_vs_numpy", "attnbench's CPU flash2 against NumPy's unfused attention"),
}
# Every other first word is a subcommand of the report tool (attnbench_report.py).
REPORT_MODULE = "abreport.cli"


def usage() -> str:
    lines = ["usage: attnbench-tools TOOL [ARGS...]", "",
             "  report|roofline|speedup|tiles|gqa|decode|model-vs-measured|fp8|compare|validate ...",
             "                      charts, report.md and report.html (attnbench_report.py)"]
    lines += [f"  {name:20s}{what}" for name, (_, what) in TOOLS.items()]
    return "\n".join(lines)


def tool_main(name: str) -> Callable[[Sequence[str]], int | None]:
    module = TOOLS[name][0] if name in TOOLS else REPORT_MODULE
    return importlib.import_module(module).main


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(usage())
        return 0 if args else 2
    if args[0] in TOOLS:
        return tool_main(args[0])(args[1:]) or 0
    return tool_main(args[0])(args) or 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""attnbench_report: charts, Markdown and HTML reports and run comparison from attnbench JSON.

  attnbench_report.py report results/<device>/<run>.json --out build/report   # + report.html
  attnbench_report.py roofline|speedup|tiles|gqa|decode|model-vs-measured|fp8 RUN... --out DIR
  attnbench_report.py compare A.json B.json [--threshold 0.05] [--spread-k 3] [--html cmp.html]
  attnbench_report.py validate RUN...

See docs/charts.md for what each chart shows and how to read it.
"""
import sys

from abreport.cli import main

if __name__ == "__main__":
    sys.exit(main())

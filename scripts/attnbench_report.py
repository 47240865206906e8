#!/usr/bin/env python3
"""attnbench_report: charts, Markdown and HTML reports and run comparison from attnbench JSON.

  attnbench_report.py report results/<device>/<run>.json --out build/report   # + report.html
  attnbench_report.py roofline|speedup|tiles|gqa|decode|model-vs-measured|fp8 RUN... --out DIR
  attnbench_report.py compare A.json B.json [--threshold 0.05] [--spread-k 3] [--html cmp.html]
  attnbench_report.py validate RUN...

See docs/charts.md for what each chart shows and how to read it.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from abreport.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())

"""attnbench_report: charts, reports and run comparison from attnbench JSON.

Modules: load (read + validate; check holds the field checks), data (typed runs
and entries), variants (the harness's registry rows, context.variants: baselines
and greys come from them, never from names), roofs (ceilings, ridge point, bound),
style (colours, markers, saving), one module per chart (roofline, speedup, tiles,
gqa_decode, model_vs_measured, density, fp8_chart), fp8 (the FP8-beside-BF16 pairs
and tables), text (number and Markdown formatting), report (Markdown page), compare (two runs, CI exit
status), cli (subcommands), views (what the roofline and speedup charts draw, shared by the PNGs and
the HTML page; no matplotlib), palette (colours per variant, no matplotlib), html_report (report.html
and compare --html: the data as JSON, drawn by assets/page.js).
"""

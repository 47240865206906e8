"""Model vs measured: DRAM bytes measured by Nsight Compute over the modeled bytes, per variant.

A bar is the median ratio over the variant's configurations (whiskers: min and max,
dots: each configuration). 1.0 means the traffic model is exact; above 1 the kernel
moves more than modeled (spills, re-reads, poor reuse), below 1 the L2 absorbs reuse
the model counts as DRAM traffic.
"""
from __future__ import annotations

import numpy as np
from matplotlib.lines import Line2D

from . import style
from .chart import Built, Chart
from .data import Dataset


def build(ds: Dataset) -> Built:
    out = Built()
    es = [e for e in ds.ok_entries if e.dram_bytes_measured]
    if not es:
        out.notes.append("model vs measured: no entry has dram_bytes_measured "
                         "(run the Nsight Compute scripts, docs/profiling.md)")
        return out
    colors = style.colors_for(ds)
    variants = sorted({e.variant for e in es})
    dtypes = sorted({e.dtype for e in es})
    ratios = {v: [e.dram_bytes_measured / e.bytes for e in es if e.variant == v] for v in variants}
    fig = style.new_figure(1.1 * len(variants) + 4.2, 4.2)
    ax = fig.add_subplot()
    med = [float(np.median(ratios[v])) for v in variants]
    lo = [m - min(ratios[v]) for m, v in zip(med, variants)]
    hi = [max(ratios[v]) - m for m, v in zip(med, variants)]
    x = np.arange(len(variants))
    ax.bar(x, med, width=0.6, color=[colors[v] for v in variants], alpha=0.8,
           yerr=[lo, hi], capsize=4, ecolor="#333333", zorder=2)
    rng = np.random.default_rng(0)
    for i, v in enumerate(variants):
        jitter = rng.uniform(-0.18, 0.18, len(ratios[v]))
        ax.scatter(i + jitter, ratios[v], s=10, color="black", alpha=0.6, zorder=3)
        ax.annotate(f"{med[i]:.2f}×", (i, max(ratios[v])), xytext=(0, 4), textcoords="offset points",
                    ha="center", va="bottom", fontsize=8)
    ax.axhline(1.0, color="#B22222", linestyle="--", linewidth=1.1, zorder=1)
    ax.set_xticks(x, variants)
    ax.set_ylabel("measured DRAM bytes / modeled bytes")
    ax.set_xlabel("variant")
    ax.set_ylim(0, max(max(r) for r in ratios.values()) * 1.2)
    ax.grid(axis="x", visible=False)
    ax.set_title(f"Traffic model vs Nsight Compute — {ds.device} · {', '.join(dtypes)} · commit {ds.commit}")
    handles = [Line2D([], [], color="#999999", linewidth=6, label="median over configurations"),
               Line2D([], [], color="#333333", marker="_", markersize=10, linestyle="none", label="min–max"),
               Line2D([], [], color="black", marker="o", markersize=3, linestyle="none", label="one configuration"),
               Line2D([], [], color="#B22222", linestyle="--", label="model exact (1.0)")]
    style.section_legend(ax, [("reading", handles)])
    out.charts.append(Chart(stem="model_vs_measured", title="Measured / modeled DRAM bytes", fig=fig,
                            summary={"variants": variants, "points": {v: len(r) for v, r in ratios.items()},
                                     "median_ratio": dict(zip(variants, med))}))
    return out

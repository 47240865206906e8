"""GQA and decode charts.

GQA: time and modeled bytes against the number of KV heads Hkv at fixed H (one row per
problem shape): fewer KV heads mean fewer K/V bytes, which only pays off while the
kernel is memory-bound. Each attnbench variant is drawn at ONE tile shape Br x Bc, the one
the gqa group ran it at (else the one covering the most Hkv values): its byte model depends
on the tiles, and taking the fastest tile per point (a tile sweep's 128x128 at Hkv = 8 beside
64x64 elsewhere) made the bytes drop for a reason that is not Hkv. Library peers have no
attnbench tiles and are drawn dotted with hollow markers. Decode (Nq <= 16): achieved GB/s
against Nkv with the copy bandwidth as ceiling; decode is memory-bound, so the gap to that
line is the headroom.
"""
from __future__ import annotations

from collections import Counter

from matplotlib.lines import Line2D

from . import style
from .chart import Built, Chart
from .data import Dataset, Entry, best_by

DECODE_MAX_NQ = 16
MAX_GQA_ROWS = 4


def _gqa_shapes(entries: list[Entry], dtype: str) -> dict[tuple, list[Entry]]:
    sel = [e for e in entries if e.ok and e.dtype == dtype]

    def shape(e: Entry) -> tuple:
        return (e.run, e.B, e.H, e.Nq, e.Nkv, e.d, e.mask)
    # the gqa group's (shape, variant)s, with their entries from any group
    wanted = {(shape(e), e.variant) for e in sel if e.group == "gqa"}
    shapes: dict[tuple, list[Entry]] = {}
    for e in sel:
        if not wanted or (shape(e), e.variant) in wanted:
            shapes.setdefault(shape(e), []).append(e)
    keep = {k: v for k, v in shapes.items() if len({e.Hkv for e in v}) >= 2}
    # the shapes with the most Hkv values first
    order = sorted(keep, key=lambda k: (-len({e.Hkv for e in keep[k]}), k))
    return {k: keep[k] for k in order[:MAX_GQA_ROWS]}


def gqa_tiles(es: list[Entry]) -> dict[str, tuple[int, int]]:
    """Per attnbench variant of one GQA row: the one tile shape drawn. The gqa group's tile
    when it ran one (the most frequent when several); else the tile covering the most Hkv
    values. Ties: the smaller tile."""
    out: dict[str, tuple[int, int]] = {}
    for v in sorted({e.variant for e in es if not e.peer}):
        mine = [e for e in es if e.variant == v]
        pool = [e for e in mine if e.group == "gqa"] or mine
        count = Counter((e.Br, e.Bc) for e in pool)
        cover = {t: len({e.Hkv for e in mine if (e.Br, e.Bc) == t}) for t in count}
        out[v] = max(count, key=lambda t: (cover[t] if pool is mine else 0, count[t], -t[0] * t[1], -t[0]))
    return out


def tile_text(t: tuple[int, int]) -> str:
    return f"{t[0]}×{t[1]}"


def build_gqa_dtype(ds: Dataset, dtype: str) -> Chart | None:
    shapes = _gqa_shapes(ds.entries, dtype)
    if not shapes:
        return None
    colors = style.colors_for(ds)
    fig = style.new_figure(10.5, 3.2 * len(shapes) + 0.6)
    axes = fig.subplots(len(shapes), 2, squeeze=False)
    handles: dict[str, Line2D] = {}
    counts: dict[str, int] = {}
    tiles_drawn: dict[str, set[str]] = {}
    bytes_drawn: dict[str, list[float]] = {}
    any_measured = False
    for row, ((run, B, H, Nq, Nkv, d, mask), es) in enumerate(shapes.items()):
        tile = gqa_tiles(es)
        es = [e for e in es if e.peer or (e.Br, e.Bc) == tile[e.variant]]
        best = best_by(es, key=lambda e: (e.variant, e.Hkv))
        hkvs = sorted({e.Hkv for e in best.values()})
        ax_t, ax_b = axes[row]
        for v in sorted({e.variant for e in best.values()}):
            s = sorted((e for e in best.values() if e.variant == v), key=lambda e: e.Hkv)
            peer = s[0].peer
            label = v if peer else f"{v} ({tile_text(tile[v])})"
            line = style.peer_line() if peer else {"marker": "o", "markersize": 4}
            h, = ax_t.plot([e.Hkv for e in s], [e.time_ms for e in s], color=colors[v], label=label, **line)
            ax_b.plot([e.Hkv for e in s], [e.bytes / 1e6 for e in s], color=colors[v], **line)
            meas = [e for e in s if e.dram_bytes_measured]
            if meas:
                any_measured = True
                ax_b.plot([e.Hkv for e in meas], [e.dram_bytes_measured / 1e6 for e in meas], marker="x",
                          markersize=5, linestyle=":", color=colors[v])
            handles.setdefault(label, h)
            counts[v] = counts.get(v, 0) + len(s)
            if not peer:
                tiles_drawn.setdefault(v, set()).add(tile_text(tile[v]))
            bytes_drawn.setdefault(v, []).extend(e.bytes for e in s)
        shape = f"B{B} H{H} Nq{Nq} Nkv{Nkv} d{d} {mask}"
        for ax, what in ((ax_t, "time (ms)"), (ax_b, "global-memory traffic (MB)")):
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            style.plain_log_ticks(ax, "x", hkvs)
            style.plain_log_ticks(ax, "y")
            ax.set_xlabel(f"KV heads Hkv (H = {H}; group size H/Hkv)")
            ax.set_ylabel(what)
        ax_t.set_title(f"time — {shape}", fontsize=9)
        ax_b.set_title(f"bytes — {shape}", fontsize=9)
    sections = [("variant (Br×Bc: one tile per line)", [handles[k] for k in sorted(handles)])]
    if any_measured:
        sections.append(("bytes", [
            Line2D([], [], color="#555555", marker="o", markersize=4, label="modeled bytes"),
            Line2D([], [], color="#555555", marker="x", linestyle=":", label="measured DRAM bytes")]))
    if ds.peers:
        sections.append(("library peers", [Line2D([], [], color="#555555", label="minimal-IO bytes",
                                                  **style.peer_line())]))
    style.section_legend(style.top_right(fig), sections)
    fig.suptitle(f"GQA: time and bytes vs KV heads, one tile shape per variant — {ds.title_suffix(dtype)}")
    return Chart(stem=f"gqa_{dtype}", title=f"GQA: time and bytes vs Hkv ({dtype})", fig=fig,
                 summary={"dtype": dtype, "points": counts, "rows": len(shapes), "measured": any_measured,
                          "tiles": {v: sorted(t) for v, t in tiles_drawn.items()}, "bytes": bytes_drawn})


SHAPE_STYLES = (("-", "o"), ("--", "s"), (":", "^"), ("-.", "D"), ((0, (5, 1, 1, 1)), "v"),
                ((0, (1, 3)), "P"), ((0, (8, 3)), "X"), ((0, (3, 1, 1, 1, 1, 1)), "*"))


def _decode_shape(e: Entry) -> str:
    return f"B{e.B} H{e.H} Hkv{e.Hkv} Nq{e.Nq} {e.mask}"


def build_decode_dtype(ds: Dataset, dtype: str) -> Chart | None:
    es = [e for e in ds.entries if e.ok and e.dtype == dtype and e.Nq <= DECODE_MAX_NQ]
    if not es:
        return None
    colors = style.colors_for(ds)
    d_vals = sorted({e.d for e in es})
    best = best_by(es, key=lambda e: (e.run, e.variant, e.problem_key))
    pts_all = list(best.values())
    # colour = variant; line style + marker = problem shape (B, H, Hkv, Nq, mask), or run
    shapes = sorted({_decode_shape(e) for e in pts_all})
    runs = [r.label for r in ds.runs]
    multi_shape, multi_run = len(shapes) > 1, len(runs) > 1
    shape_style = {sh: SHAPE_STYLES[i % len(SHAPE_STYLES)] for i, sh in enumerate(shapes)}
    run_style = style.run_styles(runs)

    def line_style(e: Entry) -> tuple:
        if multi_shape:
            ls, mk = shape_style[_decode_shape(e)]
            return (run_style[e.run][0] if multi_run else ls), mk
        return run_style[e.run] if multi_run else ("-", "o")

    fig = style.new_figure(5.2 * len(d_vals) + 2.6, 4.4)
    axes = fig.subplots(1, len(d_vals), squeeze=False, sharey=True)[0]
    ceil = ds.ceilings
    counts: dict[str, int] = {}
    ceiling_handles: list = []
    gb = [e.gbps for e in pts_all if e.gbps > 0]
    ceil_vals = [cs.bandwidth_gbps for cs in (ceil.measured, ceil.theoretical) if cs.bandwidth_gbps]
    span = max(gb + ceil_vals) / max(min(gb + ceil_vals), 1e-12) if gb else 1.0
    log_y = span > 20  # a cache-resident outlier would flatten everything else on a linear axis
    for ax, d in zip(axes, d_vals):
        pts = [e for e in pts_all if e.d == d]
        for k in sorted({(e.variant, _decode_shape(e), e.run) for e in pts}):
            s = sorted((e for e in pts if (e.variant, _decode_shape(e), e.run) == k), key=lambda e: e.Nkv)
            ls, mk = line_style(s[0])
            line = {"marker": mk, "markersize": 4, "linestyle": ls}
            if s[0].peer:  # the problem's line style and marker, hollow: a library peer
                line.update(markerfacecolor="none", markersize=5, markeredgewidth=1.2)
            ax.plot([e.Nkv for e in s], [e.gbps for e in s], color=colors[k[0]], label=" ".join(k), **line)
            counts[k[0]] = counts.get(k[0], 0) + len(s)
        ceiling_handles = []
        for cs, kind, ls in ((ceil.measured, "measured", "-"), (ceil.theoretical, "theoretical", "--")):
            if cs.bandwidth_gbps:
                ceiling_handles.append(ax.axhline(cs.bandwidth_gbps, color="#B22222", linestyle=ls, linewidth=1.4,
                                                  label=f"{kind} copy bandwidth {style.fmt_num(cs.bandwidth_gbps)} GB/s"))
        ax.set_xscale("log", base=2)
        style.plain_log_ticks(ax, "x", sorted({e.Nkv for e in pts}))
        ax.set_xlabel("KV length Nkv")
        ax.set_ylabel("achieved GB/s (modeled bytes / time)")
        ax.set_title(f"d = {d}, Nq ≤ {DECODE_MAX_NQ}")
    # A point above the measured copy ceiling moved fewer bytes than its model counts: re-reads
    # (K/V once per query head in the unfused rows, under GQA) that the cache served. Marked, and said.
    above = [e for e in pts_all if ceil.measured.bandwidth_gbps and e.gbps > ceil.measured.bandwidth_gbps]
    for ax, d in zip(axes, d_vals):
        mine = [e for e in above if e.d == d]
        if mine:
            ax.plot([e.Nkv for e in mine], [e.gbps for e in mine], linestyle="none", marker="o", markersize=11,
                    markerfacecolor="none", markeredgecolor="#B22222", markeredgewidth=1.0)
    if above:
        fig.text(0.01, 0.01, f"circled: {len(above)} point(s) above the measured copy bandwidth — their modeled "
                 "bytes count re-reads (e.g. K/V per query head under GQA) that the cache served, not DRAM traffic",
                 fontsize=7.5, color="#B22222")
    if log_y:
        for ax in axes:
            ax.set_yscale("log")
        style.plain_log_ticks(axes[0], "y")
    else:
        axes[0].set_ylim(0, max(gb + ceil_vals) * 1.15)
    variant_handles = [Line2D([], [], color=colors[v], linewidth=2.5, label=v) for v in sorted(counts)]
    if any(e.peer for e in pts_all):
        variant_handles.append(Line2D([], [], color="#555555", marker="o", markerfacecolor="none", linestyle="none",
                                      label="hollow: library peer (minimal-IO bytes)"))
    sections = [("variant", variant_handles)]
    if multi_shape:
        sections.append(("problem", [Line2D([], [], color="#555555", linestyle=shape_style[sh][0],
                                            marker=shape_style[sh][1], markersize=4, label=sh) for sh in shapes]))
    if multi_run:
        sections.append(("run", [Line2D([], [], color="#555555", linestyle=run_style[r][0],
                                        marker=run_style[r][1] if not multi_shape else None, label=r) for r in runs]))
    sections.append(("ceiling", ceiling_handles))
    style.section_legend(style.top_right(fig), sections)
    fig.suptitle(f"Decode bandwidth vs KV length — {ds.title_suffix(dtype)}")
    return Chart(stem=f"decode_{dtype}", title=f"Decode GB/s vs Nkv ({dtype})", fig=fig,
                 summary={"dtype": dtype, "points": counts, "shapes": shapes, "log_y": log_y,
                          "above_ceiling": sorted(f"{e.variant} Nkv={e.Nkv} Hkv={e.Hkv}" for e in above),
                          "ceilings": [h.get_label() for h in ceiling_handles]})


def build_gqa(ds: Dataset) -> Built:
    out = Built()
    for dt in ds.dtypes:
        c = build_gqa_dtype(ds, dt)
        if c:
            out.charts.append(c)
    if not out.charts:
        out.notes.append("gqa: no problem was run at several KV head counts (Hkv)")
    return out


def build_decode(ds: Dataset) -> Built:
    out = Built()
    for dt in ds.dtypes:
        c = build_decode_dtype(ds, dt)
        if c:
            out.charts.append(c)
    if not out.charts:
        out.notes.append(f"decode: no entries with Nq ≤ {DECODE_MAX_NQ}")
    return out

"""Colours per variant, shared by the matplotlib charts (style) and the HTML page (html_report).

No matplotlib here: the HTML page and `compare --html` import it without loading a plotting
library. Colours are stable by sorted variant name, the same in every chart of a report.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Collection, Iterable

from .variants import UNFUSED

if TYPE_CHECKING:
    from .data import Dataset

# Colour-blind-friendly (Okabe-Ito, then tab10 extras) for fused rows; greys for the rows
# tagged unfused in context.variants (the reference points every other curve is read against).
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9",
           "#8C564B", "#000000", "#BCBD22", "#17BECF")
GREYS = ("#7F7F7F", "#4D4D4D", "#A6A6A6", "#262626", "#BFBFBF")
# Library peers (scripts/peers.py) take their own colours, so attnbench's keep theirs, and
# their own marks: hollow markers, dotted lines.
PEER_PALETTE = ("#8B0000", "#6A3D9A", "#B15928", "#FF1493", "#006400", "#4B0082", "#808000", "#DC143C")


def variant_colors(variants: Iterable[str], grey: Collection[str] = (),
                   peers: Collection[str] = ()) -> dict[str, str]:
    """Stable colours by sorted name: names in `grey` take the greys, `peers` the peer
    palette, the others the palette."""
    out: dict[str, str] = {}
    i = g = k = 0
    for v in sorted(set(variants)):
        if v in peers:
            out[v] = PEER_PALETTE[k % len(PEER_PALETTE)]
            k += 1
        elif v in grey:
            out[v] = GREYS[g % len(GREYS)]
            g += 1
        else:
            out[v] = PALETTE[i % len(PALETTE)]
            i += 1
    return out


def colors_for(ds: "Dataset") -> dict[str, str]:
    """Colours of the variants that ran in ds, the same in every chart of a report; the
    rows tagged unfused in the runs' context.variants are grey, library peers their own."""
    return variant_colors((e.variant for e in ds.ok_entries), grey=ds.tagged(UNFUSED), peers=ds.peers)


def sort_key(v: Any) -> tuple:
    """Numbers first (ascending), then strings: the order markers are handed out in."""
    return (0, v, "") if isinstance(v, (int, float)) else (1, 0, str(v))


def marker_order(values: Iterable) -> list:
    """Distinct values in the order they take markers (style.MARKERS, the page's shapes)."""
    return sorted(set(values), key=sort_key)

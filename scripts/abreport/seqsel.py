"""Selection helpers shared by the sequence-length charts."""
from __future__ import annotations

from .data import Entry


def seq_entries(entries: list[Entry], dtype: str) -> list[Entry]:
    """Self-attention entries (Nq == Nkv) of a dtype; the `seq` group when the run has one."""
    sel = [e for e in entries if e.ok and e.dtype == dtype and e.Nq == e.Nkv]
    grouped = [e for e in sel if e.group == "seq"]
    return grouped or sel

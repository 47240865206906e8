"""The report's "Training" section (docs/backward.md): per problem with backward
entries, each variant's forward, backward and fwd+bwd TFLOP/s (useful FLOPs: the forward's,
2.5x and 3.5x of them) at its fastest tile, the backward / forward time ratio and the worst
gradient error, attnbench rows and library peers side by side."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .data import Dataset, Entry, best_by
from .text import md_escape

PASSES = ("fwd", "bwd", "fwd_bwd")


@dataclass(frozen=True)
class TrainingRow:
    variant: str
    peer: bool
    by_pass: dict  # pass -> fastest ok Entry

    def tflops(self, p: str) -> Optional[float]:
        e = self.by_pass.get(p)
        return e.tflops if e else None

    @property
    def bwd_over_fwd(self) -> Optional[float]:
        """Backward time / forward time of the same variant and problem (same run)."""
        f, b = self.by_pass.get("fwd"), self.by_pass.get("bwd")
        return b.time_ms / f.time_ms if f and b and f.time_ms > 0 else None


def _problem(e: Entry) -> tuple:
    """The problem without the pass: fwd, bwd and fwd_bwd entries of one problem share it."""
    return (e.run,) + e.problem_key[:9]


def tables(ds: Dataset) -> list[tuple[Entry, list[TrainingRow]]]:
    """Per problem that has a bwd or fwd_bwd entry that ran: (an entry naming it, its rows)."""
    best = best_by(ds.ok_entries, lambda e: (_problem(e), e.variant, e.pass_))
    problems: dict[tuple, Entry] = {}
    for (prob, _, p), e in best.items():
        if p != "fwd":
            problems.setdefault(prob, e)
    out = []
    for prob, named in problems.items():
        variants = sorted({v for (pr, v, _) in best if pr == prob},
                          key=lambda v: (any(best[k].peer for k in best if k[0] == prob and k[1] == v), v))
        rows = []
        for v in variants:
            by_pass = {p: best[(prob, v, p)] for p in PASSES if (prob, v, p) in best}
            if "bwd" in by_pass or "fwd_bwd" in by_pass:
                rows.append(TrainingRow(v, next(iter(by_pass.values())).peer, by_pass))
        out.append((named, rows))
    return out


def _num(x: Optional[float], f: str) -> str:
    return format(x, f) if x is not None else "—"


def section(ds: Dataset) -> list[str]:
    """[] when the run has no backward entry that ran."""
    ts = tables(ds)
    if not ts:
        return []
    lines = ["", "## Training", "",
             "Forward, backward and both (one timed run) per problem, each variant at its fastest tile. TFLOP/s "
             "count useful FLOPs: the forward's, 2.5× them for the backward and 3.5× for fwd+bwd (the convention "
             "of FlashAttention's and cuDNN's benchmarks; docs/backward.md). bwd/fwd: backward time / forward "
             "time of the same variant in the same run. Grad err: the worst relative L2 error of dQ, dK and dV "
             "against fp64. Rows without a backward are not listed; peers are marked (peer)."]
    for named, rows in ts:
        lines += ["", f"### {md_escape(named.shape_label)} · {named.dtype} · {named.platform}", "",
                  "| variant | fwd TFLOP/s | bwd TFLOP/s | fwd+bwd TFLOP/s | bwd/fwd | grad err |",
                  "|---|---:|---:|---:|---:|---:|"]
        for r in rows:
            grad = [e.grad_err for p, e in r.by_pass.items() if p != "fwd" and e.grad_err is not None]
            lines.append(f"| {md_escape(r.variant)}{' (peer)' if r.peer else ''} | {_num(r.tflops('fwd'), '.4f')} | "
                         f"{_num(r.tflops('bwd'), '.4f')} | {_num(r.tflops('fwd_bwd'), '.4f')} | "
                         f"{_num(r.bwd_over_fwd, '.2f')} | {_num(max(grad) if grad else None, '.1e')} |")
    return lines

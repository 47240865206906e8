"""Compare two runs configuration by configuration; the exit status flags slowdowns (CI).

ratio = time_B / time_A (B is the new run). A configuration slowed down when
ratio > 1 + max(threshold, k · (cv_A + cv_B)): the allowance grows with the measured
spread of both runs, so noisy configurations need a bigger change to count.
A configuration that ran in A and failed in B counts as a regression too.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .data import Entry, Run
from .errors import InputError

DEFAULT_THRESHOLD = 0.05
DEFAULT_SPREAD_K = 3.0


@dataclass
class Row:
    name: str
    a: Optional[Entry]
    b: Optional[Entry]
    ratio: Optional[float]
    limit: Optional[float]
    verdict: str  # slower | faster | same | now failed | now skipped | only in A | only in B | not run


@dataclass
class Comparison:
    rows: list[Row]
    threshold: float
    spread_k: float

    @property
    def regressions(self) -> list[Row]:
        return [r for r in self.rows if r.verdict in ("slower", "now failed")]


def compare(a: Run, b: Run, threshold: float = DEFAULT_THRESHOLD, spread_k: float = DEFAULT_SPREAD_K) -> Comparison:
    ea = _by_config(a)
    eb = _by_config(b)
    if not set(ea) & set(eb):
        raise InputError(b.path, "benchmarks", f"no configuration in common with {a.path}")
    rows: list[Row] = []
    for key in sorted(set(ea) | set(eb), key=lambda k: tuple(str(x) for x in k)):
        x, y = ea.get(key), eb.get(key)
        name = (x or y).name  # type: ignore[union-attr]
        if x is None or y is None:
            rows.append(Row(name, x, y, None, None, "only in A" if y is None else "only in B"))
            continue
        if x.ok and y.ok:
            ratio = y.time_ms / x.time_ms  # type: ignore[operator]
            limit = 1.0 + max(threshold, spread_k * (x.time_cv + y.time_cv))
            verdict = "slower" if ratio > limit else "faster" if ratio < 1.0 / limit else "same"
            rows.append(Row(name, x, y, ratio, limit, verdict))
        elif x.ok:
            rows.append(Row(name, x, y, None, None, "now failed" if y.status == "failed" else "now skipped"))
        else:
            rows.append(Row(name, x, y, None, None, "now runs" if y.ok else "not run"))
    return Comparison(rows, threshold, spread_k)


def _by_config(run: Run) -> dict[tuple, Entry]:
    """One entry per configuration; a repeated one (merged shards) keeps its fastest ok run."""
    out: dict[tuple, Entry] = {}
    for e in run.entries:
        old = out.get(e.config_key)
        if old is None or (e.ok and (not old.ok or e.time_ms < old.time_ms)):  # type: ignore[operator]
            out[e.config_key] = e
    return out


ORDER = {"now failed": 0, "slower": 1, "now skipped": 2, "faster": 3, "now runs": 4, "same": 5,
         "only in A": 6, "only in B": 7, "not run": 8}


def render(c: Comparison, a: Run, b: Run) -> str:
    reg = c.regressions
    n_cmp = sum(1 for r in c.rows if r.ratio is not None)
    lines = [f"# attnbench compare", "",
             f"- A: `{a.path}` — {a.device}, commit {a.commit}",
             f"- B: `{b.path}` — {b.device}, commit {b.commit}",
             f"- ratio = time B / time A; slower when ratio > 1 + max({c.threshold:g}, "
             f"{c.spread_k:g} · (cv_A + cv_B))",
             f"- {n_cmp} configurations compared: "
             + ", ".join(f"{sum(1 for r in c.rows if r.verdict == v)} {v}" for v in ORDER
                         if any(r.verdict == v for r in c.rows)),
             "", "| configuration | time A (ms) | time B (ms) | ratio B/A | limit | cv A | cv B | verdict |",
             "|---|---:|---:|---:|---:|---:|---:|---|"]

    def ms(e: Optional[Entry]) -> str:
        return f"{e.time_ms:.4g}" if e is not None and e.ok else (e.status if e else "—")

    def cv(e: Optional[Entry]) -> str:
        return f"{e.time_cv:.1%}" if e is not None and e.ok else "—"

    for r in sorted(c.rows, key=lambda r: (ORDER[r.verdict], -(r.ratio or 0))):
        ratio = f"{r.ratio:.3f}" if r.ratio is not None else "—"
        limit = f"{r.limit:.3f}" if r.limit is not None else "—"
        verdict = f"**{r.verdict}**" if r in reg else r.verdict
        lines.append(f"| `{r.name}` | {ms(r.a)} | {ms(r.b)} | {ratio} | {limit} | {cv(r.a)} | {cv(r.b)} | {verdict} |")
    lines += ["", f"Result: {len(reg)} regression(s)." if reg else "Result: no regression."]
    return "\n".join(lines) + "\n"

"""FP8 beside BF16: per problem with e4m3 entries, the e4m3 rows and the bf16 rows of
the same problem, their times, TFLOP/s, both errors, and the speed of each fp8 row relative to
its bf16 partner and to the fastest bf16 row, all measured in the same run.

A problem is (run, backend, B, H, Hkv, Nq, Nkv, d, mask): dtype and tiles are left out, so that
rows of two dtypes meet; every variant is represented by its fastest tile. The partner of an fp8
row is the reference-dtype row of the same variant name, or, for a name ending in `_fp8`, of the
name without it (flash3_fp8 -> flash3; on the CPU backend flash2 e4m3 -> flash2). The reference
dtype is bf16; a problem with no bf16 row (the CPU backend runs fp32 only) is compared with fp16,
else fp32, and the table says which. Library peers and rows of another math (linear attention)
are left out: they are in the "Versus libraries" section or compute another function.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from statistics import median
from typing import Iterable, Optional

from .data import Dataset, Entry
from .text import fmt, md_escape, one_line

FP8 = "e4m3"
FP8_SUFFIX = "_fp8"
REFERENCE_DTYPES = ("bf16", "fp16", "fp32")  # the first one a problem has is compared with
ERRORS_SENTENCE = ("rel_err is the kernel's own error: O against the fp64 reference computed on exactly the "
                   "inputs the kernel saw (for e4m3 the quantised inputs), gated by the tolerance; "
                   "e2e_rel_err is the end-to-end cost of the input precision: O against the fp64 reference "
                   "on the unrounded fp32 inputs, before rounding to bf16/fp16 or quantising to e4m3.")
TABLE_SENTENCE = ("rel_err: O against the fp64 reference on the inputs the kernel saw (quantised for e4m3), "
                  "the kernel's own error, gated by the tolerance; e2e_rel_err: O against the fp64 reference on "
                  "the unrounded fp32 inputs, the end-to-end cost of the input precision.")
MISSING_SENTENCE = ("n/a: not recorded (a file written before the field existed) or no value; —: the entry did not run "
                    "(its status says why).")


def partner_name(variant: str) -> str:
    """The variant an fp8 row is compared with: flash3_fp8 -> flash3, flash2 -> flash2."""
    if variant.endswith(FP8_SUFFIX) and len(variant) > len(FP8_SUFFIX):
        return variant[: -len(FP8_SUFFIX)]
    return variant


def problem_key(e: Entry) -> tuple:
    """The problem without dtype, variant and tiles, in one run: rows of two dtypes meet here."""
    return (e.run, e.platform, e.B, e.H, e.Hkv, e.Nq, e.Nkv, e.d, e.mask)


def _passed(e: Entry) -> bool:
    return e.ok and e.err_ok is not False


def representative(es: list[Entry]) -> Entry:
    """One entry for a variant's tiles: the fastest that ran within tolerance, else the fastest
    that ran, else one that did not run (a failure before a skip)."""
    for pool in ([e for e in es if _passed(e)], [e for e in es if e.ok]):
        if pool:
            return min(pool, key=lambda e: e.time_ms)  # type: ignore[arg-type,return-value]
    return min(es, key=lambda e: (e.status != "failed", e.name))


@dataclass(frozen=True)
class Fp8Row:
    entry: Entry  # the fp8 variant's representative
    partner: Optional[Entry]  # its reference-dtype partner's representative, None when absent
    vs_partner: Optional[float]  # partner time / fp8 time: above 1 fp8 is faster
    vs_best: Optional[float]  # fastest reference time / fp8 time
    why_no_ratio: str = ""  # when vs_partner is None


@dataclass
class Fp8Table:
    key: tuple  # problem_key
    problem: Entry  # one entry of the problem: its run, platform and shape
    ref_dtype: Optional[str]  # bf16, else fp16, else fp32; None when the problem has none
    fp8: list[Fp8Row] = field(default_factory=list)
    ref: list[Entry] = field(default_factory=list)  # one per reference variant, fastest first
    best_ref: Optional[Entry] = None  # the fastest reference entry within tolerance



def _comparable(ds: Dataset) -> list[Entry]:
    """Attnbench softmax rows: no library peers, no rows of another math."""
    other_math = {r.name for run in ds.runs for r in run.variants if r.math != "softmax"}
    return [e for e in ds.entries if not e.peer and e.variant not in other_math]


def _by_variant(es: Iterable[Entry]) -> dict[str, Entry]:
    groups: dict[str, list[Entry]] = {}
    for e in es:
        groups.setdefault(e.variant, []).append(e)
    return {v: representative(g) for v, g in groups.items()}


def _ratio(ref: Optional[Entry], e: Entry) -> Optional[float]:
    if ref is None or not ref.ok or not e.ok:
        return None
    return ref.time_ms / e.time_ms  # type: ignore[operator]


def _why_no_ratio(e: Entry, partner: Optional[Entry], name: str, ref_dtype: Optional[str]) -> str:
    if not e.ok:
        return ""  # the row's status says why
    if partner is None:
        return f"no {ref_dtype or 'bf16'} {name}"
    return f"{name} {partner.status}"


def build_table(key: tuple, es: list[Entry]) -> Fp8Table:
    """The table of one problem from its entries (every dtype, variant and tile)."""
    dtypes = {e.dtype for e in es}
    ref_dtype = next((d for d in REFERENCE_DTYPES if d in dtypes), None)
    ref = _by_variant(e for e in es if e.dtype == ref_dtype)
    ran = [e for e in ref.values() if _passed(e)]
    best = min(ran, key=lambda e: e.time_ms) if ran else None  # type: ignore[arg-type,return-value]
    t = Fp8Table(key=key, problem=next(e for e in es if e.dtype == FP8), ref_dtype=ref_dtype, best_ref=best,
                 ref=sorted(ref.values(), key=lambda e: (not e.ok, e.time_ms or 0.0, e.variant)))
    for v, e in sorted(_by_variant(e for e in es if e.dtype == FP8).items()):
        name = partner_name(v)
        partner = ref.get(name)
        r = _ratio(partner, e)
        t.fp8.append(Fp8Row(entry=e, partner=partner, vs_partner=r, vs_best=_ratio(best, e),
                            why_no_ratio="" if r is not None else _why_no_ratio(e, partner, name, ref_dtype)))
    return t


def tables(ds: Dataset) -> list[Fp8Table]:
    """One table per problem that has e4m3 entries, by backend, head dim, mask, shape."""
    groups: dict[tuple, list[Entry]] = {}
    for e in _comparable(ds):
        groups.setdefault(problem_key(e), []).append(e)
    ts = [build_table(k, es) for k, es in groups.items() if any(e.dtype == FP8 for e in es)]
    return sorted(ts, key=lambda t: _order(t.problem))


def _order(e: Entry) -> tuple:
    return (e.run, e.platform, e.d, e.mask != "none", e.mask, e.B, e.H, e.Hkv, e.Nq, e.Nkv)


def has_fp8(ds: Dataset) -> bool:
    return any(e.dtype == FP8 for e in ds.entries)


# ---- Markdown -------------------------------------------------------------------------------

def _na(x: Optional[float], e: Entry) -> str:
    """An error value; a failed entry keeps the errors it measured before failing."""
    if x is None:
        return "n/a" if e.ok else "—"
    return f"{x:.2g}"


def rel_err_text(e: Entry) -> str:
    """rel_err with its tolerance and verdict: `0.021 ≤ 0.0625 ✓`, `0.09 > 0.0625 ✗`."""
    if not e.ok and e.rel_err is None:
        return "—"
    if e.rel_err is None:
        return "NaN/inf in O ✗" if e.err_ok is False else "n/a"
    mark = {None: "", True: " ✓", False: " ✗"}[e.err_ok]
    if e.tolerance is None:
        return f"{e.rel_err:.2g} (tolerance n/a){mark}"
    rel = "≤" if e.rel_err <= e.tolerance else ">"
    return f"{e.rel_err:.2g} {rel} {e.tolerance:.3g}{mark}"


def dtype_text(e: Entry) -> str:
    if e.out_dtype and e.out_dtype != e.dtype:
        return f"{e.dtype} (O {e.out_dtype})"
    return e.dtype


def status_text(e: Entry, best: Optional[Entry]) -> str:
    if not e.ok:
        return md_escape(f"{e.status}: {one_line(e.error_message or 'no reason given')}")
    return "ok, fastest" if e is best else "ok"


def _ratio_text(e: Entry, r: Optional[float], other: Optional[Entry], why: str) -> str:
    if not e.ok:
        return "—"
    if r is None or other is None:
        return f"n/a ({md_escape(why)})"
    return f"{r:.2f}× ({other.variant})"


def _row(e: Entry, best: Optional[Entry], vs_partner: str, vs_best: str) -> str:
    tiles = f"{e.Br}×{e.Bc}"
    return (f"| {e.variant} | {dtype_text(e)} | {tiles} | {status_text(e, best)} | "
            f"{fmt(e.time_ms) if e.ok else '—'} | {fmt(e.tflops) if e.ok else '—'} | {rel_err_text(e)} | "
            f"{_na(e.e2e_rel_err, e)} | {vs_partner} | {vs_best} |")


def problem_heading(t: Fp8Table, multi_run: bool) -> str:
    e = t.problem
    head = f"{e.platform} · B{e.B} H{e.H} Hkv{e.Hkv} Nq{e.Nq} Nkv{e.Nkv} d{e.d} {md_escape(e.mask)}"
    return f"{head} [{e.run}]" if multi_run else head


def table_lines(t: Fp8Table) -> list[str]:
    ref = t.ref_dtype or "bf16"
    lines = [f"| variant | dtype | tiles | status | time (ms) | TFLOP/s | rel_err vs tolerance | e2e_rel_err "
             f"| speed vs {ref} partner | speed vs fastest {ref} |",
             "|---|---|---|---|---:|---:|---|---|---|---|"]
    for r in t.fp8:
        lines.append(_row(r.entry, None, _ratio_text(r.entry, r.vs_partner, r.partner, r.why_no_ratio),
                          _ratio_text(r.entry, r.vs_best, t.best_ref, f"no {ref} entry within tolerance")))
    for e in t.ref:
        lines.append(_row(e, t.best_ref, "—", "—"))
    if not t.ref:
        lines.append("| — | no bf16, fp16 or fp32 entry of this problem | | | | | | | | |")
    return lines


def scales_line(t: Fp8Table) -> list[str]:
    scales = sorted({(r.entry.variant, r.entry.input_scales) for r in t.fp8 if r.entry.input_scales})
    if not scales:
        return []
    parts = ", ".join(f"{v} {q:.3g} / {k:.3g} / {s:.3g}" for v, (q, k, s) in scales)
    return [f"e4m3 input scales (q / k / v): {parts}."]


def summary_lines(ts: list[Fp8Table]) -> list[str]:
    """Per fp8 variant over its problems: how many ran, the speed ratio to its partner, the errors."""
    rows: dict[str, list[Fp8Row]] = {}
    for t in ts:
        for r in t.fp8:
            rows.setdefault(r.entry.variant, []).append(r)
    lines = ["| fp8 variant | partner | problems | ran | within tolerance | speed vs partner: median (range) "
             "| largest rel_err | largest e2e_rel_err |", "|---|---|---:|---:|---:|---|---|---|"]
    for v, rs in sorted(rows.items()):
        ran = [r.entry for r in rs if r.entry.ok]
        ratios = sorted(r.vs_partner for r in rs if r.vs_partner is not None)
        spread = (f"{median(ratios):.2f}× ({ratios[0]:.2f}–{ratios[-1]:.2f}×, n={len(ratios)})"
                  if ratios else "n/a")
        errs = [e.rel_err for e in ran if e.rel_err is not None]
        e2e = [e.e2e_rel_err for e in ran if e.e2e_rel_err is not None]
        lines.append(f"| {v} | {partner_name(v)} | {len(rs)} | {len(ran)} | "
                     f"{sum(1 for e in ran if e.err_ok is True)} | {spread} | "
                     f"{f'{max(errs):.2g}' if errs else 'n/a'} | {f'{max(e2e):.2g}' if e2e else 'n/a'} |")
    return lines


def section(ds: Dataset) -> list[str]:
    """The report's "FP8 beside BF16" section; [] when the run has no e4m3 entry."""
    if not has_fp8(ds):
        return []
    ts = tables(ds)
    lines = ["", "## FP8 beside BF16", "",
             "Every problem with e4m3 entries: the e4m3 rows and the bf16 rows of the same problem "
             "(same backend, B, H, Hkv, Nq, Nkv, d and mask; each variant at its fastest tile; library peers "
             "and linear attention left out). A problem without bf16 rows (the CPU backend runs fp32) is "
             "compared with fp16, else fp32, named in the table's header. Speed = time of the other entry / "
             "time of the fp8 entry, in the same run (above 1 fp8 is faster); the partner of an fp8 row is the "
             "row of the same name, or of the name without `_fp8` (flash3_fp8 → flash3).", ""]
    if not ts:
        return lines + ["The e4m3 entries of this run are all library peers or rows of another math."]
    lines += summary_lines(ts) + ["", ERRORS_SENTENCE + " " + MISSING_SENTENCE]
    multi_run = len(ds.runs) > 1
    for t in ts:
        lines += ["", f"### {problem_heading(t, multi_run)}", ""] + table_lines(t) + [""]
        lines += scales_line(t) + [TABLE_SENTENCE]
    return lines

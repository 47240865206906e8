#!/usr/bin/env python3
"""summary.txt of scripts/gpu_check.sh OUT_DIR (docs/gpu.md): device, binaries, steps,
the smoke verdict per row (pass / wrong / crash / hang), GPU test counts, kernel resources,
ceilings, per variant the best TFLOP/s, GB/s, largest error and PASS/FAIL of the quick sweep,
the fp8 and backward tables (with issue 24's target line), the profile's bounds and stalls and the crossover. Every part reads what its step left, also when the step was cut off
(a sweep's results log when its JSON is missing)."""
from __future__ import annotations

import argparse
import csv
import json
import os
import re
import sys
from collections import defaultdict


def read(path: str) -> str:
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def exp_rate(c: dict) -> str:
    """The exp roof's rate of one ceiling set, as the summary prints it."""
    if "exps_per_s" not in c:
        return "; exp rate not recorded"
    v = c["exps_per_s"]
    if not isinstance(v, (int, float)):
        why = (c.get("exp_method") or {}).get("error", "no value")
        return f"; exp rate none ({why})"
    return f"; exp rate {v / 1e12:.3g} T exp/s" if v >= 1e12 else f"; exp rate {v / 1e9:.3g} G exp/s"


def device_name(env: str) -> str:
    """GPU 0's name from env.txt: `nvidia-smi -L` (GPU 0: NAME (UUID: ...)) or, in folders written
    before the env step ran it, the plain nvidia-smi table's row (|   0  NAME   On  | ...)."""
    listed = re.search(r"^GPU 0: ([^(\n]+)", env, re.M)
    if listed:
        return listed.group(1).strip()
    row = re.search(r"^\|\s+0\s+(.+?)\s+(?:On|Off)\s+\|", env, re.M)
    return row.group(1).strip() if row else "unknown"


def entry_bad(b: dict) -> bool:
    """An ok entry whose error check failed. A bwd / fwd_bwd entry is judged by its gradient error
    (a backward-only peer has no forward output, rel_err None); any other by rel_err. A missing or
    NaN error is bad; so is err_ok False or a gradient error above grad_tolerance."""
    if b.get("err_ok") is False:
        return True
    backward = b.get("pass") in ("bwd", "fwd_bwd")
    err = b.get("grad_err") if backward else b.get("rel_err")
    if not isinstance(err, (int, float)) or err != err:
        return True
    tol = b.get("grad_tolerance") if backward else None
    return isinstance(tol, (int, float)) and err > tol


def load_run(out: str, name: str) -> tuple[dict | None, str]:
    """(doc, note): NAME.json, else its results log (a step cut short)."""
    path = os.path.join(out, name)
    if os.path.exists(path):
        try:
            return json.load(open(path)), ""
        except ValueError:
            pass
    log = path + ".log.jsonl"
    if not os.path.exists(log):
        return None, ""
    context, entries = {}, {}
    for line in open(log, errors="replace"):
        try:
            obj = json.loads(line)
        except ValueError:
            continue  # a torn last line
        if isinstance(obj, dict) and "name" not in obj and isinstance(obj.get("context"), dict):
            context = obj["context"]
        elif isinstance(obj, dict) and isinstance(obj.get("name"), str):
            entries[obj["name"]] = obj  # the last entry of a name wins, as in the harness
    return {"context": context, "benchmarks": list(entries.values())}, f"{name} incomplete: read from its results log"


def smoke_verdicts(doc: dict) -> dict[str, str]:
    """Per row: pass, wrong, hang, crash, error, or why it did not run."""
    verdict: dict[str, str] = {}
    rank = {"hang": 5, "crash": 5, "error": 4, "wrong": 3, "pass": 2}
    for b in doc.get("benchmarks", []):
        row, st = b.get("variant", "?"), b.get("status")
        if st == "ok":
            v = "pass" if b.get("err_ok") else (f"wrong (rel_err {b.get('rel_err')}, worst row "
                                                f"{b.get('worst_row_err')} at {b.get('worst_row')}, "
                                                f"{b.get('nonfinite_outputs')} non-finite)")
        elif st == "failed":
            fault = b.get("row_fault")
            v = {"timeout": "hang", "crash": "crash", "device_error": "crash"}.get(fault, "error")
            v += ": " + (b.get("error_message") or "")[:150]
        else:
            v = "not run: " + (b.get("error_message") or "")[:150]
        old = verdict.get(row)
        if old is None or rank.get(v.split(" ")[0].rstrip(":"), 1) > rank.get(old.split(" ")[0].rstrip(":"), 1):
            verdict[row] = v
    return verdict


def compare_table(runs: list[tuple[str, str]]) -> list[str]:
    """scripts/gpu_compare.sh: per entry name, each build's median time, TFLOP/s and error
    (gradient error for bwd / fwd_bwd), the builds in the order given; the last column is each
    later build's time over the first's (below 1: faster). runs: (build, results JSON path)."""
    per: dict[str, dict[str, dict]] = defaultdict(dict)
    order: list[str] = []
    notes: list[str] = []
    for build, path in runs:
        doc, note = load_run(os.path.dirname(path) or ".", os.path.basename(path))
        if note:
            notes.append(f"{build}: {note}")
        for b in (doc or {}).get("benchmarks", []):
            name = b.get("name", "?")
            if name not in per:
                order.append(name)
            per[name][build] = b
    builds = [b for b, _ in runs]
    lines = [f"compare ({', '.join(builds)}): time ms / TFLOP/s / error; ratio = time / {builds[0]}'s"] + notes
    for name in order:
        lines.append(name)
        base = per[name].get(builds[0], {})
        for build in builds:
            b = per[name].get(build)
            if b is None:
                lines.append(f"  {build:16s} not run")
                continue
            if b.get("status", "ok") != "ok":
                lines.append(f"  {build:16s} {b.get('status')}: {(b.get('error_message') or '')[:100]}")
                continue
            backward = b.get("pass") in ("bwd", "fwd_bwd")
            err = b.get("grad_err") if backward else b.get("rel_err")
            ratio = ""
            if build != builds[0] and base.get("status", "ok") == "ok" and base.get("real_time"):
                ratio = f"  x{b.get('real_time', 0.0) / base['real_time']:.3f}"
            lines.append(f"  {build:16s} {b.get('real_time', 0.0):10.4f} {b.get('tflops') or 0.0:8.1f}  "
                         f"{err if err is not None else 'none'!s:>10.10s}{'' if not entry_bad(b) else '  BAD'}{ratio}")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="gpu_check_summary.py",
                                 description="summary.txt of one scripts/gpu_check.sh output folder")
    ap.add_argument("out", nargs="?", help="the folder scripts/gpu_check.sh wrote")
    ap.add_argument("--compare", nargs="+", metavar="BUILD=RESULTS.json",
                    help="instead: the table of scripts/gpu_compare.sh (the same entries run by several builds)")
    args = ap.parse_args(argv)
    if args.compare:
        runs = [tuple(c.split("=", 1)) for c in args.compare if "=" in c]
        if len(runs) != len(args.compare):
            ap.error("--compare takes BUILD=RESULTS.json")
        print("\n".join(compare_table(runs)))  # type: ignore[arg-type]
        return 0
    if not args.out:
        ap.error("the folder scripts/gpu_check.sh wrote, or --compare")
    out = args.out
    lines: list[str] = []
    env = read(os.path.join(out, "env.txt"))
    lines.append(f"device: {device_name(env)}")
    for f in ("binaries.txt", "cudnn_row.txt"):
        if read(os.path.join(out, f)).strip():
            lines.append(read(os.path.join(out, f)).strip())
    stopped = read(os.path.join(out, "stopped.txt")).strip()
    if stopped:
        lines.append(f"STOPPED EARLY: {stopped}")
    for row in read(os.path.join(out, "steps.tsv")).splitlines():
        parts = row.split("\t")
        if len(parts) == 4:
            name, st, dt, log = parts
            lines.append(f"step {name:10s} {st:18s} {dt:>5s}  {log}")

    smoke, note = load_run(out, "smoke.json")
    if smoke is not None:
        lines.append("")
        lines.append("smoke (every row once, tiny shape, short deadline)" + (f" [{note}]" if note else ""))
        for row, v in sorted(smoke_verdicts(smoke).items()):
            lines.append(f"  {row:20s} {v}")

    tests = read(os.path.join(out, "gpu_tests_summary.txt")).strip()
    if tests:
        lines.extend(tests.splitlines()[:12])
    kr = os.path.join(out, "kernel_resources.json")
    if os.path.exists(kr):
        try:
            ks = json.load(open(kr)).get("kernels", [])
            spills = sum(1 for k in ks if k["spill_store_bytes"] or k["spill_load_bytes"])
            lines.append(f"kernels: {len(ks)} kernel/arch entries, {spills} with spills, "
                         f"max registers {max((k['registers'] for k in ks), default=0)}")
        except (ValueError, KeyError, TypeError):
            lines.append("kernels: kernel_resources.json unreadable")

    doc, note = load_run(out, "quick.json")
    ceil = {}
    try:
        ceil = json.load(open(os.path.join(out, "ceilings.json"))).get("ceilings", {})
    except (OSError, ValueError):
        if doc is not None:
            ceil = doc.get("context", {}).get("ceilings", {})
    meas, theo = ceil.get("measured", {}), ceil.get("theoretical", {})
    if meas:
        lines.append("ceilings measured: {:.0f} GB/s; TFLOP/s ".format(meas.get("bandwidth_gbps", 0)) +
                     " ".join(f"{k} {v:.1f}" for k, v in meas.get("tflops", {}).items()) + exp_rate(meas))
    if theo:
        lines.append("ceilings theoretical: {:.0f} GB/s; TFLOP/s ".format(theo.get("bandwidth_gbps", 0)) +
                     " ".join(f"{k} {v:.1f}" for k, v in theo.get("tflops", {}).items()) + exp_rate(theo))
    if doc is not None:
        if note:
            lines.append(note)
        per = defaultdict(lambda: {"tf": 0.0, "gb": 0.0, "err": 0.0, "row": 0.0,
                                   "ok": 0, "skip": 0, "fail": 0, "bad": 0, "quar": 0})
        for b in doc.get("benchmarks", []):
            v = per[b.get("variant", "?")]
            st = b.get("status", "failed" if b.get("error_occurred") else "ok")
            if st == "skipped":
                v["quar" if b.get("quarantined_by") else "skip"] += 1
                continue
            if st != "ok":
                v["fail"] += 1
                continue
            v["ok"] += 1
            v["tf"] = max(v["tf"], b.get("tflops") or 0.0)
            v["gb"] = max(v["gb"], b.get("gbps") or 0.0)
            err = b.get("rel_err")
            if isinstance(err, (int, float)) and err == err:
                v["err"] = max(v["err"], err)
            v["row"] = max(v["row"], b.get("worst_row_err") or 0.0)
            v["bad"] += entry_bad(b)
        lines.append("")
        lines.append(f"{'variant':20s} {'best TFLOP/s':>12s} {'best GB/s':>10s} {'max rel err':>11s} "
                     f"{'worst row':>9s} {'ok/skip/fail/quar':>18s}  result")
        for name in sorted(per):
            v = per[name]
            res = "PASS" if v["fail"] == 0 and v["bad"] == 0 and v["ok"] > 0 else (
                "none run" if v["ok"] == 0 and v["fail"] == 0 else "FAIL")
            if v["quar"]:
                res += " (row quarantined: crashed or hung)"
            lines.append(f"{name:20s} {v['tf']:12.2f} {v['gb']:10.1f} {v['err']:11.2e} {v['row']:9.2e} "
                         f"{v['ok']:>5d}/{v['skip']}/{v['fail']}/{v['quar']:<6d}  {res}")
    else:
        lines.append("no sweep result (quick.json or its log): see sweep.log")

    fp8, note = load_run(out, "fp8.json")
    if fp8 is not None:
        rows = [b for b in fp8.get("benchmarks", []) if b.get("status") == "ok"]
        lines.append("")
        if note:
            lines.append(note)
        lines.append(f"{'fp8 vs bf16':24s} {'Nq':>6s} {'mask':>7s} {'TFLOP/s':>8s} {'rel err':>9s} {'e2e err':>9s}")
        for b in sorted(rows, key=lambda b: (b.get("mask", ""), b.get("Nq", 0), b.get("variant", ""))):
            e2e = b.get("e2e_rel_err")
            lines.append(f"{b.get('variant', '?') + ' ' + b.get('dtype', '?'):24s} {b.get('Nq', 0):6d} "
                         f"{b.get('mask', '?'):>7s} {b.get('tflops') or 0:8.1f} {b.get('rel_err') or 0:9.2e} "
                         f"{e2e if e2e is not None else float('nan'):9.2e}")
    bwd, note = load_run(out, "bwd.json")
    if bwd is not None:
        rows = [b for b in bwd.get("benchmarks", []) if b.get("status") == "ok"]
        lines.append("")
        if note:
            lines.append(note)
        lines.append(f"{'backward':34s} {'Nq':>6s} {'d':>4s} {'tile':>6s} {'mask':>12s} {'TFLOP/s':>9s} "
                     f"{'grad err':>9s} {'tol':>8s}  result")
        for b in sorted(rows, key=lambda b: (b.get("pass", ""), b.get("d", 0), b.get("mask", ""), b.get("Nq", 0),
                                             b.get("variant", ""), b.get("Bc", 0))):
            err = b.get("grad_err")
            res = "ok" if b.get("err_ok") is not False and err is not None else "WRONG"
            tile = "lib" if b.get("peer") else f"{b.get('Br', '?')}x{b.get('Bc', '?')}"  # a peer's tiles are its own
            lines.append(f"{b.get('variant', '?') + ' ' + b.get('pass', '?') + ' ' + b.get('dtype', '?'):34s} "
                         f"{b.get('Nq', 0):6d} {b.get('d', 0):4d} {tile:>6s} {b.get('mask', '?'):>12s} "
                         f"{b.get('tflops') or 0:9.3g} {err if err is not None else float('nan'):9.2e} "
                         f"{b.get('grad_tolerance') or 0:8.1e}  {res}")
        failed = [b for b in bwd.get("benchmarks", []) if b.get("status") == "failed"]
        if failed:
            lines.append(f"backward: {len(failed)} failed entries: "
                         + ", ".join(sorted({b.get('variant', '?') for b in failed})))
        lines.append(bwd_target_line(rows))
    lines += profile_lines(out, "bwd_profile")
    lines += crossover_table(out)
    print("\n".join(lines))
    return 0


# Issue 24's GPU target: the FA2-style backward (flash2) at hd 128, bf16, no mask, N 8k-16k.
BWD_TARGET_TFLOPS = 300.0


def bwd_target_line(rows: list[dict]) -> str:
    """The best correct flash2 bwd TFLOP/s per tile on the target's problems against the target,
    beside the libraries' best on the same problems."""
    def on_target(b: dict) -> bool:
        return (b.get("pass") == "bwd" and b.get("dtype") == "bf16" and b.get("d") == 128 and b.get("mask") == "none"
                and b.get("Nq") == b.get("Nkv") and 8192 <= (b.get("Nq") or 0) <= 16384
                and b.get("err_ok") is not False and b.get("grad_err") is not None and bool(b.get("tflops")))
    best: dict[str, float] = {}
    for b in filter(on_target, rows):
        who = (f"{b.get('Br')}x{b.get('Bc')}" if b.get("variant") == "flash2" and not b.get("peer")
               else str(b.get("variant")))
        best[who] = max(best.get(who, 0.0), float(b["tflops"]))
    ours = {k: v for k, v in best.items() if "x" in k and k[0].isdigit()}
    head = f"target (issue 24: flash2 bwd, bf16, d 128, no mask, N 8k-16k, >= {BWD_TARGET_TFLOPS:.0f} TFLOP/s): "
    if not ours:
        return head + "no correct flash2 entry on those problems"
    top = max(ours.values())
    verdict = "met" if top >= BWD_TARGET_TFLOPS else "not met"
    others = [f"{k} {v:.0f}" for k, v in sorted(best.items()) if k not in ours]
    return (head + ", ".join(f"{k} {v:.0f}" for k, v in sorted(ours.items())) + f": {verdict}"
            + (f" (beside {', '.join(others)})" if others else ""))


# Nsight Compute's details page: the section metrics that say what bounds a kernel (names as
# ncu prints them; those a version lacks are left out).
PROFILE_METRICS = ("Duration", "Compute (SM) Throughput", "Memory Throughput", "L1/TEX Cache Throughput",
                   "L2 Cache Throughput", "DRAM Throughput", "Issue Slots Busy", "Achieved Occupancy",
                   "Warp Cycles Per Issued Instruction")
STALL_RE = re.compile(r"^smsp__average_warps_issue_stalled_(\w+?)_per_issue_active\.ratio$")


def profile_lines(out: str, name: str) -> list[str]:
    """Per profiled kernel of NAME.details.csv (profile_ncu.sh --sections): the section metrics
    of PROFILE_METRICS, and from NAME.csv (the raw page) the 4 largest warp stall reasons, in
    warps stalled per issued instruction."""
    details = [ln for ln in read(os.path.join(out, f"{name}.details.csv")).splitlines() if ln.startswith('"')]
    if not details:
        return []
    kernels: dict[str, dict[str, str]] = {}
    label: dict[str, str] = {}
    for r in csv.DictReader(details):
        k = r.get("ID", "?")
        label.setdefault(k, r.get("Kernel Name", "?").split("(")[0] +
                         (f" block {r['Block Size']}" if r.get("Block Size") else ""))
        if r.get("Metric Name") in PROFILE_METRICS:
            unit = r.get("Metric Unit", "")
            kernels.setdefault(k, {})[r["Metric Name"]] = f"{r.get('Metric Value', '?')} {unit}".strip()
    stalls: dict[str, list[tuple[float, str]]] = {}
    raw = [ln for ln in read(os.path.join(out, f"{name}.csv")).splitlines() if ln.startswith('"')]
    if raw:
        rows = list(csv.reader(raw))
        for r in rows[2:]:  # after the header and the unit row
            cells = dict(zip(rows[0], r))
            found = []
            for col, v in cells.items():
                m = STALL_RE.match(col)
                if not m:
                    continue
                try:
                    found.append((float(v.replace(",", "")), m.group(1)))
                except ValueError:
                    pass
            stalls[cells.get("ID", "?")] = sorted(found, reverse=True)[:4]
    lines = ["", f"profile ({name}.details.csv, Nsight Compute)"]
    for k in sorted(label, key=lambda x: int(x) if x.isdigit() else 0):
        m = kernels.get(k, {})
        lines.append(f"  {label[k]} (ID {k}): " + "; ".join(f"{n} {m[n]}" for n in PROFILE_METRICS if n in m))
        if stalls.get(k):
            lines.append("    stalls per issue: " + ", ".join(f"{r} {v:.2f}" for v, r in stalls[k]))
    return lines


def crossover_table(out: str) -> list[str]:
    """Time per L of each row of the crossover step, and per scan the first measured L from
    which it beats the fastest attention row at every longer L (the report interpolates it:
    scripts/abreport/alternatives.py)."""
    doc, note = load_run(out, "crossover.json")
    if doc is None:
        return []
    scans = {r.get("name") for r in doc.get("context", {}).get("variants") or []
             if isinstance(r, dict) and "scan" in (r.get("tags") or [])}
    times: dict[str, dict[int, float]] = defaultdict(dict)
    for b in doc.get("benchmarks", []):
        if b.get("status") == "ok" and b.get("err_ok") is not False and b.get("time_ms"):
            times[b.get("variant", "?")][int(b.get("Nq", 0))] = float(b["time_ms"])
    lengths = sorted({n for t in times.values() for n in t})
    lines = ["", note] if note else [""]
    lines.append(f"{'crossover (ms)':24s} " + " ".join(f"{n:>9d}" for n in lengths) + "  scan faster from L")
    attention = {n: min((t[n] for v, t in times.items() if v not in scans and n in t), default=None)
                 for n in lengths}
    for v in sorted(times, key=lambda v: (v in scans, v)):
        t = times[v]
        cells = " ".join(f"{t[n]:9.3g}" if n in t else f"{'-':>9s}" for n in lengths)
        verdict = ""
        if v in scans:
            wins = [n for n in lengths if n in t and attention[n] is not None]
            faster = [attention[n] > t[n] for n in wins]
            verdict = ("no attention row ran" if not wins else "not in the measured range" if not faster[-1]
                       else str(next(n for i, n in enumerate(wins) if all(faster[i:]))))
        lines.append(f"{v:24s} {cells}  {verdict}")
    return lines


if __name__ == "__main__":
    sys.exit(main())

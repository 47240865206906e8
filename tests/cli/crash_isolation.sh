#!/usr/bin/env bash
# crash_isolation.sh BIN RESUME_SCRIPT WORKDIR
# A sweep of four CPU rows with a planted hang in flash1 (ATTNBENCH_FAULT hang: the
# watchdog polls a device that never finishes, against --wait-timeout) and a planted
# crash in linear (SIGSEGV):
#   1. attnbench sweep ends with status 3 at flash1's first configuration, its entry
#      failed with "timeout: ..." and row_fault timeout, the JSON so far written;
#   2. --resume skips flash1's other configurations and dies of SIGSEGV (status 139) at
#      linear's first, whose entry the crash guard wrote (row_fault crash);
#   3. scripts/resume_sweep.sh finishes the sweep (status 0): naive and flash2 have every
#      configuration ok, flash1 and linear one failed each and the rest skipped with the
#      reason naming the failed configuration; the lock file is gone.
# Negative controls: the same log with the row_fault marks removed makes a resume run
# flash1 again (it hangs again: status 3), and resume_sweep.sh restarting only on status 3
# (as before crash isolation) leaves the sweep unfinished after the crash.
# Ceilings: a run cut off by a hang writes its measured ceilings into the log's header and the
# resumed run reuses them (context.ceilings_from) instead of measuring again.
set -euo pipefail
bin="$1"; resume_script="$2"; work="$3"
rm -rf "$work"; mkdir -p "$work"
sweep=(--backend cpu --variant naive,flash1,flash2,linear --seq 64,96,128 --heads 2 --head-dim 32
       --mask none,causal --reps 1 --rep-time 0.002 --no-ceilings --wait-timeout 0.3)
faults="hang:flash1/;crash:linear/"
"$bin" sweep "${sweep[@]}" --dry-run 2>/dev/null | awk '{print $1}' >"$work/expected.txt"
[[ $(wc -l <"$work/expected.txt") -eq 24 ]] || { echo "expected 24 configurations"; exit 1; }
out="$work/run.json"; log="$out.log.jsonl"
fail() { echo "FAIL: $*"; exit 1; }

set +e
ATTNBENCH_FAULT="$faults" "$bin" sweep "${sweep[@]}" --out "$out" >"$work/1.out" 2>"$work/1.err"
rc=$?
set -e
[[ $rc -eq 3 ]] || fail "step 1: expected exit 3 after the planted hang, got $rc: $(tail -3 "$work/1.err")"
grep -q "timeout: the launch (a hang planted by ATTNBENCH_FAULT) did not complete within 300 ms" "$work/1.err" ||
  fail "step 1: no timeout line on stderr: $(cat "$work/1.err")"
[[ -f "$out" ]] || fail "step 1: the JSON so far was not written"

set +e
ATTNBENCH_FAULT="$faults" "$bin" sweep "${sweep[@]}" --out "$out" --resume >"$work/2.out" 2>"$work/2.err"
rc=$?
set -e
[[ $rc -eq 139 ]] || fail "step 2: expected death by SIGSEGV (139) at linear, got $rc: $(tail -3 "$work/2.err")"
grep -q "crashed the process (signal 11 (SIGSEGV))" "$work/2.err" || fail "step 2: no crash line: $(cat "$work/2.err")"
grep -q "not running cpu:flash1: flash1 hung (timeout)" "$work/2.err" || fail "step 2: flash1 not quarantined"
cp "$log" "$work/after_crash.log.jsonl"

ATTNBENCH_BIN="$bin" ATTNBENCH_FAULT="$faults" "$resume_script" "${sweep[@]}" --out "$out" --resume \
  >"$work/3.out" 2>"$work/3.err" || fail "step 3: resume_sweep.sh failed: $(tail -3 "$work/3.err")"
[[ ! -e "$log.lock" ]] || fail "the lock file outlived a normal end"
check() {  # check RESULT_JSON
  python3 - "$1" "$work/expected.txt" "$1.log.jsonl" <<'PY'
import json, sys
out, expected, log = sys.argv[1:]
want = open(expected).read().split()
bench = json.load(open(out))["benchmarks"]
by = {b["name"]: b for b in bench}
assert sorted(by) == sorted(want) and len(bench) == len(want), f"{len(bench)} entries for {len(want)} configurations"
first = {}
for name in want:  # in run order
    first.setdefault(by[name]["variant"], name)
for b in bench:
    v, st, msg = b["variant"], b["status"], b.get("error_message", "")
    if v in ("naive", "flash2"):
        assert st == "ok" and b["err_ok"], (b["name"], st, msg)
        continue
    kind, what = {"flash1": ("timeout", "hung (timeout)"), "linear": ("crash", "crashed")}[v]
    if b["name"] == first[v]:
        assert st == "failed" and b.get("row_fault") == kind, (b["name"], st, b.get("row_fault"))
        assert msg.startswith("timeout: " if kind == "timeout" else "crashed: signal 11 (SIGSEGV)"), msg
    else:
        assert st == "skipped" and b.get("quarantined_by") == first[v], (b["name"], st, msg)
        assert msg.startswith(f"{v} {what}") and f"on {first[v]}, see {log}" in msg, msg
print("crash isolation ok: naive, flash2 all ok; flash1 timeout + 5 skipped; linear crash + 5 skipped")
PY
}
check "$out"

# Control 1: without the row_fault marks the resumed sweep runs flash1 again, and it hangs again.
python3 - "$work/after_crash.log.jsonl" "$work/control.json.log.jsonl" <<'PY'
import json, sys
src, dst = sys.argv[1:]
with open(dst, "w") as f:
    for line in open(src):
        if line.strip():
            e = json.loads(line)
            if e.get("row_fault") == "timeout":
                continue  # the hang's entry and its mark gone: flash1's first configuration is not done
            e.pop("row_fault", None)
            f.write(json.dumps(e) + "\n")
PY
set +e
ATTNBENCH_FAULT="$faults" "$bin" sweep "${sweep[@]}" --out "$work/control.json" --resume >/dev/null 2>"$work/c1.err"
rc=$?
set -e
[[ $rc -eq 3 ]] || fail "control 1: without the marks flash1 should run and hang again (exit 3), got $rc"

# Control 2: restarting only on status 3 (the old resume_sweep.sh) stops at the crash, unfinished.
sed 's/3 | 132 | 134 | 135 | 136 | 139) return 0/3) return 0/' "$resume_script" >"$work/old_resume.sh"
set +e
ATTNBENCH_BIN="$bin" ATTNBENCH_FAULT="$faults" bash "$work/old_resume.sh" "${sweep[@]}" --out "$work/old.json" \
  >/dev/null 2>"$work/c2.err"
rc=$?
set -e
[[ $rc -eq 139 ]] || fail "control 2: expected the old restart rule to end at the crash (139), got $rc"
if check "$work/old.json" >/dev/null 2>&1; then fail "control 2: an unfinished sweep passed the check"; fi
echo "controls ok: an unmarked log reruns the hung row (exit 3); restarting on 3 alone ends at the crash, unfinished"

# Ceilings: measured once. The first run (hang at its 2nd configuration, exit 3) measures them and
# writes them into its log's header; the resumed run takes them from there, not measuring again.
cs=(--backend cpu --variant naive,flash1 --seq 64 --heads 2 --head-dim 32 --reps 1 --rep-time 0.002 --wait-timeout 0.3)
set +e
ATTNBENCH_FAULT="hang:flash1/" "$bin" sweep "${cs[@]}" --out "$work/ceil.json" >/dev/null 2>&1
rc=$?
set -e
[[ $rc -eq 3 ]] || fail "ceilings: expected exit 3 at the planted hang, got $rc"
"$bin" sweep "${cs[@]}" --out "$work/ceil.json" --resume >/dev/null 2>&1 || fail "ceilings: the resume failed"
python3 - "$work/ceil.json" <<'PY' || fail "ceilings: the resumed run did not reuse the header's ceilings"
import json, sys
out = sys.argv[1]
ctx = json.load(open(out))["context"]
header = json.loads(open(out + ".log.jsonl").readline())["context"]
assert ctx["ceilings_from"].startswith("the header of "), ctx.get("ceilings_from")
assert ctx["ceilings"]["measured"] == header["ceilings"]["measured"]
assert ctx["ceilings"]["measured"]["bandwidth_gbps"] > 0
print("ceilings ok: the resumed sweep reused the first run's ceilings from the log header")
PY

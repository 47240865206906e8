#!/usr/bin/env bash
# kill_resume.sh BIN RESUME_SCRIPT WORKDIR
# 1. A sweep is killed with SIGKILL mid-way (after some entries reached the log),
#    a torn half line is appended as if the kill hit a write, and the sweep is
#    rerun with --resume: every configuration must end up in the final JSON
#    exactly once, and the log must hold exactly one line per configuration.
# 2. A sticky device error (injected through ATTNBENCH_FAULT) ends the process
#    with status 3; scripts/resume_sweep.sh carries on to the end.
set -euo pipefail
bin="$1"; resume_script="$2"; work="$3"
rm -rf "$work"; mkdir -p "$work"
sweep=(--backend cpu --variant naive,flash2 --seq 64,96,128,160,192,224,256,288 --heads 2 --head-dim 32
       --mask none,causal --reps 2 --rep-time 0.02 --no-ceilings)
"$bin" sweep "${sweep[@]}" --dry-run 2>/dev/null | awk '{print $1}' | sort >"$work/expected.txt"
total=$(wc -l <"$work/expected.txt")
[[ $total -eq 32 ]] || { echo "expected 32 configurations, got $total"; exit 1; }

out="$work/run.json"; log="$out.log.jsonl"
"$bin" sweep "${sweep[@]}" --out "$out" >"$work/first.out" 2>&1 &
pid=$!
for _ in $(seq 1 600); do
  [[ -f "$log" ]] && (( $(wc -l <"$log") >= 6 )) && break
  kill -0 $pid 2>/dev/null || break
  sleep 0.05
done
kill -9 $pid 2>/dev/null || true
wait $pid 2>/dev/null || true
done_before=$(( $(wc -l <"$log") - 1 ))  # the first line is the header
echo "killed after $done_before of $total entries"
(( done_before >= 1 && done_before < total )) || { echo "kill did not land mid-sweep"; exit 1; }
[[ ! -f "$out" ]] || { echo "final JSON exists although the sweep was killed"; exit 1; }
printf '{"name": "flash2/cpu/fp32/B:1/H:2/Hkv:2/Nq:288' >>"$log"  # torn write

"$bin" sweep "${sweep[@]}" --out "$out" --resume >"$work/second.out" 2>"$work/second.err"
grep -q "already in" "$work/second.err" || { echo "resume did not report the log"; cat "$work/second.err"; exit 1; }
python3 - "$out" "$log" "$work/expected.txt" <<'PY'
import json, sys
out, log, expected = sys.argv[1:]
want = open(expected).read().split()
names = [b["name"] for b in json.load(open(out))["benchmarks"]]
raw = [json.loads(l) for l in open(log)]  # every line must parse
assert "attnbench_log" in raw[0]["context"], "the log starts with its header"
lines = [e["name"] for e in raw[1:]]
assert sorted(names) == sorted(want), (len(names), len(want))
assert len(set(names)) == len(names), "duplicate entries in the JSON"
assert sorted(lines) == sorted(want), f"log holds {len(lines)} lines for {len(want)} configurations"
print(f"resume ok: {len(names)} entries, none lost, none twice")
PY

# Sticky error: exit 3, then resume_sweep.sh finishes the sweep.
out2="$work/sticky.json"
victim=$(sed -n 7p "$work/expected.txt")
set +e
ATTNBENCH_FAULT="sticky:$victim" "$bin" sweep "${sweep[@]}" --out "$out2" >/dev/null 2>"$work/sticky.err"
rc=$?
set -e
[[ $rc -eq 3 ]] || { echo "expected exit 3 after a sticky error, got $rc"; cat "$work/sticky.err"; exit 1; }
ATTNBENCH_BIN="$bin" ATTNBENCH_FAULT="sticky:$victim" "$resume_script" "${sweep[@]}" --out "$out2" --resume \
  >/dev/null 2>"$work/resume.err"
python3 - "$out2" "$work/expected.txt" "$victim" <<'PY'
import json, sys
out, expected, victim = sys.argv[1:]
bench = json.load(open(out))["benchmarks"]
names = [b["name"] for b in bench]
assert sorted(names) == sorted(open(expected).read().split()), len(names)
failed = [b["name"] for b in bench if b["status"] == "failed"]
assert failed == [victim], failed
row = victim.split("/")[0]
# The victim's row is quarantined: its configurations not run before it are
# skipped, not retried.
rest = [b for b in bench if b["variant"] == row and b["name"] != victim and b["status"] != "ok"]
assert rest and all(b["status"] == "skipped" and b.get("quarantined_by") == victim for b in rest), rest[:1]
print(f"sticky error + resume_sweep.sh ok ({len(rest)} later {row} configurations quarantined)")
PY

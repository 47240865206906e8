#!/usr/bin/env bash
# resume_guard.sh BIN WORKDIR: a resume that cannot be fooled.
# 1. --resume of another sweep's log: exit 2, one line naming the log; --append accepts it.
# 2. Log lines failing the entry schema are not finished results: they run again, one warning line.
# 3. A second writer on one --out fails at once (exit 1) naming the first one's pid.
set -euo pipefail
bin="$1"; work="$2"
rm -rf "$work"; mkdir -p "$work"
sweep=(--backend cpu --variant naive --heads 2 --head-dim 32 --reps 1 --rep-time 0.01 --no-ceilings)
out="$work/r.json"; log="$out.log.jsonl"
fail() { echo "FAIL: $*"; exit 1; }

"$bin" sweep "${sweep[@]}" --seq 64,96 --out "$out" >/dev/null 2>&1
before="$(cat "$log")"
set +e
"$bin" sweep "${sweep[@]}" --seq 64 --out "$out" --resume >/dev/null 2>"$work/other.err"; rc=$?
set -e
[[ $rc -eq 2 ]] || fail "another sweep's log: expected exit 2, got $rc"
[[ $(wc -l <"$work/other.err") -eq 1 ]] || fail "expected one line: $(cat "$work/other.err")"
grep -q "different sweep" "$work/other.err" && grep -qF "$log" "$work/other.err" ||
  fail "message should name the log and say it is another sweep: $(cat "$work/other.err")"
[[ "$(cat "$log")" == "$before" ]] || fail "a refused resume changed the log"
"$bin" sweep "${sweep[@]}" --seq 64 --out "$out" --append >/dev/null 2>&1 || fail "--append refused"
python3 -c "import json,sys; assert len(json.load(open(sys.argv[1]))['benchmarks']) == 2" "$out" ||
  fail "--append should keep the other sweep's entries"
echo "ok: another sweep refused, --append accepted"

# 2. Forged lines: a bare name, a weird status, a string time: all three run again.
"$bin" sweep "${sweep[@]}" --seq 64,96,128 --out "$work/s.json" --dry-run 2>/dev/null | awk '{print $1}' >"$work/names"
"$bin" sweep "${sweep[@]}" --seq 64,96,128 --out "$work/s.json" >/dev/null 2>&1
python3 - "$work/s.json.log.jsonl" <<'PY'
import json, sys
p = sys.argv[1]
lines = open(p).read().splitlines()
head, entries = lines[0], [json.loads(l) for l in lines[1:]]
entries[0] = {"name": entries[0]["name"]}
entries[1]["status"] = "weird"
entries[2]["time_ms"] = "fast"
open(p, "w").write("\n".join([head] + [json.dumps(e) for e in entries]) + "\n")
PY
"$bin" sweep "${sweep[@]}" --seq 64,96,128 --out "$work/s.json" --resume >/dev/null 2>"$work/forged.err" ||
  fail "resume with forged lines failed: $(cat "$work/forged.err")"
[[ $(grep -c "warning: 3 invalid line(s)" "$work/forged.err") -eq 1 ]] ||
  fail "expected one warning line counting 3 invalid lines: $(cat "$work/forged.err")"
grep -q "3 ok" "$work/forged.err" || fail "the 3 forged configurations should run again: $(cat "$work/forged.err")"
python3 - "$work/s.json" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))["benchmarks"]
assert len(b) == 3 and all(e["status"] in ("ok", "skipped", "failed") for e in b), b
assert all(isinstance(e["time_ms"], (int, float)) or e["time_ms"] is None for e in b)
PY
echo "ok: forged lines run again"

# 3. Concurrent writers.
# (an option given twice is refused: the long first writer takes its own --reps and --rep-time)
long=(--backend cpu --variant naive --heads 2 --head-dim 32 --reps 3 --rep-time 0.05 --no-ceilings)
"$bin" sweep "${long[@]}" --seq 64,96,128,160,192,224,256,288,320,352 --mask none,causal \
  --out "$work/c.json" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 200); do [[ -s "$work/c.json.log.jsonl.lock" ]] && break; sleep 0.05; done
set +e
start=$(date +%s)
"$bin" sweep "${sweep[@]}" --seq 64 --out "$work/c.json" >/dev/null 2>"$work/second.err"; rc=$?
took=$(( $(date +%s) - start ))
set -e
kill "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
[[ $rc -eq 1 ]] || fail "second writer: expected exit 1, got $rc: $(cat "$work/second.err")"
[[ $(wc -l <"$work/second.err") -eq 1 ]] || fail "expected one line: $(cat "$work/second.err")"
grep -q "pid $pid" "$work/second.err" || fail "message should name pid $pid: $(cat "$work/second.err")"
(( took <= 5 )) || fail "the second writer waited ${took}s"
echo "ok: second writer refused: $(cat "$work/second.err")"

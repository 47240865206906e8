#!/usr/bin/env bash
# slurm_job_array.sh BIN REPO WORK: the Slurm job scripts users copy (scripts/slurm/, the ones
# docs/sweeps.md shows) run on a one-node Slurm cluster started here (slurm_cluster.sh):
#  1. submit.sh: a 4-task array of the quick preset on the CPU backend (small shapes) and the merge
#     job after it (afterok); the merged JSON holds exactly the unsharded sweep's configurations,
#     none twice, and every shard's results log is complete;
#  2. a task cancelled mid-run (scancel JOB_1) and resubmitted alone (sbatch --array=1) loses
#     nothing: the configurations it had finished stay in its log and are not run again, and the
#     merge is again exactly the sweep.
# Exit 77 (ctest: skipped) with the reason when Slurm cannot be installed or started.
set -uo pipefail
bin="$(realpath "$1")"; repo="$2"; work="$3"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
rm -rf "$work"; mkdir -p "$work"
# shellcheck source=tests/slurm/slurm_cluster.sh
source "$here/slurm_cluster.sh"
slurm_cluster_start "$work/cluster"
rc=$?
[[ $rc -eq 0 ]] || exit "$rc"
trap slurm_cluster_stop EXIT
fail() { echo "FAIL: $*"; for f in "$work"/logs/*; do [[ -f "$f" ]] && { echo "== $f"; tail -n 5 "$f"; }; done; exit 1; }

cd "$repo" || exit 1
export ATTNBENCH_BIN="$bin" ATTNBENCH_SHARDS=4 ATTNBENCH_PRESET=quick ATTNBENCH_BACKEND=cpu
export ATTNBENCH_SWEEP_ARGS="--variant naive,flash2 --seq 64,128 --head-dim 32 --reps 1 --rep-time 0.002 --no-ceilings"
export OMP_NUM_THREADS=1
# No GPUs on this node; job output beside the test's other files instead of ./logs.
opts=(--gpus-per-task=0 --cpus-per-task=1 "--output=$work/logs/%x-%A_%a.out")
mkdir -p "$work/logs"

job_state() { scontrol show job "$1" 2>/dev/null | grep -oE 'JobState=[A-Z_]+' | cut -d= -f2 | sort | uniq -c | xargs; }
wait_done() {  # JOB SECONDS: until no task of JOB is pending or running
  local t
  for t in $(seq 1 $(($2 * 5))); do
    squeue -h -j "$1" 2>/dev/null | grep -q . || return 0
    sleep 0.2
  done
  fail "job $1 still queued or running after $2 s: $(job_state "$1")"
}
expect_states() {  # JOB "N STATE[ N STATE]..."
  local got; got="$(job_state "$1")"
  [[ "$got" == "$2" ]] || fail "job $1: states '$got', expected '$2'"
  echo "job $1: $got"
}
names_of_sweep() {  # [--shard i/n]: configuration names of the unsharded (or one shard's) sweep
  # shellcheck disable=SC2086
  "$bin" sweep --preset quick --backend cpu $ATTNBENCH_SWEEP_ARGS "$@" --dry-run 2>/dev/null | awk '{print $1}' | sort
}
check_merged() {  # FILE: exactly the sweep's configurations, none twice
  python3 - "$1" >"$work/merged.names" <<'PY' || fail "$1 is not a merged result: $(cat "$work/merged.names")"
import json, sys
for e in json.load(open(sys.argv[1]))["benchmarks"]:
    print(e["name"])
PY
  [[ -z "$(sort "$work/merged.names" | uniq -d)" ]] || fail "$1 holds a configuration twice: $(sort "$work/merged.names" | uniq -d | head -n 3)"
  diff <(sort "$work/merged.names") <(names_of_sweep) >"$work/diff" || fail "$1 is not the sweep: $(head -n 5 "$work/diff")"
  echo "ok: $1 holds the $(wc -l <"$work/merged.names") configurations of the unsharded sweep, each once"
}
log_names() { tail -n +2 "$1" | python3 -c 'import json, sys; [print(json.loads(l)["name"]) for l in sys.stdin]' | sort; }

# 1. The array and the merge, as a user submits them.
export ATTNBENCH_OUT_DIR="$work/out"
read -r array merge < <(bash scripts/slurm/submit.sh "${opts[@]}") || fail "submit.sh failed"
echo "submitted array job $array, merge job $merge (afterok:$array)"
wait_done "$merge" 240
expect_states "$array" "4 COMPLETED"
expect_states "$merge" "1 COMPLETED"
for i in 0 1 2 3; do
  diff <(log_names "$ATTNBENCH_OUT_DIR/quick-shard$i.json.log.jsonl") <(names_of_sweep --shard "$i/4") >/dev/null ||
    fail "shard $i's results log is not its shard of the sweep"
done
echo "ok: every shard's results log holds its shard"
check_merged "$ATTNBENCH_OUT_DIR/quick.json"
# Controls: a merge without shard 3 fails the same check; merge.sbatch refuses a missing shard.
"$bin" merge --out "$work/partial.json" "$ATTNBENCH_OUT_DIR"/quick-shard{0,1,2}.json >/dev/null 2>&1
( check_merged "$work/partial.json" ) >/dev/null && fail "control: a merge without shard 3 passed the check"
ATTNBENCH_SHARDS=5 bash scripts/slurm/merge.sbatch 2>"$work/missing.err"
[[ $? -eq 2 ]] && grep -q "shard 4/5 is missing" "$work/missing.err" || fail "control: merge.sbatch took 4 of 5 shards"
echo "ok: controls (a merge missing a shard is caught; merge.sbatch refuses one)"

# 2. Cancel task 1 mid-run, resubmit it alone, merge.
export ATTNBENCH_OUT_DIR="$work/out2"
export ATTNBENCH_SWEEP_ARGS="${ATTNBENCH_SWEEP_ARGS/--reps 1 --rep-time 0.002/--reps 3 --rep-time 0.03}"
array=$(sbatch --parsable --array=0-3 "${opts[@]}" scripts/slurm/array.sbatch) || fail "sbatch failed"
array="${array%%;*}"
log1="$ATTNBENCH_OUT_DIR/quick-shard1.json.log.jsonl"
for _ in $(seq 1 600); do
  [[ -f "$log1" && $(wc -l <"$log1") -ge 4 ]] && break
  sleep 0.05
done
[[ -f "$log1" && $(wc -l <"$log1") -ge 4 ]] || fail "task 1 of $array wrote no results in 30 s"
scancel "${array}_1"
echo "cancelled ${array}_1 after $(( $(wc -l <"$log1") - 1 )) finished configurations"
wait_done "$array" 240
scontrol show job "${array}_1" | grep -q "JobState=CANCELLED" ||
  fail "task ${array}_1 was not cancelled mid-run ($(job_state "$array")): the test proves nothing"
[[ ! -f "$ATTNBENCH_OUT_DIR/quick-shard1.json" ]] || fail "task 1 wrote its final JSON although cancelled"
expect_states "$array" "1 CANCELLED 3 COMPLETED"
cp "$log1" "$work/log1.before"
again=$(sbatch --parsable --array=1 "${opts[@]}" scripts/slurm/array.sbatch) || fail "resubmission failed"
again="${again%%;*}"
merge=$(sbatch --parsable --dependency="afterok:$again" --kill-on-invalid-dep=yes "${opts[@]}" \
  scripts/slurm/merge.sbatch) || fail "merge submission failed"
merge="${merge%%;*}"
echo "resubmitted task 1 as job $again, merge job $merge (afterok:$again)"
wait_done "$merge" 240
expect_states "$again" "1 COMPLETED"
expect_states "$merge" "1 COMPLETED"
# The lines finished before the cancel are still in the log, unchanged, and none ran again.
python3 - "$work/log1.before" "$log1" <<'PY' || fail "the resumed task lost or reran configurations finished before the cancel"
import json, sys
def entries(path):
    out = []
    for line in open(path).read().split("\n")[1:]:
        try:
            out.append((json.loads(line)["name"], line))
        except (ValueError, KeyError):
            pass  # a line torn by the cancel: not a finished result
    return out
before, after = entries(sys.argv[1]), entries(sys.argv[2])
names = [n for n, _ in after]
assert len(names) == len(set(names)), "a configuration twice"
assert {l for _, l in before} <= {l for _, l in after}, "a finished line changed or vanished"
PY
done_before=$(python3 -c 'import json, sys
n = 0
for line in open(sys.argv[1]).read().split("\n")[1:]:
    try: json.loads(line)["name"]; n += 1
    except (ValueError, KeyError): pass
print(n)' "$work/log1.before")
grep -q "$done_before from the log" "$work/logs/attnbench-${again}_1.out" ||
  fail "the resumed task did not take its $done_before finished configurations from its log: $(tail -n 2 "$work/logs/attnbench-${again}_1.out")"
echo "ok: the resumed task kept its $done_before finished configurations and ran the rest"
check_merged "$ATTNBENCH_OUT_DIR/quick.json"

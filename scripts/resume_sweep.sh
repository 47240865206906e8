#!/usr/bin/env bash
# Runs `attnbench sweep ARGS...` and, while it ends with status 3 (a sticky
# device error: the CUDA context is unusable), reruns it in a fresh process
# with --resume so the results log carries on where it stopped. The failed
# configuration stays in the log as "failed"; nothing is run twice.
#   scripts/resume_sweep.sh --preset full --backend cuda --out results/x/full.json
# Environment: ATTNBENCH_BIN (default build/bin/attnbench), ATTNBENCH_MAX_RESTARTS (default 20).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="${ATTNBENCH_BIN:-$here/../build/bin/attnbench}"
max="${ATTNBENCH_MAX_RESTARTS:-20}"
args=("$@")
"$bin" sweep "${args[@]}"
rc=$?
resume=(--resume)
for a in "${args[@]}"; do [[ "$a" == --resume ]] && resume=(); done
n=0
while [[ $rc -eq 3 && $n -lt $max ]]; do
  n=$((n + 1))
  echo "resume_sweep: sticky device error; restart $n/$max with --resume" >&2
  "$bin" sweep "${args[@]}" "${resume[@]}"
  rc=$?
done
exit $rc

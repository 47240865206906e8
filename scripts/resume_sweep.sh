#!/usr/bin/env bash
# Runs `attnbench sweep ARGS...` and, while it ends with status 3 (a sticky
# device error, or a device wait past its deadline: the CUDA context cannot be
# trusted) or is killed by a crash signal (SIGSEGV, SIGBUS, SIGILL, SIGFPE,
# SIGABRT: status 128 + signal), reruns it in a fresh process with --resume so
# the results log carries on where it stopped. The configuration that failed
# stays in the log as "failed" with its row_fault (timeout, crash,
# device_error); the resumed sweep records the rest of that row as skipped
# (docs/sweeps.md, "Crash safety") and reuses the ceilings the first run wrote
# into the log's header. Nothing runs twice.
# A restart happens only when the attempt before it added to the results log
# (when --out names it): a process that dies before recording anything (during
# start-up or the ceilings) would die the same way again.
#   scripts/resume_sweep.sh --preset full --backend cuda --out results/x/full.json
# Environment: ATTNBENCH_BIN (default build/bin/attnbench), ATTNBENCH_MAX_RESTARTS (default 20).
# Exit status: the last attempt's (0 when the sweep finished, rows quarantined or not).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="${ATTNBENCH_BIN:-$here/../build/bin/attnbench}"
max="${ATTNBENCH_MAX_RESTARTS:-20}"
args=("$@")
out=""
for ((i = 0; i < ${#args[@]}; ++i)); do
  case "${args[$i]}" in
    --out) out="${args[$((i + 1))]:-}" ;;
    --out=*) out="${args[$i]#--out=}" ;;
  esac
done
log_lines() { if [[ -n "$out" && -f "$out.log.jsonl" ]]; then wc -l <"$out.log.jsonl"; else echo 0; fi; }
restartable() {  # 3, or killed by SIGILL 4, SIGABRT 6, SIGBUS 7, SIGFPE 8, SIGSEGV 11
  case "$1" in 3 | 132 | 134 | 135 | 136 | 139) return 0 ;; *) return 1 ;; esac
}
before=$(log_lines)
"$bin" sweep "${args[@]}"
rc=$?
resume=(--resume)
for a in "${args[@]}"; do [[ "$a" == --resume || "$a" == --append ]] && resume=(); done
n=0
while restartable "$rc" && [[ $n -lt $max ]]; do
  after=$(log_lines)
  if [[ -n "$out" && $after -le $before ]]; then
    echo "resume_sweep: attnbench ended with status $rc without adding to $out.log.jsonl; not restarting" >&2
    break
  fi
  before=$after
  n=$((n + 1))
  what="sticky device error or device timeout"
  ((rc > 128)) && what="crash (signal $((rc - 128)))"
  echo "resume_sweep: $what (status $rc); restart $n/$max with --resume" >&2
  "$bin" sweep "${args[@]}" "${resume[@]}"
  rc=$?
done
exit $rc

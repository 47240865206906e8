#!/usr/bin/env bash
# gpu_check_dry_run.sh BUILD_DIR WORK: scripts/gpu_check.sh on a machine
# without a GPU (GPU_CHECK_ALLOW_NO_GPU=1), with this build's binaries as the prebuilt ones,
# tiny sweeps, and a planted hang in flash1 and crash in linear (ATTNBENCH_FAULT). The sweep
# steps run on the cpu backend. Expected:
#   - the prebuilt binaries are used (no configure/build), the backend step fails (no GPU)
#     and the dry run goes on;
#   - the smoke step finds flash1 hung and linear crashed (restarting past both) and naive,
#     flash2 passing; the GPU test binary runs as one process without flash1's and linear's
#     suites; the quick sweep skips both rows as quarantined and runs the others; ceilings
#     are measured once (ceilings.json) and passed on; the summary says all of it.
# Control: with the smoke step narrowed to naive (it finds nothing), the quick sweep meets
# flash1's hang itself (one failed entry, timeout) — what the smoke step spared it.
set -u
build="$1"; work="$2"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
fail() { echo "FAIL: $*"; [[ -f "$work/out/summary.txt" ]] && cat "$work/out/summary.txt"; exit 1; }
rm -rf "$work" && mkdir -p "$work" || fail "cannot make $work"
[[ -x "$build/bin/attnbench" ]] || fail "no $build/bin/attnbench"
run_check() {  # run_check OUT [extra env...]
  local o="$1"; shift
  env GPU_CHECK_ALLOW_NO_GPU=1 GPU_CHECK_PREBUILT="$build" GPU_CHECK_BUILD_DIR="$work/build" GPU_CHECK_PEERS_S=0 \
    GPU_CHECK_BUDGET_S=240 GPU_CHECK_SMOKE_WAIT_S=0.5 ATTNBENCH_FAULT="hang:flash1/;crash:linear/" \
    GPU_CHECK_SWEEP_ARGS="--variant naive,flash1,flash2,linear --seq 64,96 --heads 2 --head-dim 32 --mask none,causal --dtype fp32 --reps 1 --rep-time 0.002" \
    GPU_CHECK_FP8_ARGS="--variant flash2 --dtype bf16,e4m3 --seq 128 --heads 2 --head-dim 64 --reps 1 --rep-time 0.002" \
    "$@" bash "$root/scripts/gpu_check.sh" "$o" >"$o.stdout" 2>"$o.stderr"
}
mkdir -p "$work/out" "$work/control"
run_check "$work/out" GPU_CHECK_BUNDLE="$work/bundle.tar.gz"
rc=$?
s="$work/out/summary.txt"
[[ $rc -eq 1 ]] || fail "a dry run must exit 1 (the backend step fails without a GPU), got $rc"
[[ -f "$s" ]] || fail "no summary.txt"
# The bundle the device tool brings back (it returns at most 8 files): every output, summary too.
tar -tzf "$work/bundle.tar.gz" 2>/dev/null | grep -q "^out/summary.txt$" || fail "GPU_CHECK_BUNDLE lacks out/summary.txt"
(( $(tar -tzf "$work/bundle.tar.gz" | grep -vc '/$') > 8 )) || fail "GPU_CHECK_BUNDLE holds 8 files or fewer"
expect() { grep -qE "$1" "$s" || fail "summary lacks /$1/"; }
expect "^binaries: prebuilt \($build"
expect "^step backend +failed"
expect "^step smoke +ok"
expect "^step ceilings +ok"
expect "^step gpu_tests +ok"
expect "^step fp8 +ok"
expect "^step bwd +ok"
expect "^flash2 bwd fp32 +256 +64 +64x64 +causal .* ok$"
expect "^naive fwd_bwd fp32 +256 +64 +64x64 +none .* ok$"
# The profile's command lines (profile_ncu.sh --dry-run): the main kernel only, the sections.
expect "^step bwd_profile +ok"
grep -q -- "--kernel-name regex:flash2_bwd_kernel" "$work/out/bwd_profile.log" &&
  grep -q -- "--section WarpStateStats" "$work/out/bwd_profile.log" &&
  grep -q -- "--page details" "$work/out/bwd_profile.log" || fail "bwd_profile.log lacks the ncu command lines"
# The backward's peers on the bwd step's problems: on the cpu torch's flash backend runs (the
# efficient and cuDNN ones are skipped: no CPU kernel), merged into bwd.json.
expect "^step bwd_peers +ok"
expect "^torch_sdpa_flash bwd fp32 +256 +64 +lib +causal .* ok$"
expect "^step crossover +ok"
expect "^crossover \(ms\) +64 +512 +scan faster from L$"
expect "^selective_scan +[0-9.e+-]+ +[0-9.e+-]+  (64|512|not in the measured range)$"
expect "^step sweep +ok"
expect "^step peers +skipped"
expect "^  flash1 +hang: timeout: the launch \(a hang planted by ATTNBENCH_FAULT\) did not complete within 500 ms"
expect "^  linear +crash: crashed: signal 11 \(SIGSEGV\)"
expect "^  naive +pass$"
expect "^  flash2 +pass$"
expect "^gpu tests: [0-9]+ passed, 0 failed, [0-9]+ skipped, 0 hung, 0 crashed; rows left out: flash1,linear; 1 process"
expect "^flash1 .* 0/0/0/4 +none run \(row quarantined"
expect "^linear .* 0/0/0/4 +none run \(row quarantined"
expect "^naive .* 4/0/0/0 +PASS$"
expect "^ceilings measured: "
# The exp roof's rate beside the other ceilings, in the summary and the script's log.
expect "^ceilings measured: .*; exp rate [0-9.e+-]+ [TG] exp/s$"
grep -q -- "--ceilings-from $work/out/ceilings.json" "$work/out/sweep.log" 2>/dev/null ||
  grep -q "ceilings_from" "$work/out/quick.json" || fail "the quick sweep did not take ceilings.json"
python3 - "$work/out/quick.json" "$work/out/ceilings.json" <<'PY' || fail "ceilings were measured again"
import json, sys
q, c = json.load(open(sys.argv[1]))["context"], json.load(open(sys.argv[2]))
assert q["ceilings_from"].startswith("file "), q.get("ceilings_from")
assert q["ceilings"]["measured"] == c["ceilings"]["measured"]
PY
grep -q "CudaFlash1\.\*" "$work/out/gpu_tests.log" || fail "flash1's GPU tests were not left out"
echo "ok: dry run: smoke flash1 hang, linear crash, naive/flash2 pass; both rows left out of tests and sweep"

run_check "$work/control" GPU_CHECK_SMOKE_ARGS="--filter ^naive/"
s="$work/control/summary.txt"
grep -qE "^flash1 .* 0/0/1/3 " "$s" ||
  fail "control: without the smoke finding it, the quick sweep should meet flash1's hang itself (0/0/1/3)"
echo "control ok: a smoke step that misses flash1 leaves its hang to the quick sweep (1 failed, 3 quarantined)"

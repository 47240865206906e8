#!/usr/bin/env bash
# Runs the GPU test binary as one process: CUDA, cuBLAS and cuDNN start once,
# not once per test as ctest's one-process-per-test would (~100 tests). Every device wait
# of the tests has a deadline ($ATTNBENCH_WAIT_TIMEOUT_S, tests/gpu/gpu_test_util.hpp); a
# test whose kernel hangs ends the binary with status 3 ("ATTNBENCH_TIMEOUT <test>"), one
# that crashes it dies of a signal. The binary is then started again without the tests
# that already finished and without that one, which is recorded as hung or crashed.
#
#   scripts/gpu_tests.sh TEST_BINARY OUT_DIR [ROW,ROW...]
#
# ROW,ROW...: rows whose tests are left out (the smoke step's crashed or hung rows); their
# suites are listed in row_suites below. Writes OUT_DIR/gpu_tests.log (every attempt's
# output, from which the results are counted), gpu_tests.<n>.xml (gtest's XML of attempts
# that ended normally) and gpu_tests_summary.txt:
#   gpu tests: P passed, F failed, S skipped, H hung, C crashed, L left out (rows: ...)
#   hung: Suite.test ... / crashed: Suite.test (signal N) ...
# Exit status: 0 when nothing failed, hung or crashed; 1 otherwise.
# Environment: GPU_TESTS_MAX_ATTEMPTS (default 6).
set -uo pipefail
if [[ $# -lt 2 ]]; then
  echo "usage: scripts/gpu_tests.sh TEST_BINARY OUT_DIR [ROW,ROW...]" >&2
  exit 2
fi
bin="$1"; out="$2"; rows="${3:-}"
mkdir -p "$out"
log="$out/gpu_tests.log"; : >"$log"
max="${GPU_TESTS_MAX_ATTEMPTS:-6}"

# The gtest suites that run each row's kernels (host-only suites, *Host, stay in).
row_suites() {
  case "$1" in
    naive | naive_gqa_expand | cublas_unfused) echo "CudaUnfused.*" ;;
    flash1) echo "CudaFlash1.*" ;;
    linear) echo "CudaLinear.*" ;;
    selective_scan | ssd | wkv | wkv6) echo "CudaScans.*" ;;
    flash2) echo "Flash2.*:Flash2Tiles.*:*/Flash2Tiles.*" ;;
    sparse) echo "Sparse.*" ;;
    flash2_gqa_packed) echo "GqaPacked.*" ;;
    flash2_splitkv) echo "SplitKv.*" ;;
    flash3) echo "Flash3.*:*/Flash3Instances.*" ;;
    flash3_fp8) echo "Flash3Fp8.*:*/Flash3Fp8Instances.*" ;;
    cudnn_sdpa) echo "CudnnSdpa.*" ;;
    *) echo "" ;;
  esac
}
left_out=""
IFS=',' read -r -a row_list <<<"$rows"
for r in "${row_list[@]}"; do
  s="$(row_suites "$r")"
  [[ -n "$s" ]] && left_out="${left_out:+$left_out:}$s"
done

done_tests=""   # ':'-joined names that finished (any result) or hung/crashed
faults=()       # "hung Suite.test" / "crashed Suite.test (signal N)"
attempt=0
while ((attempt < max)); do
  attempt=$((attempt + 1))
  neg="$left_out${done_tests:+${left_out:+:}$done_tests}"
  filter="*${neg:+-$neg}"
  echo "=== gpu_tests attempt $attempt: --gtest_filter=$filter" >>"$log"
  "$bin" --gtest_filter="$filter" --gtest_output="xml:$out/gpu_tests.$attempt.xml" >"$out/gpu_tests.attempt.log" 2>&1
  rc=$?
  cat "$out/gpu_tests.attempt.log" >>"$log"
  # gtest ends with 0 (all passed) or 1 (some failed); anything else cut the run short.
  ((rc == 0 || rc == 1)) && break
  # The test that was running: the last [ RUN ] without its result line.
  culprit="$(python3 - "$out/gpu_tests.attempt.log" <<'PY'
import re, sys
running, finished = [], set()
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"\[ RUN      \] (\S+)", line)
    if m:
        running.append(m.group(1))
    m = re.match(r"\[ +(OK|FAILED|SKIPPED) +\] (\S+) \(", line)
    if m:
        finished.add(m.group(2))
print(":".join(sorted(finished)))
print(next((t for t in reversed(running) if t not in finished), ""))
PY
)"
  finished_now="$(sed -n 1p <<<"$culprit")"; culprit="$(sed -n 2p <<<"$culprit")"
  [[ -n "$finished_now" ]] && done_tests="${done_tests:+$done_tests:}$finished_now"
  if [[ -z "$culprit" ]]; then
    faults+=("ended with status $rc outside any test")
    break
  fi
  if ((rc == 3)); then faults+=("hung $culprit"); else faults+=("crashed $culprit (status $rc)"); fi
  done_tests="${done_tests:+$done_tests:}$culprit"
  echo "=== gpu_tests: $culprit ${faults[-1]%% *}; starting again without the tests that finished" >>"$log"
done

# Counted from the output (gtest writes its XML only when a process ends normally).
python3 - "$log" "$attempt" "$rows" "${faults[@]+"${faults[@]}"}" >"$out/gpu_tests_summary.txt" <<'PY'
import re, sys
log, attempts, rows, faults = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
result = {}
for line in open(log, errors="replace"):
    m = re.match(r"\[ +(OK|FAILED|SKIPPED) +\] (\S+) \(\d+ ms\)", line)
    if m:
        result[m.group(2)] = m.group(1)
passed = sum(1 for r in result.values() if r == "OK")
failures = sorted(n for n, r in result.items() if r == "FAILED")
skipped = sum(1 for r in result.values() if r == "SKIPPED")
hung = [f[5:] for f in faults if f.startswith("hung ")]
crashed = [f[8:] for f in faults if f.startswith("crashed ")]
other = [f for f in faults if not f.startswith(("hung ", "crashed "))]
print(f"gpu tests: {passed} passed, {len(failures)} failed, {skipped} skipped, {len(hung)} hung, {len(crashed)} crashed"
      + (f"; rows left out: {rows}" if rows else "") + f"; {attempts} process(es)")
for n in failures:
    print(f"failed: {n}")
for n in hung:
    print(f"hung: {n}")
for n in crashed:
    print(f"crashed: {n}")
for n in other:
    print(f"binary: {n}")
PY
cat "$out/gpu_tests_summary.txt"
grep -q "gpu tests: [0-9]* passed, 0 failed, [0-9]* skipped, 0 hung, 0 crashed" "$out/gpu_tests_summary.txt" &&
  ! grep -q "^binary:" "$out/gpu_tests_summary.txt"

#!/usr/bin/env bash
# gpu_tests_restart.sh WORK: scripts/gpu_tests.sh against a stand-in test binary
# (gtest's output, filter and XML) whose second test hangs (exit 3, as sync_device ends a
# hung test) and third crashes (SIGSEGV): the runner must start it again past each, run the
# last test, and report 2 passed, 1 hung, 1 crashed in 3 processes (exit 1); a left-out row
# removes its suite from the filter. Control: without the faults, 4 passed in 1 process (exit 0).
set -u
work="$1"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
fail() { echo "FAIL: $*"; cat "$work"/*/gpu_tests_summary.txt 2>/dev/null; exit 1; }
rm -rf "$work" && mkdir -p "$work" || fail "cannot make $work"
cat >"$work/fake_tests" <<'FAKE'
#!/usr/bin/env bash
# A stand-in gtest binary: tests A.one B.two C.three D.four; FAKE_FAULTS=1 makes B hang, C crash.
filter="*"; xml=""
for a in "$@"; do
  case "$a" in --gtest_filter=*) filter="${a#--gtest_filter=}" ;; --gtest_output=xml:*) xml="${a#--gtest_output=xml:}" ;; esac
done
pos="${filter%%-*}"; neg=""; [[ "$filter" == *-* ]] && neg="${filter#*-}"
cases=""
for t in A.one B.two C.three D.four; do
  skip=0
  IFS=':' read -r -a pats <<<"$neg"
  for p in "${pats[@]}"; do [[ -n "$p" && "$t" == $p ]] && skip=1; done
  ((skip)) && continue
  echo "[ RUN      ] $t"
  if [[ "${FAKE_FAULTS:-0}" == 1 && $t == B.two ]]; then echo "ATTNBENCH_TIMEOUT $t: ..." >&2; exit 3; fi
  if [[ "${FAKE_FAULTS:-0}" == 1 && $t == C.three ]]; then kill -SEGV $$; fi
  echo "[       OK ] $t (1 ms)"
  cases+="<testcase name=\"${t#*.}\" status=\"run\" result=\"completed\" classname=\"${t%%.*}\"/>"
done
[[ -n "$xml" ]] && echo "<testsuites>$cases</testsuites>" >"$xml"
exit 0
FAKE
chmod +x "$work/fake_tests"
FAKE_FAULTS=1 bash "$root/scripts/gpu_tests.sh" "$work/fake_tests" "$work/faults" >/dev/null 2>&1
rc=$?
[[ $rc -eq 1 ]] || fail "with a hang and a crash gpu_tests.sh must exit 1, got $rc"
s="$work/faults/gpu_tests_summary.txt"
grep -q "^gpu tests: 2 passed, 0 failed, 0 skipped, 1 hung, 1 crashed; 3 process(es)$" "$s" || fail "summary: $(head -1 "$s")"
grep -q "^hung: B.two$" "$s" && grep -q "^crashed: C.three (status 139)$" "$s" || fail "hung/crashed lines"
FAKE_FAULTS=1 bash "$root/scripts/gpu_tests.sh" "$work/fake_tests" "$work/left_out" flash1 >/dev/null 2>&1
grep -q -- "--gtest_filter=\*-CudaFlash1\.\*$" "$work/left_out/gpu_tests.log" || fail "flash1's suite not left out"
bash "$root/scripts/gpu_tests.sh" "$work/fake_tests" "$work/clean" >/dev/null 2>&1 || fail "control: a clean run must exit 0"
grep -q "^gpu tests: 4 passed, 0 failed, 0 skipped, 0 hung, 0 crashed; 1 process(es)$" "$work/clean/gpu_tests_summary.txt" ||
  fail "control summary: $(head -1 "$work/clean/gpu_tests_summary.txt")"
echo "ok: restarted past a hung and a crashed test (3 processes); control: 4 passed in 1 process"

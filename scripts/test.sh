#!/usr/bin/env bash
# The test command (README, .ci/run): setup, build the default preset, run
# every ctest test (GPU tests skip with the reason when no device is usable),
# then, side by side, the TSan build of the emulator tests and the
# Python tests followed by every chart/report regenerated (results/ + a fresh
# CPU quick sweep). Prints the seconds of each step at the end (budget: 25
# minutes on 2 cores, README).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

times=()
t0=$SECONDS
step_done() { times+=("$1 $((SECONDS - t0)) s"); t0=$SECONDS; }

bash scripts/setup.sh
step_done setup
cmake --preset default >/dev/null
cmake --build build -j"$(nproc)"
step_done build
ctest --test-dir build --output-on-failure -j2
step_done ctest

# The Python side (pytest, then the reports) keeps about one core busy; the sanitizer builds
# and their tests keep two. Run beside each other they end sooner than one after the other on
# 2 cores. The Python side's output is printed when it is done.
python_side() {
  local rc=0 t=$SECONDS
  python3 -m pytest -q tests/python || rc=$?
  # pytest exits 5 when it collects nothing: fine only while tests/python holds no tests.
  if [[ $rc -eq 5 ]] && ! compgen -G "tests/python/test_*.py" >/dev/null; then
    echo "test: no Python tests yet" >&2
    rc=0
  fi
  echo "test: pytest took $((SECONDS - t)) s"
  [[ $rc -eq 0 ]] || return $rc
  # Every chart and report regenerated from the JSON under results/ and from a fresh CPU
  # quick sweep: fails if any script fails.
  t=$SECONDS
  bash scripts/regen_results.sh --sweep build/bin/attnbench
  echo "test: reports took $((SECONDS - t)) s"
}
python_log=build/test-python.log
python_side >"$python_log" 2>&1 &
python_pid=$!
# The TSan build of the emulator tests (build-tsan; tests/emu/README.md "Sanitizers"; the
# default build's emulator tests already run under ASan+UBSan); one line if the compiler lacks it.
sanitizers_rc=0
bash scripts/emu_sanitizers.sh tsan || sanitizers_rc=$?
step_done "sanitizers"
python_rc=0
wait "$python_pid" || python_rc=$?
echo "---- Python tests and reports ($python_log) ----"
cat "$python_log"
step_done "python (after the sanitizers)"

echo "test: ${times[*]/%/;}"
[[ $sanitizers_rc -eq 0 ]] || { echo "test: the sanitizer step failed" >&2; exit "$sanitizers_rc"; }
[[ $python_rc -eq 0 ]] || { echo "test: the Python tests or the reports failed" >&2; exit "$python_rc"; }

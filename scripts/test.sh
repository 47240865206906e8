#!/usr/bin/env bash
# The test command (README, .ci/run): setup, build the default preset, run
# every ctest test (GPU tests skip with the reason when no device is usable),
# then the Python tests, then regenerate every chart/report (results/ + a
# fresh CPU quick sweep).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

bash scripts/setup.sh
cmake --preset default >/dev/null
cmake --build build -j"$(nproc)"
ctest --test-dir build --output-on-failure -j2
# ASan+UBSan and TSan builds of the emulator tests (build-asan, build-tsan;
# tests/emu/README.md "Sanitizers"); one line per sanitizer the compiler lacks.
bash scripts/emu_sanitizers.sh

set +e
python3 -m pytest -q tests/python
rc=$?
set -e
# pytest exits 5 when it collects nothing: fine only while tests/python holds no tests.
if [[ $rc -eq 5 ]] && ! compgen -G "tests/python/test_*.py" >/dev/null && ! compgen -G "tests/python/**/test_*.py" >/dev/null; then
  echo "test: no Python tests yet" >&2
  rc=0
fi
[[ $rc -eq 0 ]] || exit $rc

# Every chart and report regenerated from the JSON under results/ and from a
# fresh CPU quick sweep (issue 5): fails if any script fails.
bash scripts/regen_results.sh --sweep build/bin/attnbench

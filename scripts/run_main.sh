#!/usr/bin/env bash
# The main job (README): setup (scripts/setup.sh --for main), configure the default preset and
# build only the attnbench executable (and its CUDA module when nvcc is found and a GPU is
# visible), run the quick sweep on the best backend present, write
#   results/<device-slug>/quick-<shortcommit>.json (+ .log.jsonl)
# and, when the chart script is present, charts and report.md beside it in
#   results/<device-slug>/quick-<shortcommit>/.
# A killed run continues where it stopped when started again (its results log
# is there but not its final JSON); a finished one is measured afresh.
# When PyTorch is importable, scripts/peers.py then runs the library peers (PyTorch
# SDPA, FlexAttention, ...) on the sweep's problems into quick-<shortcommit>.peers.json,
# and `attnbench merge` folds them into quick-<shortcommit>.json, so the charts and
# report show them beside attnbench's variants.
# Environment: ATTNBENCH_PRESET (default quick), ATTNBENCH_BACKEND (auto|cpu|cuda, default auto),
# ATTNBENCH_PEERS (auto|0, default auto: run the peers when torch imports), ATTNBENCH_PEERS_ARGS
# (extra scripts/peers.py arguments), ATTNBENCH_BUILD_LOCK (a file to flock around configure and build).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

t_start=$(date +%s)
bash scripts/setup.sh --for main --only system
mkdir -p build
# numpy, matplotlib and torch (~2 min on a fresh machine) install while the build runs; the
# sweep starts only when they are done, so nothing else runs while it measures.
bash scripts/setup.sh --for main --only python >build/run_main-setup-python.log 2>&1 &
python_setup=$!
build_lock=()  # machines where several jobs share one build folder: ATTNBENCH_BUILD_LOCK=/path/to/lockfile
[[ -n "${ATTNBENCH_BUILD_LOCK:-}" ]] && build_lock=(flock "$ATTNBENCH_BUILD_LOCK")
"${build_lock[@]}" cmake --preset default >build/run_main-configure.log 2>&1 ||
  { cat build/run_main-configure.log >&2; echo "run_main: error: configure failed" >&2; exit 1; }
# Only what this job runs: the executable, and the CUDA module when a GPU is visible (the tests,
# the emulator and the static checks are scripts/test.sh's).
targets=(attnbench)
if nvidia-smi -L >/dev/null 2>&1 && grep -q "attnbench_cuda" build/build.ninja 2>/dev/null; then
  targets+=(attnbench_cuda)
fi
echo "run_main: building ${targets[*]} (compiler output: build/run_main-build.log)" >&2
t0=$(date +%s)
"${build_lock[@]}" cmake --build build -j"$(nproc)" --target "${targets[@]}" >build/run_main-build.log 2>&1 ||
  { tail -n 40 build/run_main-build.log >&2; echo "run_main: error: the build failed (build/run_main-build.log)" >&2
    exit 1; }
echo "run_main: built in $(( $(date +%s) - t0 )) s" >&2
t0=$(date +%s)
if ! wait "$python_setup"; then
  cat build/run_main-setup-python.log >&2
  echo "run_main: error: installing the Python packages failed (scripts/setup.sh --for main --only python)" >&2
  exit 1
fi
(( $(date +%s) - t0 > 1 )) && echo "run_main: waited $(( $(date +%s) - t0 )) s for the Python packages" >&2
bin="$repo/build/bin/attnbench"

# `attnbench backend` prints "<backend> <device-slug>" (cuda only when a device is usable).
read -r backend device < <("$bin" backend --backend "${ATTNBENCH_BACKEND:-auto}") || true
[[ -n "${backend:-}" && -n "${device:-}" ]] || { echo "run_main: error: cannot pick a backend" >&2; exit 1; }
preset="${ATTNBENCH_PRESET:-quick}"
commit="$(git rev-parse --short=7 HEAD 2>/dev/null || echo unknown)"
out="results/$device/$preset-$commit.json"
resume=()
[[ -f "$out.log.jsonl" && ! -f "$out" ]] && resume=(--resume)
echo "run_main: $preset sweep on $backend ($device) -> $out" >&2

start=$(date +%s)
ATTNBENCH_BIN="$bin" bash scripts/resume_sweep.sh --preset "$preset" --backend "$backend" --out "$out" "${resume[@]}"
echo "run_main: sweep took $(( $(date +%s) - start )) s" >&2

peers_failed=0
if [[ "${ATTNBENCH_PEERS:-auto}" != 0 ]]; then
  if python3 -c "import torch" 2>/dev/null; then
    peers="${out%.json}.peers.json"
    start=$(date +%s)
    # shellcheck disable=SC2086
    if python3 scripts/peers.py --problems "$out" --out "$peers" ${ATTNBENCH_PEERS_ARGS:-}; then
      "$bin" merge "$out" "$peers" --out "$out"
      echo "run_main: peers took $(( $(date +%s) - start )) s; merged into $out" >&2
    else
      peers_failed=1
      echo "run_main: error: scripts/peers.py failed; the report shows attnbench's entries only" >&2
    fi
  else
    echo "run_main: note: torch not importable; no library peers (scripts/setup.sh installs it)" >&2
  fi
fi

if [[ -f scripts/attnbench_report.py ]]; then
  python3 scripts/attnbench_report.py report "$out" --out "${out%.json}"
  echo "run_main: charts and report in ${out%.json}/" >&2
fi
echo "run_main: results in $out ($(( $(date +%s) - t_start )) s in all)" >&2
exit "$peers_failed"

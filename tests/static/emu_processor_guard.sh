#!/usr/bin/env bash
# emu_processor_guard.sh SOURCE WORK: see tests/build_guards.cmake.
set -uo pipefail
src="$1"; work="$2"
fail() { echo "FAIL: $*"; exit 1; }
configure() {  # PROCESSOR [CMAKE ARGS]: configure a CPU-only scratch build, print its tests and targets
  local dir="$work/$1"
  rm -rf "$dir"; mkdir -p "$work"
  cmake -S "$src" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DATTNBENCH_CUDA=OFF \
        -DATTNBENCH_EMU_PROCESSOR="$1" "${@:2}" >"$dir.log" 2>&1 || fail "configure for $1 failed: $(tail -n 5 "$dir.log")"
  ctest --test-dir "$dir" -N >"$dir.tests" 2>&1
  cmake --build "$dir" --target help >"$dir.targets" 2>&1
}
configure aarch64
grep -q "host emulator tests left out: the fiber runtime needs x86-64, this is aarch64" "$work/aarch64.log" ||
  fail "aarch64: no configure message saying the emulator is left out"
! grep -q " emu\." "$work/aarch64.tests" || fail "aarch64: emu.* tests registered: $(grep -m3 ' emu\.' "$work/aarch64.tests")"
! grep -q "attnbench_emu" "$work/aarch64.targets" || fail "aarch64: emulator targets defined"
for t in attnbench attnbench_tests; do grep -q "^$t:" "$work/aarch64.targets" || fail "aarch64: no target $t"; done
grep -q " cli_" "$work/aarch64.tests" || fail "aarch64: the cli tests are gone too"
# Control: the same configure on x86-64 has them. It also carries the control of
# static.emu_covers_cuda_sources: a product CUDA source that no emulator target compiles.
configure x86_64 -DATTNBENCH_EMU_COVERAGE_PROBE=kernels/cuda/probe/not_emulated.cu
grep -q " emu\.flash3_main" "$work/x86_64.tests" || fail "control: x86_64 has no emu.flash3_main"
grep -q "attnbench_emu_base" "$work/x86_64.targets" || fail "control: x86_64 has no emulator targets"
[[ "$(cat "$work/x86_64/emu_uncovered_sources.txt")" == "kernels/cuda/probe/not_emulated.cu" ]] ||
  fail "control: the coverage list does not name exactly the probe: $(cat "$work/x86_64/emu_uncovered_sources.txt")"
echo "ok: aarch64 builds the product and $(grep -c ' Test ' "$work/aarch64.tests") tests without the emulator; x86_64 has $(grep -c ' emu\.' "$work/x86_64.tests") emu tests; the coverage list names the probe"

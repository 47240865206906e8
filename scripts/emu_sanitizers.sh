#!/usr/bin/env bash
# Sanitizer builds of the host-emulator tests (tests/emu/README.md
# "Sanitizers"); scripts/test.sh runs `tsan` after ctest. The default preset
# already builds the emulator targets with ASan+UBSan (CMakePresets.json), so
# its ctest is the asan step; `asan` here is a separate CPU-only build of it.
#   asan: AddressSanitizer + UndefinedBehaviorSanitizer (+ LeakSanitizer), build-asan
#   tsan: ThreadSanitizer, build-tsan (fiber-aware: races between the CUDA
#         threads of a CTA, synchronised only at __syncthreads/__syncwarp)
# Each: a CPU-only configure with ATTNBENCH_EMU_SANITIZE (the flags go to the
# emulator targets only), a build of the emulator targets only, then
# `ctest -R '^emu\.' -E '^emu\.neg\.'` (the negative controls belong to the
# normal build; these builds add sanitizer controls, emu.{asan,ubsan,tsan}.*,
# that must report their planted defect). Any sanitizer report fails its test
# (halt_on_error, -fno-sanitize-recover=all, leaks at exit), and any failed
# test makes this script exit non-zero. A sanitizer the C++ compiler cannot
# build and run is skipped with one line.
# Budget cut: `tsan` leaves out the tests labelled tsan_full (emu.flash2_bwd_deterministic, emu.unfused,
# emu.flash1, emu.reference: ~12 more minutes on 2 cores); `tsan-all` runs them.
#
#   bash scripts/emu_sanitizers.sh [asan] [tsan|tsan-all]     (default: tsan)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

cxx="${CXX:-c++}"
jobs="$(nproc)"
steps=("$@")
((${#steps[@]})) || steps=(tsan)

# Can the compiler build and run a program with these sanitizers (and, for
# TSan, the fiber interface the emulator uses)?
supports() {
  local san="$1" d rc=0
  d="$(mktemp -d)"
  if [[ "$san" == thread ]]; then
    cat >"$d/t.cpp" <<'EOF'
#include <sanitizer/tsan_interface.h>
int main() {
  void* self = __tsan_get_current_fiber();
  void* f = __tsan_create_fiber(0);
  __tsan_switch_to_fiber(f, __tsan_switch_to_fiber_no_sync);
  __tsan_switch_to_fiber(self, __tsan_switch_to_fiber_no_sync);
  __tsan_destroy_fiber(f);
  return 0;
}
EOF
  else
    cat >"$d/t.cpp" <<'EOF'
#include <sanitizer/common_interface_defs.h>
int main() { return 0; }
EOF
  fi
  "$cxx" -std=c++20 -fsanitize="$san" "$d/t.cpp" -o "$d/t" >/dev/null 2>&1 && "$d/t" >/dev/null 2>&1 || rc=1
  rm -rf "$d"
  return $rc
}

summary=()
run_step() {
  local name="$1" san="$2" dir="build-$3" select="$4"
  shift 4
  if ! supports "$san"; then
    echo "emu sanitizers: $name skipped: $cxx cannot build and run -fsanitize=$san"
    summary+=("$name skipped")
    return 0
  fi
  local gen=()
  [[ -f "$dir/CMakeCache.txt" ]] || { command -v ninja >/dev/null && gen=(-G Ninja); }
  local t0=$SECONDS
  cmake -S . -B "$dir" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DATTNBENCH_CUDA=OFF \
        -DATTNBENCH_EMU_SANITIZE="$san" >/dev/null
  cmake --build "$dir" -j"$jobs" --target "$@"
  local t1=$SECONDS
  # shellcheck disable=SC2086  # $select: extra ctest options, word-split on purpose
  ctest --test-dir "$dir" -R '^emu\.' -E '^emu\.neg\.' $select --output-on-failure -j2
  local t2=$SECONDS
  echo "emu sanitizers: $name (-fsanitize=$san): configure+build $((t1 - t0)) s, tests $((t2 - t1)) s"
  summary+=("$name build $((t1 - t0)) s + tests $((t2 - t1)) s")
}

# attnbench_emu_checks (tests/emu.cmake): every emulator executable but the mutants.
targets=(attnbench_emu_checks)
for s in "${steps[@]}"; do
  case "$s" in
    asan) run_step asan address,undefined asan "" "${targets[@]}" ;;
    tsan) run_step tsan thread tsan "-LE tsan_full" "${targets[@]}" ;;
    tsan-all) run_step tsan-all thread tsan "" "${targets[@]}" ;;
    *) echo "usage: $0 [asan] [tsan|tsan-all]" >&2; exit 2 ;;
  esac
done
joined="$(printf '%s; ' "${summary[@]}")"
echo "emu sanitizers: done, no reports (${joined%; })"

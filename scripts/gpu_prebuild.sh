#!/usr/bin/env bash
# Step 0 of the GPU check (docs/gpu.md), on the build machine, before the device is lent:
# builds what scripts/gpu_check.sh runs, for the GPU's architecture, runs the static kernel
# checks (ptxas spills, shared memory, HMMA in SASS: no GPU needed, so no device time), and
# packs stripped binaries into .prebuilt/attnbench-gpu.tar.gz (git-ignored), which
# gpu_check.sh tries first and builds only when they do not run there.
#
#   scripts/gpu_prebuild.sh [BUILD_DIR]     # default build-gpu-prebuilt
#
# The tarball holds bin/{attnbench, libattnbench_cuda.so, libattnbench_cudnn.so,
# attnbench_gpu_tests}, kernel_resources.json, static.log, commit.txt (the commit, then
# "dirty" when the tree had changes) and build.txt. It prints its size beside the tree's and
# .debs/root's: all three travel to the GPU machine within 64 MiB (device tool `carry`).
# Environment: GPU_PREBUILD_ARCHS (CUDA architectures, default 90: the H200; "80;90" adds A100).
# Exit: 0 packed; 1 a build or static check failed (nothing packed).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build-gpu-prebuilt}"
archs="${GPU_PREBUILD_ARCHS:-90}"
t0=$(date +%s)
mkdir -p "$build"
say() { echo "gpu_prebuild [$(( $(date +%s) - t0 ))s] $*" >&2; }
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DATTNBENCH_CUDA=ON \
  "-DCMAKE_CUDA_ARCHITECTURES=$archs" >"$build/prebuild.configure.log" 2>&1 ||
  { tail -20 "$build/prebuild.configure.log" >&2; exit 1; }
say "configured $build (architectures $archs)"
cmake --build "$build" -j "$(nproc)" --target attnbench attnbench_cuda attnbench_gpu_tests kernel_resources >"$build/prebuild.build.log" 2>&1 ||
  { tail -30 "$build/prebuild.build.log" >&2; exit 1; }
say "built"
if ! ctest --test-dir "$build" -L static --output-on-failure >"$build/static.log" 2>&1; then
  tail -30 "$build/static.log" >&2
  say "static checks failed: nothing packed"
  exit 1
fi
say "static checks: $(grep -E 'tests passed' "$build/static.log")"

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin"
for f in attnbench libattnbench_cuda.so libattnbench_cudnn.so attnbench_gpu_tests; do
  [[ -f "$build/bin/$f" ]] || { [[ $f == libattnbench_cudnn.so ]] && continue; echo "no $build/bin/$f" >&2; exit 1; }
  strip -o "$stage/bin/$f" "$build/bin/$f"  # .dynsym stays: the modules still resolve against attnbench
done
cp "$build/kernel_resources.json" "$build/static.log" "$stage/"
git -C "$root" rev-parse HEAD >"$stage/commit.txt" 2>/dev/null || echo unknown >"$stage/commit.txt"
if [[ -n "$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null)" ]]; then echo dirty >>"$stage/commit.txt"; fi
{
  echo "built $(date -u +%FT%TZ) on $(uname -n): $(uname -sr), $(ldd --version | head -1)"
  grep -E "CUDA backend|cudnn_sdpa row" "$build/prebuild.configure.log" | sed 's/^-- //'
} >"$stage/build.txt"
mkdir -p "$root/.prebuilt"
tar -czf "$root/.prebuilt/attnbench-gpu.tar.gz" -C "$stage" .
tar_b=$(stat -c %s "$root/.prebuilt/attnbench-gpu.tar.gz")
tree_b=$(git -C "$root" ls-files -z | (cd "$root" && xargs -0 stat -c %s 2>/dev/null) | awk '{s += $1} END {print s + 0}')
debs=".debs/root.tgz"  # fetch_debs.sh writes it; gpu_check.sh unpacks it where .debs/root is absent
[[ -f "$root/$debs" ]] || debs=".debs/root"
debs_b=$( (du -sb "$root/$debs" 2>/dev/null || true) | awk '{print $1}'); debs_b=${debs_b:-0}
total=$(( tar_b + tree_b + debs_b ))
mib() { awk -v b="$1" 'BEGIN {printf "%.1f MiB", b / 1048576}'; }
say "packed .prebuilt/attnbench-gpu.tar.gz: $(mib "$tar_b"); tree $(mib "$tree_b") + $debs $(mib "$debs_b") + it = $(mib "$total") of the 64 MiB that travel (carry [\"$debs\", \".prebuilt\"])"
(( total <= 64 * 1048576 )) || say "warning: over 64 MiB: rerun scripts/fetch_debs.sh for .debs/root.tgz, or carry .prebuilt alone (no fallback build)"

#!/usr/bin/env bash
# The same sweep with several builds of attnbench in one device call (docs/gpu.md "Comparing
# builds"), so that their times come from one machine in one session: a change to a kernel is
# measured against the build before it, not against another day's run.
#
#   GPU_COMPARE_ARGS="--variant flash2 --pass bwd --dtype bf16 --seq 8192" \
#     scripts/gpu_compare.sh OUT_DIR NAME=TARBALL [NAME=TARBALL ...]
#
# Each TARBALL is packed as scripts/gpu_prebuild.sh packs one (bin/attnbench and its modules).
# The sweeps run in turn, each under `timeout` GPU_COMPARE_S (default 120) and the shared
# deadline GPU_COMPARE_BUDGET_S (default 300), into OUT_DIR/NAME.json (the results log beside it
# is read when a sweep is cut off); then OUT_DIR/compare.txt, printed last: per entry, each
# build's median time, TFLOP/s and error (scripts/gpu_check_summary.py --compare).
# Run it after scripts/gpu_check.sh in the same call, or alone: the environment is the same
# (scripts/gpu_env.sh). Exit: 0 every sweep ran; 1 one failed or was cut off; 2 bad arguments.
set -uo pipefail
if [[ $# -lt 2 ]]; then
  echo "usage: GPU_COMPARE_ARGS=\"sweep arguments\" scripts/gpu_compare.sh OUT_DIR NAME=TARBALL..." >&2
  exit 2
fi
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mkdir -p "$1" || exit 2
out="$(cd "$1" && pwd)"
shift
t_start=$(date +%s)
deadline=$(( t_start + ${GPU_COMPARE_BUDGET_S:-300} ))
# shellcheck source=scripts/gpu_env.sh
source "$root/scripts/gpu_env.sh"
gpu_env_setup "$root" "$out"
gpu_env_add_toolkit
read -r -a args <<< "${GPU_COMPARE_ARGS:---variant flash2 --pass bwd --dtype bf16 --seq 8192}"
rc=0 pairs=()
for spec in "$@"; do
  name="${spec%%=*}" tarball="${spec#*=}"
  if [[ "$name" == "$spec" || ! "$name" =~ ^[A-Za-z0-9_.-]+$ || ! -f "$tarball" ]]; then
    echo "gpu_compare: error: '$spec' is not NAME=TARBALL with an existing tarball" >&2
    exit 2
  fi
  dir="$out/bin-$name"
  rm -rf "$dir" && mkdir -p "$dir" && tar -xzf "$tarball" -C "$dir" || { rc=1; continue; }
  left=$(( deadline - $(date +%s) ))
  limit=${GPU_COMPARE_S:-120}
  (( left < limit )) && limit=$left
  if (( limit <= 0 )); then
    echo "gpu_compare: $name not run: the budget is spent" >&2
    rc=1
    continue
  fi
  echo "gpu_compare [$(( $(date +%s) - t_start ))s] $name ($(head -1 "$dir/commit.txt" 2>/dev/null | head -c 12)): ${args[*]}" >&2
  timeout "$limit" "$dir/bin/attnbench" sweep --backend cuda "${args[@]}" --out "$out/$name.json" \
    > "$out/$name.log" 2>&1 || rc=1
  pairs+=("$name=$out/$name.json")
done
python3 "$root/scripts/gpu_check_summary.py" --compare "${pairs[@]}" > "$out/compare.txt" 2>&1 || rc=1
cat "$out/compare.txt"
exit $rc

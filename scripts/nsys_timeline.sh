#!/usr/bin/env bash
# One Nsight Systems timeline of a short attnbench sweep, with its NVTX ranges
# (docs/profiling.md).
#
#   scripts/nsys_timeline.sh [--dry-run] [--filter REGEX] [OUT] [--] [extra attnbench args...]
#
# Runs `attnbench sweep --profile --filter REGEX` under
# `nsys profile --trace=cuda,nvtx,cublas`: each configuration runs once after
# warm-up inside an NVTX range (domain "attnbench") named like the benchmark, so
# the timeline shows one labelled launch (set) per configuration, cuBLAS calls
# included. REGEX defaults to '/Nq:1024/Nkv:1024/' (a short sweep).
# Writes OUT.nsys-rep; OUT defaults to out/nsys/timeline.
#
# Options:
#   --dry-run        print the command line and how to open the report, run nothing
#   --filter REGEX   attnbench --filter (benchmark-name regex)
#   -h, --help
# Environment: NSYS (nsys), ATTNBENCH_BIN (build/bin/attnbench).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
NSYS="${NSYS:-nsys}"
BIN="${ATTNBENCH_BIN:-$root/build/bin/attnbench}"

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'; }
die() { echo "nsys_timeline: error: $*" >&2; exit 2; }

show() {
  local words=() a
  for a in "$@"; do
    if [[ "$a" =~ ^[A-Za-z0-9_./:=,@%+-]+$ ]]; then words+=("$a")
    else words+=("'${a//\'/\'\\\'\'}'"); fi
  done
  echo "${words[*]}"
}

dry=0 filter='/Nq:1024/Nkv:1024/' pos=() extra=()
while (($#)); do
  case "$1" in
    --dry-run) dry=1 ;;
    --filter) (($# >= 2)) || die "--filter needs a regex"; filter="$2"; shift ;;
    --filter=*) filter="${1#*=}" ;;
    -h|--help) usage; exit 0 ;;
    --) shift; extra+=("$@"); break ;;
    -*) extra+=("$@"); break ;;
    *) if ((${#pos[@]} < 1)); then pos+=("$1"); else extra+=("$@"); break; fi ;;
  esac
  shift
done
out="${pos[0]:-out/nsys/timeline}"

# shellcheck disable=SC2054  # the commas belong to --trace
cmd=("$NSYS" profile --trace=cuda,nvtx,cublas --force-overwrite=true --output="$out"
  "$BIN" sweep --profile --filter "$filter" "${extra[@]}")

how_to_open() {
  echo "open:   nsys-ui $(show "$out.nsys-rep")   (Nsight Systems GUI; copy the file to a desktop if this box has none)"
  echo "stats:  $(show "$NSYS" stats --report nvtx_sum,nvtx_kern_sum,cuda_gpu_kern_sum "$out.nsys-rep")"
  echo "        (nsys before 2023 names these reports nvtxsum, gpukernsum)"
}

if ((dry)); then
  show "${cmd[@]}"
  how_to_open
  exit 0
fi

command -v "$NSYS" >/dev/null || die "$NSYS not found: Nsight Systems is not installed here (or set NSYS=/path/to/nsys).
  On a machine without nsys, profile kernels with Nsight Compute instead: scripts/profile_ncu.sh FILTER
  (docs/profiling.md). This script's command line: $(show "${cmd[@]}")"
[[ -x "$BIN" ]] || die "$BIN not found: build first, or set ATTNBENCH_BIN"
mkdir -p "$(dirname "$out")"
echo "+ $(show "${cmd[@]}")" >&2
"${cmd[@]}"
how_to_open

#!/usr/bin/env bash
# Profile the attnbench configurations whose names match FILTER with Nsight Compute
# and export the roofline metrics as CSV (docs/profiling.md).
#
#   scripts/profile_ncu.sh [options] FILTER [OUT_PREFIX] [--] [extra attnbench args...]
#
# FILTER is attnbench's --filter regex (searched in the benchmark name, e.g.
# 'flash2/cuda/bf16/B:1/H:8/Hkv:8/Nq:1024/Nkv:1024/d:64/mask:causal/Br:128/Bc:64').
# The harness runs each matching configuration once after warm-up inside an NVTX
# push/pop range of domain "attnbench" named exactly like the benchmark; ncu
# profiles the kernels inside attnbench ranges ("regex:attnbench@.+/"), so the
# profiled kernels are those of FILTER's configurations and nothing else (no
# warm-up, no reference check). ncu_merge.py joins them back by range name.
#
# Writes OUT_PREFIX.ncu-rep (open with ncu-ui) and OUT_PREFIX.csv (--csv --page raw);
# with --json BENCH.json also OUT_PREFIX.merged.json (scripts/ncu_merge.py).
# OUT_PREFIX defaults to out/ncu/profile.
#
# Options:
#   --dry-run            print the command lines, run nothing
#   --json FILE          merge the CSV into FILE (the sweep JSON the odd point came from);
#                        without extra attnbench args, the sweep's preset and axes are
#                        taken from FILE's context.command_line so FILTER finds the
#                        same configurations (scripts/abnsight/sweep_args.py)
#   --metrics-query FILE saved `ncu --query-metrics` output to check metrics against
#                        (default: ask ncu on this machine; the dry run checks nothing
#                        without this)
#   --nvtx-filter        also put FILTER into ncu's NVTX filter (regex:attnbench@.*(FILTER).*/
#                        with / , @ escaped); belt and braces, not needed with attnbench's own filter
#   --sections LIST      also collect these ncu sections (comma-separated identifiers, e.g.
#                        SpeedOfLight,ComputeWorkloadAnalysis,MemoryWorkloadAnalysis,WarpStateStats:
#                        what bounds a kernel) and write OUT_PREFIX.details.csv (--page details)
#   --kernel-regex R     profile only the kernels whose names match R (ncu --kernel-name regex:R)
#                        inside the ranges, e.g. a backward's main kernel without its forward
#   -h, --help
# Environment: NCU (ncu), ATTNBENCH_BIN (build/bin/attnbench), PYTHON (python3).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
NCU="${NCU:-ncu}"
BIN="${ATTNBENCH_BIN:-$root/build/bin/attnbench}"
PY="${PYTHON:-python3}"
DOMAIN=attnbench

# The roofline metric list (docs/profiling.md explains each).
METRICS=(
  dram__bytes_read.sum
  dram__bytes_write.sum
  lts__t_bytes.sum
  gpu__time_duration.sum
  sm__sass_thread_inst_executed_op_fadd_pred_on.sum
  sm__sass_thread_inst_executed_op_fmul_pred_on.sum
  sm__sass_thread_inst_executed_op_ffma_pred_on.sum
  sm__sass_thread_inst_executed_op_hadd_pred_on.sum
  sm__sass_thread_inst_executed_op_hmul_pred_on.sum
  sm__sass_thread_inst_executed_op_hfma_pred_on.sum
  sm__inst_executed_pipe_tensor.sum
)
# Used in place of sm__inst_executed_pipe_tensor.sum where a GPU lacks it:
# per-op tensor-pipe counters (hmma: mma.sync; gmma: Hopper wgmma).
TENSOR_FALLBACKS=(sm__inst_executed_pipe_tensor_op_hmma.sum sm__inst_executed_pipe_tensor_op_gmma.sum)

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'; }
die() { echo "profile_ncu: error: $*" >&2; exit 2; }
warn() { echo "profile_ncu: warning: $*" >&2; }

# Print a command line so that a shell reads it back as the same words.
show() {
  local words=() a
  for a in "$@"; do
    if [[ "$a" =~ ^[A-Za-z0-9_./:=,@%+-]+$ ]]; then words+=("$a")
    else words+=("'${a//\'/\'\\\'\'}'"); fi
  done
  echo "${words[*]}"
}

dry=0 json="" query_file="" nvtx_filter=0 sections="" kernel_regex="" pos=() extra=()
while (($#)); do
  case "$1" in
    --dry-run) dry=1 ;;
    --json) (($# >= 2)) || die "--json needs a file"; json="$2"; shift ;;
    --json=*) json="${1#*=}" ;;
    --metrics-query) (($# >= 2)) || die "--metrics-query needs a file"; query_file="$2"; shift ;;
    --metrics-query=*) query_file="${1#*=}" ;;
    --nvtx-filter) nvtx_filter=1 ;;
    --sections) (($# >= 2)) || die "--sections needs a list"; sections="$2"; shift ;;
    --sections=*) sections="${1#*=}" ;;
    --kernel-regex) (($# >= 2)) || die "--kernel-regex needs a regex"; kernel_regex="$2"; shift ;;
    --kernel-regex=*) kernel_regex="${1#*=}" ;;
    -h|--help) usage; exit 0 ;;
    --) shift; extra+=("$@"); break ;;
    -*) if ((${#pos[@]} >= 1)); then extra+=("$@"); break; fi
        die "unknown option $1 (FILTER comes first; attnbench options after it)" ;;
    *) if ((${#pos[@]} < 2)); then pos+=("$1"); else extra+=("$@"); break; fi ;;
  esac
  shift
done
((${#pos[@]} >= 1)) || { usage >&2; exit 2; }
filter="${pos[0]}"
out="${pos[1]:-out/ncu/profile}"
[[ -n "$filter" ]] || die "FILTER is empty"

# The configuration must be in the sweep that `attnbench sweep` expands: reuse the
# preset and axes of the run the JSON came from unless attnbench args were given.
if [[ -n "$json" && ${#extra[@]} -eq 0 ]]; then
  [[ -r "$json" ]] || die "cannot read $json"
  if sweep_words="$("$PY" "$here/abnsight/sweep_args.py" "$json")"; then
    [[ -n "$sweep_words" ]] && mapfile -t extra <<<"$sweep_words"
    ((${#extra[@]})) && echo "# sweep arguments from $json: $(show "${extra[@]}")"
  else
    warn "could not read the sweep arguments of $json; using attnbench's default sweep"
  fi
fi

# --- metric availability ---------------------------------------------------
# `ncu --query-metrics` lists base names (dram__bytes_read); a metric we ask for
# is base + rollup (dram__bytes_read.sum). Missing ones are dropped with a warning.
query=""
if [[ -n "$query_file" ]]; then
  [[ -r "$query_file" ]] || die "cannot read $query_file"
  query="$(cat "$query_file")"
elif ((!dry)); then
  command -v "$NCU" >/dev/null || die "$NCU not found: Nsight Compute's ncu must be on PATH (or set NCU=/path/to/ncu)"
  if ! query="$("$NCU" --query-metrics 2>&1)" || ! grep -q '__' <<<"$query"; then
    warn "could not list metrics with '$NCU --query-metrics' (${query%%$'\n'*}); requesting all of them"
    query=""
  fi
fi
has_metric() {  # $1 = metric with rollup; true when the query lists its base name
  local base="${1%%.*}"
  grep -qE "^[[:space:]]*${base}([[:space:]]|\.|$)" <<<"$query"
}
metrics=()
if [[ -n "$query" ]]; then
  for m in "${METRICS[@]}"; do
    if has_metric "$m"; then metrics+=("$m"); continue; fi
    if [[ "$m" == sm__inst_executed_pipe_tensor.sum ]]; then
      alt=()
      for f in "${TENSOR_FALLBACKS[@]}"; do has_metric "$f" && alt+=("$f"); done
      if ((${#alt[@]})); then
        warn "$m is not available on this GPU; using ${alt[*]}"
        metrics+=("${alt[@]}"); continue
      fi
    fi
    warn "$m is not available on this GPU; dropped (ncu_merge.py leaves out what depends on it)"
  done
  ((${#metrics[@]})) || die "none of the metrics is available on this GPU (see ncu --query-metrics)"
else
  metrics=("${METRICS[@]}")
  ((dry)) && echo "# metric availability not checked (dry run without --metrics-query); a real run asks '$NCU --query-metrics'"
fi
metric_list="$(IFS=,; echo "${metrics[*]}")"

# --- NVTX filter -------------------------------------------------------------
if ((nvtx_filter)); then
  # ncu treats / , @ as range, start/end and domain delimiters: escape them.
  # shellcheck disable=SC2001  # a character class; bash's & in ${//} needs bash 5.2
  escaped="$(sed -e 's|[/,@]|\\&|g' <<<"$filter")"
  nvtx_include="regex:${DOMAIN}@.*(${escaped}).*/"
else
  nvtx_include="regex:${DOMAIN}@.+/"
fi

section_args=()
if [[ -n "$sections" ]]; then
  IFS=, read -r -a section_list <<<"$sections"
  for x in "${section_list[@]}"; do
    [[ "$x" =~ ^[A-Za-z0-9_]+$ ]] || die "--sections: '$x' is not an ncu section identifier (ncu --list-sections)"
    section_args+=(--section "$x")
  done
fi
kernel_args=()
[[ -n "$kernel_regex" ]] && kernel_args=(--kernel-name "regex:$kernel_regex")
profile_cmd=("$NCU" --nvtx --nvtx-include "$nvtx_include" "${kernel_args[@]}"
  --clock-control none --cache-control all
  --metrics "$metric_list" "${section_args[@]}"
  --force-overwrite --export "$out"
  "$BIN" sweep --profile --filter "$filter" "${extra[@]}")
export_cmd=("$NCU" --import "$out.ncu-rep" --csv --page raw --print-units base)
details_cmd=("$NCU" --import "$out.ncu-rep" --csv --page details --print-units base)
merge_cmd=("$PY" "$here/ncu_merge.py" --json "$json" --csv "$out.csv" --out "$out.merged.json")

if ((dry)); then
  show "${profile_cmd[@]}"
  echo "$(show "${export_cmd[@]}") > $(show "$out.csv")"
  [[ -n "$sections" ]] && echo "$(show "${details_cmd[@]}") > $(show "$out.details.csv")"
  [[ -n "$json" ]] && show "${merge_cmd[@]}"
  exit 0
fi

command -v "$NCU" >/dev/null || die "$NCU not found: Nsight Compute's ncu must be on PATH (or set NCU=/path/to/ncu)"
[[ -x "$BIN" ]] || die "$BIN not found: build first (cmake --preset ... && cmake --build build), or set ATTNBENCH_BIN"
[[ -z "$json" || -r "$json" ]] || die "cannot read $json"
mkdir -p "$(dirname "$out")"

echo "+ $(show "${profile_cmd[@]}")" >&2
"${profile_cmd[@]}"
echo "+ $(show "${export_cmd[@]}") > $(show "$out.csv")" >&2
"${export_cmd[@]}" > "$out.csv"
if [[ -n "$sections" ]]; then
  echo "+ $(show "${details_cmd[@]}") > $(show "$out.details.csv")" >&2
  "${details_cmd[@]}" > "$out.details.csv"
fi

kernels=$(($(grep -c '^"' "$out.csv" || true) - 2))
if ((kernels <= 0)); then
  hint=""; ((nvtx_filter)) && hint=", and try without --nvtx-filter"
  die "ncu profiled no kernel: check that FILTER matches a configuration, and that this build emits NVTX ranges (CUDA build)$hint"
fi
echo "profile_ncu: $kernels kernel(s) profiled" >&2
echo "report: $out.ncu-rep   (ncu-ui $out.ncu-rep)"
echo "csv:    $out.csv"
[[ -n "$sections" ]] && echo "details: $out.details.csv"
if [[ -n "$json" ]]; then
  echo "+ $(show "${merge_cmd[@]}")" >&2
  "${merge_cmd[@]}"
  echo "merged: $out.merged.json"
  echo "next:   $(show "$PY" "$here/attnbench_report.py" roofline --out "$out" "$out.merged.json")"
else
  echo "next:   $(show "$PY" "$here/ncu_merge.py" --json BENCH.json --csv "$out.csv" --out "$out.merged.json")"
fi

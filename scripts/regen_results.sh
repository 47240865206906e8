#!/usr/bin/env bash
# Regenerates every chart and report from every attnbench JSON under results/ (not the
# ceilings.json and kernel_resources.json a GPU check's folder keeps beside them) into
# build/report-check/<same relative path, without .json>/ (report.md + PNG + SVG),
# and fails (status 1) if any report fails; each failure is named on stderr.
#
#   scripts/regen_results.sh                 # results/ only
#   scripts/regen_results.sh --sweep BIN     # also a fresh CPU quick sweep with BIN
#                                            # (e.g. build/bin/attnbench), reported into
#                                            # build/report-check/fresh-cpu-quick/
#
# Environment: ATTNBENCH_RESULTS_DIR (default <repo>/results),
# ATTNBENCH_REPORT_CHECK_DIR (default <repo>/build/report-check), PYTHON (default python3).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
results="${ATTNBENCH_RESULTS_DIR:-$repo/results}"
out_root="${ATTNBENCH_REPORT_CHECK_DIR:-$repo/build/report-check}"
py="${PYTHON:-python3}"
report=("$py" "$repo/scripts/attnbench_report.py")

sweep_bin=""
while (($#)); do
  case "$1" in
    --sweep) sweep_bin="${2:?--sweep needs the attnbench binary}"; shift 2 ;;
    -h|--help) sed -n '2,13p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "regen_results: error: unknown argument '$1'" >&2; exit 2 ;;
  esac
done

failed=0
count=0
run_report() {  # $1 = JSON, $2 = output folder
  count=$((count + 1))
  rm -rf "$2"
  if "${report[@]}" report "$1" --out "$2" >/dev/null; then
    echo "regen_results: ok $1 -> $2/report.md"
  else
    echo "regen_results: FAILED $1" >&2
    failed=$((failed + 1))
  fi
}

if [[ -d "$results" ]]; then
  while IFS= read -r -d '' f; do
    rel="${f#"$results"/}"
    # A GPU check's folder also keeps its ceilings and kernel resources (other formats:
    # "ceilings" or "kernels" at the top, no "benchmarks"); any other JSON must report.
    if "$py" -c 'import json, sys; d = json.load(open(sys.argv[1]))
sys.exit(0 if isinstance(d, dict) and "benchmarks" not in d and ("ceilings" in d or "kernels" in d) else 1)' "$f" 2>/dev/null; then
      echo "regen_results: not a results file: $f"
      continue
    fi
    run_report "$f" "$out_root/${rel%.json}"
  done < <(find "$results" -type f -name '*.json' -print0 | sort -z)
fi

if [[ -n "$sweep_bin" ]]; then
  fresh="$out_root/fresh-cpu-quick"
  mkdir -p "$out_root"
  rm -f "$fresh.json" "$fresh.json.log.jsonl"
  if "$sweep_bin" sweep --preset quick --backend cpu --out "$fresh.json" >/dev/null; then
    run_report "$fresh.json" "$fresh"
  else
    echo "regen_results: FAILED the CPU quick sweep ($sweep_bin)" >&2
    failed=$((failed + 1))
  fi
fi

if ((count == 0)); then
  echo "regen_results: no JSON under $results; nothing to regenerate"
fi
if ((failed)); then
  echo "regen_results: $failed of $count report(s) failed" >&2
  exit 1
fi
echo "regen_results: $count report(s) regenerated under $out_root"

#!/usr/bin/env bash
# Submits scripts/slurm/array.sbatch and scripts/slurm/merge.sbatch, the merge to start only
# when every array task ended well (afterok), and prints both job ids ("ARRAY MERGE").
#   bash scripts/slurm/submit.sh [sbatch options for both jobs, e.g. --partition=gpu]
# The array size follows ATTNBENCH_SHARDS (default 4); other settings: the ATTNBENCH_* variables
# at the top of array.sbatch.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
shards="${ATTNBENCH_SHARDS:-4}"
export ATTNBENCH_SHARDS="$shards"
# The scripts' #SBATCH --output goes to logs/ (Slurm does not create it), unless overridden.
[[ " $* " == *" --output"* || " $* " == *" -o "* ]] || mkdir -p logs
array=$(sbatch --parsable --array="0-$((shards - 1))" "$@" scripts/slurm/array.sbatch)
array="${array%%;*}"
merge=$(sbatch --parsable --dependency="afterok:$array" --kill-on-invalid-dep=yes "$@" scripts/slurm/merge.sbatch)
merge="${merge%%;*}"
echo "$array $merge"

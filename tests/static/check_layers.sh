#!/usr/bin/env bash
# The layer rule (docs/architecture.md): harness -> kernels -> core, never back.
#   core/     includes nothing from kernels/ or harness/
#   kernels/  includes nothing from harness/
# Usage: check_layers.sh [ROOT]   (default: the repository). Exit 1 naming every
# offending line; tests/layering.cmake also runs it on a planted violation.
set -euo pipefail
root="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
bad=0
check() {  # $1 = folder, $2 = regex of forbidden include prefixes
  [[ -d "$root/$1" ]] || return 0
  local hits
  hits=$(grep -rnE "^[[:space:]]*#[[:space:]]*include[[:space:]]*\"($2)/" "$root/$1" \
           --include='*.hpp' --include='*.cpp' --include='*.cuh' --include='*.cu' --include='*.h' || true)
  if [[ -n "$hits" ]]; then
    echo "check_layers: $1/ may not include $2/:" >&2
    echo "$hits" | sed "s#^$root/##" >&2
    bad=1
  fi
}
check core 'kernels|harness|benchmarks|tests'
check kernels 'harness|benchmarks|tests'
check harness 'benchmarks|tests'
[[ $bad -eq 0 ]] && echo "check_layers: ok (core <- kernels <- harness)"
exit $bad

#!/usr/bin/env bash
# clang-format over every C++/CUDA source of the tree (.clang-format, docs/style.md).
#   scripts/format.sh            reformat in place
#   scripts/format.sh --check    list the files that are not formatted; exit 1 if any (static.clang_format)
#   scripts/format.sh --verify   reformat, then prove no token changed: every reformatted file has
#                                the token sequence of its version in git HEAD (scripts/cxx_tokens.py)
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
mode="${1:-}"
[[ -z "$mode" || "$mode" == --check || "$mode" == --verify ]] ||
  { echo "format: error: unknown argument '$mode' (format.sh [--check|--verify])" >&2; exit 2; }
command -v clang-format >/dev/null || { echo "format: clang-format not found (scripts/setup.sh installs it)" >&2; exit 77; }
mapfile -t files < <(find benchmarks core harness kernels tests \
                       \( -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' -o -name '*.cuh' -o -name '*.h' \) \
                       -not -path '*/fixtures/*' | sort)
if [[ "$mode" == --check ]]; then
  bad=()
  for f in "${files[@]}"; do
    clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
  done
  if ((${#bad[@]})); then
    printf 'not formatted (run scripts/format.sh): %s\n' "${bad[@]}"
    exit 1
  fi
  echo "format: ${#files[@]} files formatted"
  exit 0
fi
clang-format -i "${files[@]}"
[[ "$mode" == --verify ]] || exit 0
# The token sequence (comments dropped, blanks only as separators) must not change.
code() { python3 "$root/scripts/cxx_tokens.py" /dev/stdin | cut -d' ' -f1; }
changed=0
while IFS= read -r f; do
  [[ "$(git show "HEAD:$f" | code)" == "$(code <"$f")" ]] || { echo "format: tokens changed in $f" >&2; changed=1; }
done < <(git diff --name-only -- "${files[@]}")
((changed == 0)) && echo "format: $(git diff --name-only -- "${files[@]}" | wc -l) files reformatted, no token changed"
exit $changed

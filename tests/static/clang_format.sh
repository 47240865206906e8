#!/usr/bin/env bash
# clang_format.sh SOURCE: every C++/CUDA source is formatted (scripts/format.sh --check); the
# control: a badly formatted file under the same .clang-format must be reported.
set -uo pipefail
src="$1"
command -v clang-format >/dev/null || { echo "skipped: clang-format not found"; exit 77; }
bash "$src/scripts/format.sh" --check || exit 1
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cp "$src/.clang-format" "$tmp/"
printf 'int  main( ){return 0;}\n' >"$tmp/control.cpp"
if (cd "$tmp" && clang-format --dry-run -Werror control.cpp >/dev/null 2>&1); then
  echo "FAIL: control: a badly formatted file passed the check"
  exit 1
fi
echo "ok: the control is reported"

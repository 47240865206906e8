#!/usr/bin/env bash
# mutations_survive_format.sh SOURCE WORK: see tests/build_guards.cmake.
# A copy of the tree with every kernel and emulator source reformatted in a style far from the
# project's (LLVM, 60 columns, Allman braces, spaces before parentheses) must configure with
# every negative control planted once (tests/emu/mutate.cmake) and each mutant the same code
# as in a configure of the tree itself; the control: the copy with one mutation site deleted
# must stop the configure naming that control.
set -uo pipefail
src="$1"; work="$2"
fail() { echo "FAIL: $*"; exit 1; }
command -v clang-format >/dev/null || { echo "skipped: clang-format not found"; exit 77; }
rm -rf "$work"; mkdir -p "$work"
tar -C "$src" --exclude='./build*' --exclude='./.git' --exclude='./results' --exclude='./.debs' \
    --exclude='./.prebuilt' -cf - . | tar -C "$work" -xf - && mkdir -p "$work/tree"
mv "$work"/* "$work/tree/" 2>/dev/null; mv "$work"/.[!.]* "$work/tree/" 2>/dev/null
tree="$work/tree"
mapfile -t files < <(cd "$tree" && find kernels tests/emu -name '*.cu' -o -name '*.cuh' -o -name '*.hpp' \
                     -o -name '*.cpp' -o -name '*.h')
# Include order and string literals kept: the two token changes a reformat can make (no
# mutation is in an #include or a string).
style='{BasedOnStyle: LLVM, ColumnLimit: 60, BreakBeforeBraces: Allman, SpaceBeforeParens: Always, SortIncludes: false,
       BreakStringLiterals: false}'
(cd "$tree" && clang-format -i --style="$style" "${files[@]}") || fail "clang-format failed"
cmp -s "$src/kernels/cuda/flash1/flash1.cu" "$tree/kernels/cuda/flash1/flash1.cu" &&
  fail "the reformat changed nothing (kernels/cuda/flash1/flash1.cu)"

configure() {  # NAME SOURCE: a CPU-only configure with the emulator and its controls
  cmake -S "$2" -B "$work/$1" -G Ninja -DCMAKE_BUILD_TYPE=Release -DATTNBENCH_CUDA=OFF >"$work/$1.log" 2>&1
}
configure formatted "$tree" || fail "configure of the reformatted tree failed: $(grep -A4 'Error' "$work/formatted.log" | head -n 12)"
configure original "$src" || fail "configure of the tree itself failed: $(tail -n 5 "$work/original.log")"
# The same defect in every mutant: each mutant of the reformatted tree has the token sequence
# of the one of the tree itself (scripts/cxx_tokens.py: comments dropped, blanks only separate).
code() { python3 "$src/scripts/cxx_tokens.py" "$1" | cut -d' ' -f1; }
n=0
while IFS= read -r m; do
  rel="${m#"$work/original/"}"
  [[ -f "$work/formatted/$rel" ]] || fail "mutant $rel missing from the reformatted configure"
  [[ "$(code "$m")" == "$(code "$work/formatted/$rel")" ]] ||
    fail "mutant $rel differs between the reformatted and the original tree"
  n=$((n + 1))
done < <(find "$work/original/tests/emu_gen" \( -path '*neg*' -o -path '*oracle_neg*' \) -type f \
         \( -name '*.cpp' -o -name '*.cuh' -o -name '*.hpp' \) ! -path '*/wrap/*' ! -name stubs.cpp)
((n >= 10)) || fail "only $n mutants found under $work/original/tests/emu_gen"

# Control: a mutation site gone stops the configure, naming the control.
sed -i '/__syncthreads *( *) *;/d' "$tree/kernels/cuda/flash1/flash1.cu"
configure broken "$tree" && fail "control: configure passed with flash1's barrier deleted"
tr -s ' \n' ' ' <"$work/broken.log" | grep -q "flash1_missing_barrier .* found 0 times" ||
  fail "control: the configure did not name flash1_missing_barrier: $(grep -m3 -i error "$work/broken.log")"
echo "ok: $n mutants the same after reformatting ${#files[@]} files; a deleted site stops the configure"

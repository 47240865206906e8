#!/usr/bin/env bash
# stale_module.sh BIN STALE_MODULE SAME_MODULE: a CUDA module built from other sources (another
# layout stamp, core/module_abi.hpp) is refused with one line naming it and the rebuild command,
# and attnbench still works on the CPU (list, a dry run); control: a module with this build's
# stamp passes the check and fails only later, for registering no backend.
set -u
bin="$1"; stale="$2"; same="$3"
fail() { echo "FAIL: $*"; exit 1; }
out="$(ATTNBENCH_CUDA_MODULE="$stale" "$bin" backend --backend cuda 2>&1)"; rc=$?
((rc != 0 && rc < 128)) || fail "backend with the stale module: status $rc (a crash or a success): $out"
[[ "$(printf '%s\n' "$out" | wc -l)" == 1 ]] || fail "not one line: $out"
grep -q "was built from other sources than this attnbench (layout stamp [0-9a-f]*, expected [0-9a-f]*): rebuild it" <<<"$out" ||
  fail "no stale-module reason: $out"
ATTNBENCH_CUDA_MODULE="$stale" "$bin" list >"${TMPDIR:-/tmp}/stale_list.$$" 2>&1 || fail "list with the stale module: $(cat "${TMPDIR:-/tmp}/stale_list.$$")"
grep -q '^flash2 ' "${TMPDIR:-/tmp}/stale_list.$$" || fail "list lost the CPU rows"
rm -f "${TMPDIR:-/tmp}/stale_list.$$"
ATTNBENCH_CUDA_MODULE="$stale" "$bin" sweep --backend cpu --variant flash2 --seq 64 --head-dim 32 --dry-run >/dev/null 2>&1 ||
  fail "a CPU dry run with the stale module failed"
out="$(ATTNBENCH_CUDA_MODULE="$same" "$bin" backend --backend cuda 2>&1)"
grep -q "registered no backend" <<<"$out" || fail "control: the module with this build's stamp: $out"
echo "ok: a stale module is refused in one line; the control passes the stamp check"

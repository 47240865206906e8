#!/usr/bin/env bash
# expect_bad_input.sh [--names NEEDLE] BIN ARGS...: BIN ARGS must exit with
# status 2 and print exactly one line, "attnbench: error: ...", on stderr (no
# stack trace); with --names that line must contain NEEDLE (the bad value or file).
needle=""
if [[ "$1" == --names ]]; then needle="$2"; shift 2; fi
bin="$1"; shift
err="$(mktemp)"
timeout 30 "$bin" "$@" >/dev/null 2>"$err"
rc=$?
lines=$(wc -l <"$err")
msg="$(cat "$err")"
rm -f "$err"
if [[ $rc -ne 2 ]]; then echo "expected exit 2, got $rc: $msg"; exit 1; fi
if [[ $lines -ne 1 ]]; then echo "expected one line on stderr, got $lines: $msg"; exit 1; fi
if [[ "$msg" != "attnbench: error: "* ]]; then echo "unexpected message: $msg"; exit 1; fi
if [[ -n "$needle" && "$msg" != *"$needle"* ]]; then echo "message does not name '$needle': $msg"; exit 1; fi
echo "ok: $msg"

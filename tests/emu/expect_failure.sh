#!/bin/sh
# Negative control runner (tests/emu.cmake): runs "$@" and succeeds only if
# it FAILS its tests (a planted defect was detected): exit status 1 (every
# emulator test binary's "a check failed") or a crash (a signal, > 128). Exit
# status 0 -- the defect passed the tests -- is this control's failure, and so
# is any other status: 126/127 (the binary was not built or cannot run) or 2
# (no case matched the selection) would otherwise pass without testing anything.
"$@"
rc=$?
if [ "$rc" -eq 0 ]; then
  echo "NEGATIVE CONTROL FAILED: the planted defect passed the tests"
  exit 1
fi
if [ "$rc" -ne 1 ] && [ "$rc" -le 128 ]; then
  echo "NEGATIVE CONTROL FAILED: exit status $rc is not a test failure (binary missing, or no case selected?)"
  exit 1
fi
echo "negative control OK: the planted defect was detected (exit status $rc)"
exit 0

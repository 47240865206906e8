#!/bin/sh
# Negative control runner (tests/emu.cmake): runs "$@" and succeeds only if
# it FAILS (a planted defect was detected). Exit status 0 of the command --
# the defect passed the tests -- is this control's failure.
"$@"
rc=$?
if [ "$rc" -eq 0 ]; then
  echo "NEGATIVE CONTROL FAILED: the planted defect passed the tests"
  exit 1
fi
echo "negative control OK: the planted defect was detected (exit status $rc)"
exit 0

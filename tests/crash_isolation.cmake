# Issue 21: the first GPU run must not be wasted by one wrong kernel (docs/gpu.md).
#   cli_crash_isolation   a planted hang (the watchdog's polling against --wait-timeout) and a
#                         planted crash (SIGSEGV) in one CPU row each: the sweep finishes every
#                         other row, logs the two rows failed/skipped with their reasons, exits as
#                         documented; controls: an unmarked log reruns the row, a restart on
#                         status 3 alone ends unfinished (~2 s)
# The watchdog's loop and deadline rule, the crash guard, lock files and quarantine are unit
# tests in attnbench_tests (test_device_watchdog.cpp, test_results_log.cpp); the emulated
# mbarrier hang is emu.flash3_hang (tests/emu/flash3/tests.cmake).
add_test(NAME cli_crash_isolation
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/crash_isolation.sh $<TARGET_FILE:attnbench>
                 ${CMAKE_SOURCE_DIR}/scripts/resume_sweep.sh ${CMAKE_CURRENT_BINARY_DIR}/cli_crash_isolation)
set_tests_properties(cli_crash_isolation PROPERTIES LABELS "cpu;cli" TIMEOUT 120)

# flash3's emulator tests (included at the end of tests/emu.cmake):
#   emu.flash3_main    every instantiation on the case set, every row of O and lse vs fp64
#   emu.flash3_faults  each injected fault (flash3_fault: wrong swizzle, missing expect_tx,
#                      wrong mbarrier phase, missing wgmma.wait_group, missing proxy fence)
#                      must fail its case, which passes without it
ab_emu_exe(attnbench_emu_flash3 KIND main SOURCES ${ab_emu_dir}/flash3/emu_flash3_test.cpp)
add_test(NAME emu.flash3_main COMMAND attnbench_emu_flash3 main)
set_tests_properties(emu.flash3_main PROPERTIES LABELS cpu TIMEOUT 300 ENVIRONMENT "${ab_emu_env}")
# The faults are races by design (a consumer reading a stage TMA fills later): not under TSan.
if(NOT ab_emu_san STREQUAL "thread")
  add_test(NAME emu.flash3_faults COMMAND attnbench_emu_flash3 --faults)
  set_tests_properties(emu.flash3_faults PROPERTIES LABELS cpu TIMEOUT 300 ENVIRONMENT "${ab_emu_env}")
endif()
# Scripts that build only the emulator's gtest binary and then run every emu.* test
# (scripts/emu_sanitizers.sh) get this one with it.
add_dependencies(attnbench_emu_tests attnbench_emu_flash3)

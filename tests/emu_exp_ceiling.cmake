# The CUDA exp ceiling's kernel on the host emulator (tests/emu/exp_ceiling_test.cpp):
# harness/cuda/ceiling_kernels.cu compiled as C++ against the emulator (tests/emu.cmake's
# ab_emu_* helpers; this file is included after it: tests/*.cmake in sorted order), run on
# small grids with its result check and two controls of the check. ~0.1 s.
if(COMMAND ab_emu_exe)
  ab_emu_wrap(ab_emu_ceiling_wrapped ${CMAKE_SOURCE_DIR}/harness/cuda/ceiling_kernels.cu)
  ab_emu_exe(attnbench_emu_exp_ceiling KIND main
             SOURCES ${CMAKE_SOURCE_DIR}/tests/emu/exp_ceiling_test.cpp ${ab_emu_ceiling_wrapped})
  add_test(NAME emu.exp_ceiling COMMAND attnbench_emu_exp_ceiling)
  set_tests_properties(emu.exp_ceiling PROPERTIES LABELS nogpu TIMEOUT 60 ENVIRONMENT "${ab_emu_env}"
                       PASS_REGULAR_EXPRESSION "emu.exp_ceiling passed")
endif()

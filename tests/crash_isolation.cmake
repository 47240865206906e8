# The first GPU run must not be wasted by one wrong kernel (docs/gpu.md).
#   cli_crash_isolation   a planted hang (the watchdog's polling against --wait-timeout) and a
#                         planted crash (SIGSEGV) in one CPU row each: the sweep finishes every
#                         other row, logs the two rows failed/skipped with their reasons, exits as
#                         documented; controls: an unmarked log reruns the row, a restart on
#                         status 3 alone ends unfinished (~2 s)
#   cli_cudnn_absent      libattnbench_cuda.so needs no cuDNN; with cuDNN broken or its module
#                         missing, list works and only cudnn_sdpa is refused, with the reason (~1 s)
#   cli_gpu_tests_restart scripts/gpu_tests.sh against a stand-in test binary whose tests hang and
#                         crash: started again past each, counts right; control: clean run (~1 s)
#   cli_gpu_check_dry_run scripts/gpu_check.sh here (GPU_CHECK_ALLOW_NO_GPU=1) with this build's
#                         binaries as the prebuilt ones and planted faults: the smoke step finds
#                         the hung and the crashed row, the tests and sweeps leave them out, the
#                         summary says so; control: a smoke step that misses the hang leaves it to
#                         the quick sweep (two runs, ~16 s)
# The watchdog's loop and deadline rule, the crash guard, lock files and quarantine are unit
# tests in attnbench_tests (test_device_watchdog.cpp, test_results_log.cpp); the emulated
# mbarrier hang is emu.flash3_hang (tests/emu/flash3/tests.cmake).
add_test(NAME cli_crash_isolation
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/crash_isolation.sh $<TARGET_FILE:attnbench>
                 ${CMAKE_SOURCE_DIR}/scripts/resume_sweep.sh ${CMAKE_CURRENT_BINARY_DIR}/cli_crash_isolation)
set_tests_properties(cli_crash_isolation PROPERTIES LABELS "nogpu;cli" TIMEOUT 120)

add_test(NAME cli_gpu_tests_restart
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/gpu_tests_restart.sh ${CMAKE_CURRENT_BINARY_DIR}/cli_gpu_tests_restart)
set_tests_properties(cli_gpu_tests_restart PROPERTIES LABELS "nogpu;cli" TIMEOUT 60)

if(ATTNBENCH_WITH_CUDA AND TARGET attnbench_cudnn)
  add_test(NAME cli_cudnn_absent
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/cudnn_absent.sh $<TARGET_FILE:attnbench>
                   ${CMAKE_CURRENT_BINARY_DIR}/cli_cudnn_absent)
  set_tests_properties(cli_cudnn_absent PROPERTIES LABELS "nogpu;cli" TIMEOUT 60 SKIP_RETURN_CODE 77)
endif()

if(ATTNBENCH_WITH_CUDA AND TARGET attnbench_gpu_tests)
  add_test(NAME cli_gpu_check_dry_run
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/gpu_check_dry_run.sh ${CMAKE_BINARY_DIR}
                   ${CMAKE_CURRENT_BINARY_DIR}/cli_gpu_check_dry_run)
  set_tests_properties(cli_gpu_check_dry_run PROPERTIES LABELS "nogpu;cli" TIMEOUT 240)
endif()

# The GPU test binary loads libattnbench_cudnn.so like attnbench does; the module's references
# into the CUDA objects (device_runner, stream) resolve against the executable, which must
# export them, and the module must be built beside it.
if(TARGET attnbench_gpu_tests AND TARGET attnbench_cudnn)
  set_target_properties(attnbench_gpu_tests PROPERTIES ENABLE_EXPORTS ON)
  add_dependencies(attnbench_gpu_tests attnbench_cudnn)
endif()

# A CUDA module left from other sources (only `attnbench` rebuilt after a pull) is refused at
# load with one line instead of crashing in the registry (core/module_abi.hpp); two stand-in
# modules: another layout stamp, and this build's (the control). ~1 s.
if(ATTNBENCH_WITH_CUDA)
  foreach(kind stale same)
    add_library(attnbench_module_abi_${kind} MODULE ${CMAKE_CURRENT_SOURCE_DIR}/cli/module_abi_probe.cpp)
    target_include_directories(attnbench_module_abi_${kind} PRIVATE ${CMAKE_SOURCE_DIR})
    target_compile_features(attnbench_module_abi_${kind} PRIVATE cxx_std_20)
    set_target_properties(attnbench_module_abi_${kind} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  endforeach()
  target_compile_definitions(attnbench_module_abi_stale PRIVATE ATTNBENCH_PROBE_STALE)
  add_test(NAME cli_stale_cuda_module
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/stale_module.sh $<TARGET_FILE:attnbench>
                   $<TARGET_FILE:attnbench_module_abi_stale> $<TARGET_FILE:attnbench_module_abi_same>)
  set_tests_properties(cli_stale_cuda_module PROPERTIES LABELS "nogpu;cli" TIMEOUT 60)
endif()

# scripts/gpu_check.sh without the carried prefix on a machine that lacks the
# packages stops at once (exit 2) saying how to bring it.
# The script runs from a copy so a .debs/root in the checkout cannot hide it.
set(ab_gc_root ${CMAKE_CURRENT_BINARY_DIR}/gpu_check_root)
configure_file(${CMAKE_SOURCE_DIR}/scripts/gpu_check.sh ${ab_gc_root}/scripts/gpu_check.sh COPYONLY)
file(MAKE_DIRECTORY ${ab_gc_root}/empty_prefix)
add_test(NAME cli_gpu_check_needs_prefix
         COMMAND ${CMAKE_COMMAND} -E env GPU_CHECK_SYSTEM_PREFIX=${ab_gc_root}/empty_prefix
                 bash ${ab_gc_root}/scripts/gpu_check.sh ${ab_gc_root}/out)
set_tests_properties(cli_gpu_check_needs_prefix PROPERTIES LABELS "nogpu;cli" TIMEOUT 10
  PASS_REGULAR_EXPRESSION "no .debs/root and [^\n]* lacks fmt/format.h[^\n]*scripts/fetch_debs.sh")

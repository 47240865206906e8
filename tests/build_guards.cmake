# The emulator's processor guard (tests/emu.cmake): a configure for a host that is not x86-64
# (ATTNBENCH_EMU_PROCESSOR=aarch64 stands in for an aarch64 machine) leaves out every emu.*
# test and emulator target and keeps the product and the other tests; the x86_64 configure is
# the control (emu.* present), and the control of static.emu_covers_cuda_sources (tests/emu.cmake:
# a probe source no emulator target compiles must be listed). ~10 s: two CPU-only configures.
add_test(NAME static.emu_processor_guard
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/static/emu_processor_guard.sh ${CMAKE_SOURCE_DIR}
                 ${CMAKE_CURRENT_BINARY_DIR}/emu_processor_guard)
set_tests_properties(static.emu_processor_guard PROPERTIES LABELS "nogpu;static" TIMEOUT 180)

# The negative controls survive any reformat (tests/emu/mutate.cmake): a copy of the tree with
# kernels/ and tests/emu reformatted to another style configures with the same mutants; a
# deleted mutation site stops the configure (the control). ~20 s: three CPU-only configures.
add_test(NAME static.mutations_survive_format
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/static/mutations_survive_format.sh ${CMAKE_SOURCE_DIR}
                 ${CMAKE_CURRENT_BINARY_DIR}/mutations_survive_format)
set_tests_properties(static.mutations_survive_format PROPERTIES LABELS "nogpu;static" TIMEOUT 300 SKIP_RETURN_CODE 77)

# Every C++/CUDA source is formatted (scripts/format.sh --check; .clang-format, docs/style.md);
# the control: a badly formatted file is reported. ~3 s.
add_test(NAME static.clang_format COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/static/clang_format.sh ${CMAKE_SOURCE_DIR})
set_tests_properties(static.clang_format PROPERTIES LABELS "nogpu;static" TIMEOUT 120 SKIP_RETURN_CODE 77)

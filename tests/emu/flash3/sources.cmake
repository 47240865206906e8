# flash3 (kernels/cuda/flash3) in the host emulator (included by tests/emu.cmake
# before the base library is defined): the row, plan and runner sources join the
# base (the registry needs them); the instantiations and their table are a
# family of their own ("flash3"), linked into every emulator executable, so a
# negative control (tests.cmake) can swap them for a mutated kernel.
set(ab_f3_dir ${CMAKE_SOURCE_DIR}/kernels/cuda/flash3)
file(GLOB ab_f3_instances CONFIGURE_DEPENDS ${ab_f3_dir}/flash3_fwd_hdim*.cu)
list(APPEND ab_emu_extra_base_sources ${ab_f3_dir}/flash3_rows.cpp ${ab_f3_dir}/flash3_plan.cpp
     ${ab_f3_dir}/flash3_runner.cpp)
set(ab_emu_fam_flash3 ${ab_f3_dir}/flash3_instances.cpp ${ab_f3_instances})
list(APPEND ab_emu_all_families flash3)

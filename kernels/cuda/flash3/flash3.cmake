# flash3's kernels (flash3_fwd_*.cu) use sm_90a-only instructions (wgmma,
# setmaxnreg; TMA and mbarrier tx counts need sm_90): when 90 is in
# CMAKE_CUDA_ARCHITECTURES they are built for sm_90a alone, in their own static
# library linked (PUBLIC, so it reaches every executable and module that links
# the CUDA kernels, object library or not) by the CUDA kernels' library, and the
# row may run (ATTNBENCH_FLASH3_SM90A). Otherwise they stay in the normal list, compile to
# an empty body for those architectures, and the row refuses with the reason
# (flash3_plan.cpp). Included by kernels/cuda/CMakeLists.txt between its glob
# (cuda_kernel_sources) and target_sources.
file(GLOB ab_f3_kernel_tus CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/flash3_fwd_*.cu)
if(TARGET attnbench_cuda_objects)
  set(ab_f3_owner attnbench_cuda_objects)
else()
  set(ab_f3_owner attnbench_kernels)
endif()
if("90" IN_LIST CMAKE_CUDA_ARCHITECTURES OR "90a" IN_LIST CMAKE_CUDA_ARCHITECTURES)
  list(REMOVE_ITEM cuda_kernel_sources ${ab_f3_kernel_tus})
  add_library(attnbench_flash3_sm90a STATIC ${ab_f3_kernel_tus})
  set_target_properties(attnbench_flash3_sm90a PROPERTIES CUDA_ARCHITECTURES 90a POSITION_INDEPENDENT_CODE ON)
  target_include_directories(attnbench_flash3_sm90a PRIVATE ${CMAKE_SOURCE_DIR} ${CUDAToolkit_INCLUDE_DIRS})
  target_compile_definitions(attnbench_flash3_sm90a PRIVATE ${ATTNBENCH_COMPILE_DEFS} ATTNBENCH_WITH_CUDA)
  if(ab_f3_owner STREQUAL "attnbench_kernels")
    target_link_libraries(attnbench_flash3_sm90a PUBLIC attnbench_core)  # launch checks, stream
  endif()
  target_link_libraries(${ab_f3_owner} PUBLIC attnbench_flash3_sm90a)
  target_compile_definitions(${ab_f3_owner} PRIVATE ATTNBENCH_FLASH3_SM90A)
endif()

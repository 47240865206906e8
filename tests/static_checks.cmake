# Static checks of the compiled CUDA kernels (ctest label `static`; they need
# no GPU). scripts/kernel_resources.py wraps nvcc for the attnbench_* libraries so every
# CUDA object keeps ptxas's `-v` report beside it; the `kernel_resources`
# target collects them into ${CMAKE_BINARY_DIR}/kernel_resources.json after
# each build (the cuda backend puts it into the JSON context), and the tests
#   static.kernel_resources  fail on any spill or static smem above 227 KB,
#   static.sass_hmma         fail when a kernel named like flash2 or ssd_kernel has no HMMA
#                            in its SASS for some arch (needs cuobjdump);
#   static.sass_mufu_ex2     fail when the exp ceiling's kernel (exp2_chains_kernel)
#                            issues no MUFU.EX2, or another MUFU function, for some arch;
#                            its control: the copy kernel must fail the rule.
if(ATTNBENCH_WITH_CUDA)
  find_package(Python3 COMPONENTS Interpreter)
  if(NOT Python3_Interpreter_FOUND)
    message(WARNING "attnbench: no Python 3: static kernel checks disabled")
    return()
  endif()
  set(ab_kr_script ${CMAKE_SOURCE_DIR}/scripts/kernel_resources.py)
  set(ab_kr_json ${CMAKE_BINARY_DIR}/kernel_resources.json)
  set_property(TARGET attnbench_cuda_objects PROPERTY
               CUDA_COMPILER_LAUNCHER ${Python3_EXECUTABLE} ${ab_kr_script} wrap --)
  # Only the backend needs the path: a source property keeps the rest of the
  # library's compile flags unchanged.
  set_source_files_properties(${CMAKE_SOURCE_DIR}/harness/cuda/cuda_backend.cpp
    DIRECTORY ${CMAKE_SOURCE_DIR}
    PROPERTIES COMPILE_DEFINITIONS "ATTNBENCH_KERNEL_RESOURCES_JSON=\"${ab_kr_json}\"")
  add_custom_target(kernel_resources ALL
    COMMAND ${Python3_EXECUTABLE} ${ab_kr_script} report --build-dir ${CMAKE_BINARY_DIR}
            --out ${ab_kr_json}
    COMMENT "kernel resources -> ${ab_kr_json}" VERBATIM)
  add_dependencies(kernel_resources attnbench_cuda_objects)

  add_test(NAME static.kernel_resources
           COMMAND ${Python3_EXECUTABLE} ${ab_kr_script} check --build-dir ${CMAKE_BINARY_DIR})
  add_test(NAME static.sass_hmma
           COMMAND ${Python3_EXECUTABLE} ${ab_kr_script} check-sass --build-dir ${CMAKE_BINARY_DIR})
  set_tests_properties(static.kernel_resources static.sass_hmma PROPERTIES LABELS static)
  # The exp ceiling measures the multi-function unit: its kernel must issue MUFU.EX2
  # (one object, ceiling_kernels.cu: ~1 s).
  add_test(NAME static.sass_mufu_ex2
           COMMAND ${Python3_EXECUTABLE} ${ab_kr_script} check-mufu --build-dir ${CMAKE_BINARY_DIR})
  add_test(NAME static.sass_mufu_ex2_control
           COMMAND ${Python3_EXECUTABLE} ${ab_kr_script} check-mufu --build-dir ${CMAKE_BINARY_DIR}
                   --require copy16_kernel)
  set_tests_properties(static.sass_mufu_ex2 static.sass_mufu_ex2_control PROPERTIES LABELS static)
  set_tests_properties(static.sass_mufu_ex2_control PROPERTIES PASS_REGULAR_EXPRESSION "copy16_kernel.*no MUFU.EX2 in SASS")
  # flash3's sm_90a library (kernels/cuda/flash3/flash3.cmake): the same ptxas
  # reports, and static.sass_hopper: HGMMA + UTMALDG + setmaxnreg in every flash3
  # kernel's sm_90a SASS, 0 spills, register budgets within the 64K register file.
  if(TARGET attnbench_flash3_sm90a)
    set_property(TARGET attnbench_flash3_sm90a PROPERTY
                 CUDA_COMPILER_LAUNCHER ${Python3_EXECUTABLE} ${ab_kr_script} wrap --)
    add_dependencies(kernel_resources attnbench_flash3_sm90a)
    set(ab_kr_hopper_flags --require-sm90a)
  endif()
  add_test(NAME static.sass_hopper
           COMMAND ${Python3_EXECUTABLE} ${ab_kr_script} check-hopper --build-dir ${CMAKE_BINARY_DIR}
                   ${ab_kr_hopper_flags})
  set_tests_properties(static.sass_hopper PROPERTIES LABELS static)
  # Its control on real SASS: a flash2 sm_90 kernel (mma.sync, cp.async) must fail the rule,
  # for the reasons it lacks (one instantiation: 3 s instead of 36 s for all of flash2).
  add_test(NAME static.sass_hopper_control
           COMMAND ${Python3_EXECUTABLE} ${ab_kr_script} check-hopper --build-dir ${CMAKE_BINARY_DIR}
                   --require "flash2_fwd_kernel<attnbench::cuda::flash2_traits<64, 64, 64, 4, 1, __half"
                   --arch sm_90 --threads 256 --require-sm90a)
  set_tests_properties(static.sass_hopper_control PROPERTIES LABELS static
                       PASS_REGULAR_EXPRESSION "no HGMMA in SASS; no UTMALDG in SASS; no USETMAXREG in SASS")
endif()

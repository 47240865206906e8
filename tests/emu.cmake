# Host emulator of every CUDA kernel family (tests/emu/README.md). Every CUDA
# source of kernels/cuda (kernels and their host runners) is compiled by the
# C++ compiler with ATTN_EMULATE (launches through core/cuda/launch.cuh go to
# the fiber runtime; the PTX helpers of flash2 and flash3 take their host twins), against the
# stand-in headers of tests/emu/include (CUDA runtime, fp16/bf16, cuBLAS). No
# CUDA toolkit or GPU is needed, so it runs with ATTNBENCH_CUDA ON or OFF
# (ctest label `nogpu`):
#   emu.runtime         the emulator itself (deadlocks, launch checks, cuBLAS stand-in, poison)
#   emu.tolerance       the fp16/bf16 tolerance cap of tests/gpu
#   emu.unfused         tests/gpu/test_unfused.cpp, small shapes: naive, naive_gqa_expand, cublas_unfused
#   emu.unfused_bwd     tests/gpu/test_unfused_bwd.cpp: the cublas_unfused backward (bwd, fwd_bwd)
#   emu.flash1          tests/gpu/test_flash1.cpp, small shapes
#   emu.linear          tests/gpu/test_linear.cpp, small shapes
#   emu.scans           tests/gpu/test_scans.cpp: selective_scan, ssd, wkv, wkv6 (kernels/cuda/scan)
#   emu.performer_routing  tests/gpu/test_performer_routing.cpp: performer, routing (kernels/cuda/approx)
#   emu.additive_linformer  tests/gpu/test_additive_linformer.cpp: additive, linformer (kernels/cuda/approx)
#   emu.reference       tests/gpu/test_reference_fp32.cpp (on-device fp32 reference)
#   emu.flash2_bwd      tests/gpu/test_flash2_bwd.cpp: the flash2 backward
#   emu.sparse_bwd      the sparse row's backward (the same kernel over the transposed key-tile lists)
#   emu.flash2_bwd_deterministic  the deterministic row (waves, bit-identical runs)
#   emu.flash2_main     flash2 main-loop tiles, sparse and packed-GQA rows (emu_test.cpp)
#   emu.flash2_decode   split-KV decode + the real merge kernel (flash2_splitkv_merge.cu)
#   emu.flash2_faults   each injected instruction fault must be detected
#   emu.neg.*           negative controls: a mutated copy of one kernel source
#                       (generated here; configure fails if the pattern to
#                       mutate is gone) must make its family's test fail
#   emu.{tsan,asan,ubsan}.*  (ATTNBENCH_EMU_SANITIZE only) controls: each sanitizer must report its planted defect
#
# ATTNBENCH_EMU_SANITIZE (address,undefined | address | undefined | thread |
# empty) builds the emulator targets -- and only them -- with those
# sanitizers. The default preset builds them with address,undefined: the
# emulator tests, the negative controls and the ASan/UBSan controls run
# instrumented in the one build (a second, ASan-only build cost ~150 s of the
# test command on 2 cores); scripts/emu_sanitizers.sh adds the TSan build
# (build-tsan; README "Sanitizers"), where the negative controls are not
# defined (races by design in some; they belong to the default build).
# The fiber runtime switches x86-64 register contexts (emu_fiber.cpp): elsewhere (aarch64:
# Grace Hopper) the product and every other test build without the emulator.
# ATTNBENCH_EMU_PROCESSOR stands in for the host processor in the guard's test (tests/build_guards.cmake).
set(ATTNBENCH_EMU_PROCESSOR "${CMAKE_SYSTEM_PROCESSOR}" CACHE STRING "Host processor the emulator guard checks")
if(NOT ATTNBENCH_EMU_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  message(STATUS "attnbench: host emulator tests left out: the fiber runtime needs x86-64, this is "
                 "${ATTNBENCH_EMU_PROCESSOR} (the GPU tests on a device still check the CUDA kernels)")
  return()
endif()

set(ATTNBENCH_EMU_SANITIZE "" CACHE STRING
    "Sanitizers for the host-emulator targets only: address,undefined | address | undefined | thread | empty")
set(ab_emu_san "${ATTNBENCH_EMU_SANITIZE}")
set(ab_emu_san_flags)
set(ab_emu_san_env)
if(ab_emu_san)
  if(NOT ab_emu_san MATCHES "^(address,undefined|undefined,address|address|undefined|thread)$")
    message(FATAL_ERROR "ATTNBENCH_EMU_SANITIZE=${ab_emu_san}: use address,undefined, address, undefined, thread or empty")
  endif()
  include(CheckCXXSourceCompiles)
  set(CMAKE_REQUIRED_FLAGS -fsanitize=${ab_emu_san})
  set(CMAKE_REQUIRED_LINK_OPTIONS -fsanitize=${ab_emu_san})
  check_cxx_source_compiles("int main() { return 0; }" ATTNBENCH_EMU_SANITIZE_LINKS_${ab_emu_san})
  unset(CMAKE_REQUIRED_FLAGS)
  unset(CMAKE_REQUIRED_LINK_OPTIONS)
  if(NOT ATTNBENCH_EMU_SANITIZE_LINKS_${ab_emu_san})
    message(WARNING "attnbench: ${CMAKE_CXX_COMPILER} cannot link -fsanitize=${ab_emu_san}: "
                    "the emulator tests are built without sanitizers")
    set(ab_emu_san "")
  endif()
endif()
if(ab_emu_san)
  # -O1: the sanitizer builds compile every kernel family again; -g1: file:line in reports.
  set(ab_emu_san_flags -fsanitize=${ab_emu_san} -fno-omit-frame-pointer -g1 -O1)
  if(ab_emu_san MATCHES "undefined")
    list(APPEND ab_emu_san_flags -fno-sanitize-recover=all)
  endif()
  # Any report fails its test: ASan/UBSan stop at the first, LSan at exit, TSan
  # at the first (exit status 66).
  if(ab_emu_san MATCHES "address")
    list(APPEND ab_emu_san_env "ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:check_initialization_order=1")
  endif()
  if(ab_emu_san MATCHES "undefined")
    list(APPEND ab_emu_san_env "UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1")
  endif()
  if(ab_emu_san STREQUAL "thread")
    # libgomp is not instrumented (its barriers would look like races): one
    # OpenMP thread for the host-side fp64 reference.
    list(APPEND ab_emu_san_env "TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1" OMP_NUM_THREADS=1)
  endif()
  message(STATUS "attnbench: emulator targets built with -fsanitize=${ab_emu_san}")
endif()

set(ab_emu_dir ${CMAKE_SOURCE_DIR}/tests/emu)
include(${ab_emu_dir}/mutate.cmake)
set(ab_emu_gen ${CMAKE_CURRENT_BINARY_DIR}/emu_gen)

# One C++ wrapper per CUDA source (the .cu extension would make CMake use nvcc).
function(ab_emu_wrap out_var)
  set(outs)
  foreach(src ${ARGN})
    file(RELATIVE_PATH rel ${CMAKE_SOURCE_DIR} ${src})
    string(REPLACE "/" "__" flat "${rel}")
    set(out ${ab_emu_gen}/wrap/${flat}.cpp)
    file(CONFIGURE OUTPUT ${out} CONTENT "// Generated by tests/emu.cmake: ${rel} compiled as C++ for the host emulator.\n#include \"${rel}\"\n")
    list(APPEND outs ${out})
  endforeach()
  set(${out_var} ${outs} PARENT_SCOPE)
endfunction()

# The flash2 instantiations in one translation unit (the table and all
# kernels/cuda/flash2/flash2_{fwd,splitkv}_hdim*.cu).
file(GLOB ab_emu_instances CONFIGURE_DEPENDS
     ${CMAKE_SOURCE_DIR}/kernels/cuda/flash2/flash2_fwd_hdim*.cu
     ${CMAKE_SOURCE_DIR}/kernels/cuda/flash2/flash2_splitkv_hdim*.cu)
set(ab_emu_includes "// Generated by tests/emu.cmake: every flash2 instantiation, compiled as C++.\n")
string(APPEND ab_emu_includes "#include \"kernels/cuda/flash2/flash2_instances.cpp\"\n")
foreach(f ${ab_emu_instances})
  file(RELATIVE_PATH rel ${CMAKE_SOURCE_DIR} ${f})
  string(APPEND ab_emu_includes "#include \"${rel}\"\n")
endforeach()
file(CONFIGURE OUTPUT ${ab_emu_gen}/emu_flash2_instances.cpp CONTENT "${ab_emu_includes}")

# Families: the CUDA sources of each (a negative control swaps one of them).
set(ab_emu_fam_unfused ${CMAKE_SOURCE_DIR}/kernels/cuda/unfused/naive_gemm.cu
    ${CMAKE_SOURCE_DIR}/kernels/cuda/unfused/masked_softmax.cu ${CMAKE_SOURCE_DIR}/kernels/cuda/unfused/unfused_rows.cu)
list(APPEND ab_emu_fam_unfused ${CMAKE_SOURCE_DIR}/kernels/cuda/unfused/softmax_backward.cu)  # the backward
set(ab_emu_fam_flash1 ${CMAKE_SOURCE_DIR}/kernels/cuda/flash1/flash1.cu)
set(ab_emu_fam_linear ${CMAKE_SOURCE_DIR}/kernels/cuda/linear/linear.cu)
set(ab_emu_fam_reference ${CMAKE_SOURCE_DIR}/kernels/cuda/reference/reference_device.cu)
set(ab_emu_fam_merge ${CMAKE_SOURCE_DIR}/kernels/cuda/flash2/flash2_splitkv_merge.cu)
set(ab_emu_fam_scan ${CMAKE_SOURCE_DIR}/kernels/cuda/scan/selective_scan.cu ${CMAKE_SOURCE_DIR}/kernels/cuda/scan/wkv.cu
    ${CMAKE_SOURCE_DIR}/kernels/cuda/scan/wkv6.cu ${CMAKE_SOURCE_DIR}/kernels/cuda/scan/ssd.cu)
set(ab_emu_all_families unfused flash1 linear reference merge scan)
set(ab_emu_fam_performer_routing ${CMAKE_SOURCE_DIR}/kernels/cuda/approx/performer.cu
    ${CMAKE_SOURCE_DIR}/kernels/cuda/approx/routing.cu)
list(APPEND ab_emu_all_families performer_routing)
# The approximations' CUDA rows (kernels/cuda/approx): additive and linformer.
set(ab_emu_fam_additive_linformer ${CMAKE_SOURCE_DIR}/kernels/cuda/approx/additive.cu
    ${CMAKE_SOURCE_DIR}/kernels/cuda/approx/linformer.cu)
list(APPEND ab_emu_all_families additive_linformer)
# The flash2 backward: its main-kernel instantiations (flash2_bwd_kernel.cuh) and
# the preprocess/convert kernels, one family (the header's controls swap it whole).
file(GLOB ab_emu_fam_flash2_bwd CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/kernels/cuda/flash2/flash2_bwd_*.cu)
list(APPEND ab_emu_all_families flash2_bwd)

function(ab_emu_setup tgt)
  target_include_directories(${tgt} BEFORE PRIVATE ${ab_emu_dir}/include ${CMAKE_SOURCE_DIR})
  target_compile_definitions(${tgt} PRIVATE ATTN_EMULATE ATTNBENCH_WITH_CUDA
                             ATTNBENCH_SOURCE_DIR="${CMAKE_SOURCE_DIR}" ATTNBENCH_BUILD_TYPE="${CMAKE_BUILD_TYPE}"
                             ATTNBENCH_CXX_COMPILER="${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}"
                             ATTNBENCH_CUDA_COMPILER="host emulator" ATTNBENCH_CUDA_ARCHS="emulated")
  target_compile_features(${tgt} PRIVATE cxx_std_20)
  target_compile_options(${tgt} PRIVATE $<$<CXX_COMPILER_ID:GNU,Clang>:-O2>)
  # GCC's "-Wpsabi" note on passing 128-byte-aligned parameters (the TMA descriptor's twin):
  # the ABI changed in GCC 4.6, which matters only when linking objects of an older GCC; every
  # emulator object comes from this compiler. 67 such notes per build otherwise.
  target_compile_options(${tgt} PRIVATE $<$<CXX_COMPILER_ID:GNU>:-Wno-psabi>)
  target_link_libraries(${tgt} PRIVATE fmt::fmt OpenMP::OpenMP_CXX Threads::Threads)
  if(ab_emu_san_flags)
    target_compile_options(${tgt} PRIVATE ${ab_emu_san_flags})
    target_link_options(${tgt} PRIVATE -fsanitize=${ab_emu_san})
  endif()
endfunction()

# A family kept in its own folder (tests/emu/flash3/) adds its row, plan and
# runner sources to the base here, and its tests at the end of this file.
set(ab_emu_extra_base_sources)
include(${ab_emu_dir}/flash3/sources.cmake OPTIONAL)
list(APPEND ab_emu_extra_base_sources ${CMAKE_SOURCE_DIR}/kernels/cuda/flash2/flash2_bwd_runner.cpp
     ${CMAKE_SOURCE_DIR}/kernels/cuda/flash2/flash2_bwd_instances.cpp)

# Runtime + everything that is not a swappable family source.
file(GLOB ab_emu_core CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/core/*.cpp ${CMAKE_SOURCE_DIR}/core/cuda/*.cpp)
file(GLOB ab_emu_models CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/kernels/models/*.cpp)
# The fp64 references (reference_for() dispatches to every attention_math; validation.cpp, in the
# full check, to the backward's too), with their seeded
# parameters; the fp32 OpenBLAS reference and the row check are the full check's own.
file(GLOB ab_emu_references CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/kernels/reference/*.cpp)
list(FILTER ab_emu_references EXCLUDE REGEX "/(reference_fp32|row_check)\\.cpp$")
ab_emu_wrap(ab_emu_common_wrapped ${CMAKE_SOURCE_DIR}/kernels/cuda/common/common_runtime.cu
            ${CMAKE_SOURCE_DIR}/kernels/cuda/common/backward_runtime.cu)
add_library(attnbench_emu_base OBJECT
            ${ab_emu_dir}/emu_fiber.cpp ${ab_emu_dir}/emu_runtime.cpp ${ab_emu_dir}/emu_hopper.cpp ${ab_emu_dir}/emu_cublas.cpp
            ${ab_emu_dir}/emu_cpu_rows_stub.cpp
            ${ab_emu_core} ${ab_emu_models} ${CMAKE_SOURCE_DIR}/kernels/registry.cpp
            ${CMAKE_SOURCE_DIR}/kernels/cuda/cuda_rows.cpp
            ${ab_emu_references} ${CMAKE_SOURCE_DIR}/harness/tensors.cpp ${CMAKE_SOURCE_DIR}/harness/error_metrics.cpp
            ${CMAKE_SOURCE_DIR}/kernels/cuda/flash2/flash2_rows.cpp
            ${CMAKE_SOURCE_DIR}/kernels/cuda/flash2/flash2_plan.cpp
            ${CMAKE_SOURCE_DIR}/kernels/cuda/flash2/flash2_runner.cpp
            ${ab_emu_gen}/emu_flash2_instances.cpp ${ab_emu_common_wrapped} ${ab_emu_extra_base_sources})
ab_emu_setup(attnbench_emu_base)
foreach(fam ${ab_emu_all_families})
  ab_emu_wrap(w ${ab_emu_fam_${fam}})
  add_library(attnbench_emu_fam_${fam} OBJECT ${w})
  ab_emu_setup(attnbench_emu_fam_${fam})
endforeach()

# The GoogleTest side: the small-shape GPU tests of tests/gpu, compiled
# unchanged against the emulator, and the emulator's own tests.
set(ab_emu_gtest_sources ${CMAKE_SOURCE_DIR}/tests/gpu/test_unfused.cpp ${CMAKE_SOURCE_DIR}/tests/gpu/test_flash1.cpp
    ${CMAKE_SOURCE_DIR}/tests/gpu/test_linear.cpp ${CMAKE_SOURCE_DIR}/tests/gpu/test_reference_fp32.cpp
    ${CMAKE_SOURCE_DIR}/tests/gpu/test_scans.cpp
    ${ab_emu_dir}/emu_runtime_test.cpp ${ab_emu_dir}/emu_hopper_test.cpp ${ab_emu_dir}/tolerance_test.cpp
    ${ab_emu_dir}/emu_gtest_main.cpp)
list(APPEND ab_emu_gtest_sources ${CMAKE_SOURCE_DIR}/tests/gpu/test_flash2_bwd.cpp)
list(APPEND ab_emu_gtest_sources ${CMAKE_SOURCE_DIR}/tests/gpu/test_unfused_bwd.cpp)
list(APPEND ab_emu_gtest_sources ${CMAKE_SOURCE_DIR}/tests/gpu/test_performer_routing.cpp)
list(APPEND ab_emu_gtest_sources ${CMAKE_SOURCE_DIR}/tests/gpu/test_additive_linformer.cpp)
add_library(attnbench_emu_gtests OBJECT ${ab_emu_gtest_sources})
ab_emu_setup(attnbench_emu_gtests)
target_link_libraries(attnbench_emu_gtests PRIVATE GTest::gtest)

# Every emulator executable but the mutants (SWAP_FAMILY): what the emu.*
# tests outside emu.neg.* run, so scripts/emu_sanitizers.sh builds this one
# target instead of naming executables.
add_custom_target(attnbench_emu_checks)

# An executable of the emulator world; SWAP "fam=file" replaces one family's
# objects with a (mutated) source.
function(ab_emu_exe name)
  cmake_parse_arguments(A "" "SWAP_FAMILY;KIND" "SWAP_SOURCE;SOURCES" ${ARGN})
  if(NOT A_SWAP_FAMILY)
    add_dependencies(attnbench_emu_checks ${name})
  endif()
  set(objs $<TARGET_OBJECTS:attnbench_emu_base>)
  foreach(fam ${ab_emu_all_families})
    if(NOT fam STREQUAL "${A_SWAP_FAMILY}")
      list(APPEND objs $<TARGET_OBJECTS:attnbench_emu_fam_${fam}>)
    endif()
  endforeach()
  if(A_KIND STREQUAL "gtest")
    add_executable(${name} $<TARGET_OBJECTS:attnbench_emu_gtests> ${objs} ${A_SWAP_SOURCE})
    target_link_libraries(${name} PRIVATE GTest::gtest)
  elseif(A_KIND STREQUAL "flash2")
    add_executable(${name} ${ab_emu_dir}/emu_test.cpp ${objs} ${A_SWAP_SOURCE})
  else()  # KIND main: its own main() in SOURCES
    add_executable(${name} ${A_SOURCES} ${objs})
  endif()
  ab_emu_setup(${name})
endfunction()
ab_emu_exe(attnbench_emu_tests KIND gtest)
ab_emu_exe(attnbench_emu_flash2 KIND flash2)

set(ab_emu_env OMP_WAIT_POLICY=passive ${ab_emu_san_env})
function(ab_emu_gtest name filter)
  add_test(NAME emu.${name} COMMAND attnbench_emu_tests --gtest_filter=${filter})
  set_tests_properties(emu.${name} PROPERTIES LABELS nogpu TIMEOUT 300 ENVIRONMENT "${ab_emu_env}")
endfunction()
if(ab_emu_san STREQUAL "thread")
  # That test plants a missing barrier on purpose (a race TSan reports); the
  # emu.tsan.* control below is its TSan counterpart.
  ab_emu_gtest(runtime "EmuRuntime.*:EmuCublas.*:-EmuRuntime.MissingBarrierReadsThePoison")
else()
  ab_emu_gtest(runtime "EmuRuntime.*:EmuCublas.*")
endif()
ab_emu_gtest(tolerance "ToleranceCap.*")
# The Hopper twins (emu_hopper_test.cpp) and their negative controls: each
# EmuHopperControl case passes only on the emulator's report of its defect.
if(ab_emu_san STREQUAL "thread")
  ab_emu_gtest(hopper "EmuHopper.*:-EmuHopper.WithoutTheNamedBarrierReadsThePoison")  # a race by design
else()
  ab_emu_gtest(hopper "EmuHopper.*")
endif()
ab_emu_gtest(hopper_controls "EmuHopperControl.*")
ab_emu_gtest(unfused "CudaUnfusedHost.*:CudaUnfused.MatchesFp64ReferenceOnSmallShapes:CudaUnfused.RepeatedRunsAreIdentical")
ab_emu_gtest(unfused_bwd "CudaUnfusedBwdHost.*:CudaUnfusedBwd.*")
ab_emu_gtest(flash1 "CudaFlash1Host.*:CudaFlash1.MatchesFp64ReferenceOnSmallShapes")
ab_emu_gtest(linear "CudaLinearHost.*:CudaLinear.MatchesFp64ReferenceOnSmallShapes")
ab_emu_gtest(scans "CudaScansHost.*:CudaScans.*")
ab_emu_gtest(performer_routing "CudaPerformerRoutingHost.*:CudaPerformerRouting.*")
ab_emu_gtest(additive_linformer "CudaAdditiveLinformerHost.*:CudaAdditiveLinformer.*")
ab_emu_gtest(reference "CudaReferenceFp32.*")
# Three tests, so that ctest -j runs the atomic, sparse and deterministic rows' cases side by side.
ab_emu_gtest(flash2_bwd "CudaFlash2BwdHost.*:CudaFlash2Bwd.MatchesFp64ReferenceOnSmallShapes:CudaFlash2Bwd.HeadSplitsMatchFp64")
ab_emu_gtest(flash2_bwd_deterministic "CudaFlash2Bwd.DeterministicRowIsBitIdenticalAndMatchesFp64")
ab_emu_gtest(sparse_bwd "CudaFlash2Bwd.SparseRowMatchesFp64ReferenceOnSmallShapes")
if(ab_emu_san STREQUAL "thread")
  # ~5 min together under TSan on 2 cores: only in the full TSan run
  # (scripts/emu_sanitizers.sh tsan-all); the test command's `tsan` step skips them. The
  # deterministic backward (~440 s under TSan) runs the atomic one's kernel, which the `tsan`
  # step keeps on a subset of its cases (test_flash2_bwd.cpp, ~10x slower under TSan).
  set_tests_properties(emu.unfused emu.flash1 emu.reference emu.flash2_bwd_deterministic
                       PROPERTIES LABELS "nogpu;tsan_full")
endif()
foreach(group main decode)
  add_test(NAME emu.flash2_${group} COMMAND attnbench_emu_flash2 ${group})
endforeach()
set_tests_properties(emu.flash2_main emu.flash2_decode PROPERTIES LABELS nogpu TIMEOUT 300 ENVIRONMENT "${ab_emu_env}")
# The injected faults are races by design (wait_one_less reads a tile another
# thread copies later): not run under TSan.
if(NOT ab_emu_san STREQUAL "thread")
  add_test(NAME emu.flash2_faults COMMAND attnbench_emu_flash2 --faults)
  set_tests_properties(emu.flash2_faults PROPERTIES LABELS nogpu TIMEOUT 300 ENVIRONMENT "${ab_emu_env}")
endif()

# ---- sanitizer controls (sanitizer_controls.cpp) ---------------------------------
# Tiny kernels with one defect each that the build's sanitizer must report
# (the test passes only on that report; exit status ignored), and clean twins.
# TSan: a shared-memory hand-off between two threads of a CTA -- silent with
# __syncthreads or __syncwarp, a race without a barrier or with only a
# shuffle (which the poison cannot show: the writer runs first).
if(ab_emu_san)
  ab_emu_exe(attnbench_emu_san_controls KIND main SOURCES ${ab_emu_dir}/sanitizer_controls.cpp)
  function(ab_emu_control name mode report)
    add_test(NAME emu.${name} COMMAND attnbench_emu_san_controls ${mode})
    set_tests_properties(emu.${name} PROPERTIES LABELS nogpu TIMEOUT 60 ENVIRONMENT "${ab_emu_env}")
    if(report)
      set_tests_properties(emu.${name} PROPERTIES PASS_REGULAR_EXPRESSION "${report}")
    endif()
  endfunction()
  if(ab_emu_san STREQUAL "thread")
    ab_emu_control(tsan.handoff_syncthreads handoff_syncthreads "")
    ab_emu_control(tsan.handoff_syncwarp handoff_syncwarp "")
    ab_emu_control(tsan.missing_barrier handoff_none "WARNING: ThreadSanitizer: data race.*handoff_kernel")
    ab_emu_control(tsan.shuffle_is_no_barrier handoff_shfl "WARNING: ThreadSanitizer: data race.*handoff_kernel")
  endif()
  if(ab_emu_san MATCHES "address")
    ab_emu_control(asan.global_in_bounds global_in_bounds "")
    ab_emu_control(asan.global_past_end global_past_end "ERROR: AddressSanitizer: heap-buffer-overflow.*copy_kernel")
    ab_emu_control(asan.dyn_smem_past_launch dyn_smem_past_launch
                   "ERROR: AddressSanitizer: use-after-poison.*emu_ctl_dyn_smem_kernel")
  endif()
  if(ab_emu_san MATCHES "undefined")
    ab_emu_control(ubsan.signed_overflow signed_overflow "runtime error: signed integer overflow")
  endif()
endif()

# ---- negative controls ----------------------------------------------------------
# ab_emu_negative(NAME FAMILY SOURCE FROM TO TEST_ARGS...): a copy of SOURCE with
# FROM replaced by TO (configure fails when FROM is not found exactly once, so
# a refactor cannot silently disarm the control) replaces the family's object;
# the ctest test passes only if the family's test run on it FAILS (an inverted
# exit status; a crash counts as detected too).
set(ab_emu_expect_fail ${ab_emu_dir}/expect_failure.sh)
function(ab_emu_negative name fam src from to kind)
  file(READ ${src} text)
  ab_mutate(text "${from}" "${to}" "emu negative control ${name} (tests/emu/negative_controls.cmake) in ${src}")
  file(RELATIVE_PATH rel ${CMAKE_SOURCE_DIR} ${src})
  string(PREPEND text "// Generated by tests/emu.cmake: negative control ${name}, a mutated copy of ${rel}.\n")
  file(WRITE ${ab_emu_gen}/neg/${name}.cpp.tmp "${text}")
  configure_file(${ab_emu_gen}/neg/${name}.cpp.tmp ${ab_emu_gen}/neg/${name}.cpp COPYONLY)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${src})
  # The family's other sources stay as they are.
  set(rest)
  foreach(f ${ab_emu_fam_${fam}})
    if(NOT f STREQUAL src)
      list(APPEND rest ${f})
    endif()
  endforeach()
  ab_emu_wrap(rest_wrapped ${rest})
  ab_emu_exe(attnbench_emu_neg_${name} KIND ${kind} SWAP_FAMILY ${fam} SWAP_SOURCE ${ab_emu_gen}/neg/${name}.cpp ${rest_wrapped})
  add_test(NAME emu.neg.${name} COMMAND sh ${ab_emu_expect_fail} $<TARGET_FILE:attnbench_emu_neg_${name}> ${ARGN})
  set_tests_properties(emu.neg.${name} PROPERTIES LABELS nogpu TIMEOUT 300
                       ENVIRONMENT "${ab_emu_env};ATTN_EMU_EXIT_ON_FAILURE=1")
endfunction()
# A control planted in a kernel header (flash2_bwd_kernel.cuh, included by the
# family's instantiations): the mutated copy lies at the header's own relative path under a
# directory searched first, and the family is compiled again against it, swapped in whole.
function(ab_emu_negative_header name fam header from to kind)
  file(READ ${header} text)
  ab_mutate(text "${from}" "${to}" "emu negative control ${name} (tests/emu/negative_controls.cmake) in ${header}")
  file(RELATIVE_PATH rel ${CMAKE_SOURCE_DIR} ${header})
  set(dir ${ab_emu_gen}/neg_header/${name})
  string(PREPEND text "// Generated by tests/emu.cmake: negative control ${name}, a mutated copy of ${rel}.\n")
  file(WRITE ${dir}/${rel}.tmp "${text}")
  configure_file(${dir}/${rel}.tmp ${dir}/${rel} COPYONLY)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${header})
  ab_emu_wrap(fam_wrapped ${ab_emu_fam_${fam}})
  ab_emu_exe(attnbench_emu_neg_${name} KIND ${kind} SWAP_FAMILY ${fam} SWAP_SOURCE ${fam_wrapped})
  target_include_directories(attnbench_emu_neg_${name} BEFORE PRIVATE ${dir})
  add_test(NAME emu.neg.${name} COMMAND sh ${ab_emu_expect_fail} $<TARGET_FILE:attnbench_emu_neg_${name}> ${ARGN})
  set_tests_properties(emu.neg.${name} PROPERTIES LABELS nogpu TIMEOUT 300
                       ENVIRONMENT "${ab_emu_env};ATTN_EMU_EXIT_ON_FAILURE=1")
endfunction()
if(NOT ab_emu_san STREQUAL "thread")
  include(${ab_emu_dir}/negative_controls.cmake)
endif()

# ---- layout oracle (hopper_oracle_test.cpp) --------------------------------------
# The Hopper twins' address maps (emu_hopper_layout.hpp) against CuTe's host
# layout functions: CUTLASS headers from scripts/setup.sh's cache, libcu++
# (cuda/std) and the vector types from the CUDA toolkit's include/cccl and
# include. Plain g++ -std=c++17 (~14 s to compile). Two negative controls
# build it on a mutated copy of the header and must fail. Without the
# headers the test reports itself skipped (exit 77).
if(NOT ab_emu_san STREQUAL "thread")
  set(ab_emu_cache "$ENV{XDG_CACHE_HOME}")
  if(NOT ab_emu_cache)
    set(ab_emu_cache "$ENV{HOME}/.cache")
  endif()
  find_path(ATTNBENCH_CUTE_INCLUDE cute/tensor.hpp HINTS ${ab_emu_cache}/attnbench/cutlass/4.2.0.0/include
            NO_DEFAULT_PATH DOC "CUTLASS/CuTe headers for emu.hopper_oracle (scripts/setup.sh)")
  find_path(ATTNBENCH_CCCL_INCLUDE cuda/std/utility HINTS ${CUDAToolkit_INCLUDE_DIRS}/cccl /usr/local/cuda/include/cccl
            DOC "libcu++ headers (the CUDA toolkit's include/cccl) for emu.hopper_oracle")
  find_path(ATTNBENCH_CUDA_VECTOR_INCLUDE vector_types.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include
            DOC "the CUDA toolkit's include/ (vector_types.h, cuda.h) for emu.hopper_oracle")
  if(ATTNBENCH_CUTE_INCLUDE AND ATTNBENCH_CCCL_INCLUDE AND ATTNBENCH_CUDA_VECTOR_INCLUDE)
    function(ab_emu_oracle name layout_dir)
      add_executable(${name} ${ab_emu_dir}/hopper_oracle_test.cpp)
      target_include_directories(${name} BEFORE PRIVATE ${layout_dir} ${CMAKE_SOURCE_DIR})
      target_include_directories(${name} SYSTEM PRIVATE ${ATTNBENCH_CUTE_INCLUDE} ${ATTNBENCH_CCCL_INCLUDE}
                                 ${ATTNBENCH_CUDA_VECTOR_INCLUDE})
      target_compile_features(${name} PRIVATE cxx_std_17)
      target_compile_options(${name} PRIVATE -O1 -Wno-deprecated-declarations)
      target_link_libraries(${name} PRIVATE GTest::gtest GTest::gtest_main)
    endfunction()
    ab_emu_oracle(attnbench_emu_hopper_oracle ${CMAKE_SOURCE_DIR})
    add_dependencies(attnbench_emu_checks attnbench_emu_hopper_oracle)
    add_test(NAME emu.hopper_oracle COMMAND attnbench_emu_hopper_oracle)
    set_tests_properties(emu.hopper_oracle PROPERTIES LABELS nogpu TIMEOUT 60)
    # Controls: the MN-major no-swizzle layout with LBO and SBO swapped (the
    # ISA's one asymmetric case), the swizzle row taken from address bit 6;
    # for 8-bit elements, 8 per 16-byte chunk (the 16-bit count) in the K-major
    # layouts, and the 8-bit A fragment's second 8 rows at a2..a3 (the 16-bit rule).
    file(READ ${ab_emu_dir}/emu_hopper_layout.hpp ab_layout_text)
    # (No ';' in the patterns: it would split the CMake list.)
    foreach(ctl "mn_interleave_lbo_sbo|off = 2 * e + (mn / 8) * d.sbo + r * 16 + c * d.lbo|off = 2 * e + (mn / 8) * d.lbo + r * 16 + c * d.sbo"
                "swizzle_row_bit6|const std::uint32_t row = ((addr >> 7) - base_offset) & mask|const std::uint32_t row = ((addr >> 6) - base_offset) & mask"
                "kmajor_8bit_chunk|const std::uint32_t T = 16 / bytes, eb = bytes|const std::uint32_t T = 8, eb = bytes"
                "a_fragment_8bit_rows|lane / 4 + 8 * ((i / 4) % 2)|lane / 4 + 8 * ((i / 2) % 2)")
      string(REPLACE "|" ";" ctl "${ctl}")
      list(GET ctl 0 cname)
      list(GET ctl 1 cfrom)
      list(GET ctl 2 cto)
      set(mutated "${ab_layout_text}")
      ab_mutate(mutated "${cfrom}" "${cto}" "emu oracle control ${cname} in emu_hopper_layout.hpp")
      file(WRITE ${ab_emu_gen}/oracle_neg/${cname}/tests/emu/emu_hopper_layout.hpp.tmp "${mutated}")
      configure_file(${ab_emu_gen}/oracle_neg/${cname}/tests/emu/emu_hopper_layout.hpp.tmp
                     ${ab_emu_gen}/oracle_neg/${cname}/tests/emu/emu_hopper_layout.hpp COPYONLY)
      ab_emu_oracle(attnbench_emu_oracle_neg_${cname} ${ab_emu_gen}/oracle_neg/${cname})
      # Passes only on the oracle's own mismatch report (not on any failure,
      # e.g. a binary that did not build).
      add_test(NAME emu.neg.oracle_${cname} COMMAND sh ${ab_emu_expect_fail} $<TARGET_FILE:attnbench_emu_oracle_neg_${cname}>)
      set_tests_properties(emu.neg.oracle_${cname} PROPERTIES LABELS nogpu TIMEOUT 60
                           PASS_REGULAR_EXPRESSION "emulator [0-9]+, CuTe [0-9]+.*negative control OK")
    endforeach()
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${ab_emu_dir}/emu_hopper_layout.hpp)
  else()
    add_test(NAME emu.hopper_oracle COMMAND sh -c "echo 'emu.hopper_oracle skipped: CuTe/CUTLASS headers (run scripts/setup.sh) or the CUDA toolkit include/cccl not found'; exit 77")
    set_tests_properties(emu.hopper_oracle PROPERTIES LABELS nogpu SKIP_RETURN_CODE 77)
  endif()
endif()

include(${ab_emu_dir}/flash3/tests.cmake OPTIONAL)

# The cuda backend's check of every output, and its two negative controls.
include(${ab_emu_dir}/full_check/full_check.cmake)

# ---- coverage: every CUDA source of the product runs here, or says why not ---------------
# Product CUDA sources (kernels/cuda, harness/cuda) against what the emulator targets compile
# (directly, or #included by a generated translation unit: the wrappers, the instance tables). A source in neither list fails static.emu_covers_cuda_sources, so a new kernel cannot
# land without its emulator run. ATTNBENCH_EMU_COVERAGE_PROBE (a path, for that test's
# control) adds a product source that exists nowhere.
set(ab_emu_not_emulated
    "harness/cuda/cuda_backend.cpp|the CUDA runtime's streams and events: the emulator is the runtime"
    "harness/cuda/exp_ceiling.cpp|host timing of the exp kernel (ceiling_kernels.cu is emulated, emu.exp_ceiling)"
    "kernels/cuda/cudnn/cudnn_rows.cpp|cuDNN is a closed library: no source to emulate"
    "kernels/cuda/cudnn/cudnn_sdpa.cpp|cuDNN is a closed library: no source to emulate")
function(ab_emu_coverage_check)
  file(GLOB_RECURSE product RELATIVE ${CMAKE_SOURCE_DIR} ${CMAKE_SOURCE_DIR}/kernels/cuda/*.cu
       ${CMAKE_SOURCE_DIR}/kernels/cuda/*.cpp ${CMAKE_SOURCE_DIR}/harness/cuda/*.cu ${CMAKE_SOURCE_DIR}/harness/cuda/*.cpp)
  list(APPEND product ${ATTNBENCH_EMU_COVERAGE_PROBE})
  set(covered)
  get_property(targets DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(t ${targets})
    if(NOT t MATCHES "^attnbench_emu_")
      continue()
    endif()
    get_target_property(srcs ${t} SOURCES)
    foreach(s ${srcs})
      if(NOT s OR s MATCHES "^\\$<")
        continue()
      endif()
      if(NOT IS_ABSOLUTE "${s}")
        set(s ${CMAKE_CURRENT_SOURCE_DIR}/${s})
      endif()
      string(FIND "${s}" "${ab_emu_gen}/" generated)
      if(generated EQUAL 0)  # a generated TU: the product sources it #includes
        file(STRINGS ${s} lines REGEX "^#include \"(kernels|harness)/cuda/.*\\.(cu|cpp)\"")
        foreach(l ${lines})
          string(REGEX REPLACE "^#include \"([^\"]+)\".*" "\\1" rel "${l}")
          list(APPEND covered ${rel})
        endforeach()
      else()
        file(RELATIVE_PATH rel ${CMAKE_SOURCE_DIR} ${s})
        list(APPEND covered ${rel})
      endif()
    endforeach()
  endforeach()
  set(declared)
  foreach(entry ${ab_emu_not_emulated})
    string(REGEX REPLACE "\\|.*" "" path "${entry}")
    list(APPEND declared ${path})
  endforeach()
  set(missing)
  foreach(f ${product})
    if(NOT f IN_LIST covered AND NOT f IN_LIST declared)
      list(APPEND missing ${f})
    endif()
  endforeach()
  list(JOIN missing "\n" text)
  file(WRITE ${CMAKE_BINARY_DIR}/emu_uncovered_sources.txt "${text}")
  if(missing)
    message(WARNING "CUDA sources not run by the host emulator (add them to a family in tests/emu.cmake, "
                    "or to ab_emu_not_emulated with the reason):\n${text}")
  endif()
endfunction()
cmake_language(DEFER DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} CALL ab_emu_coverage_check)
add_test(NAME static.emu_covers_cuda_sources
         COMMAND sh -c "if [ -s \"$1\" ]; then echo 'CUDA sources the emulator does not run:'; cat \"$1\"; echo; exit 1; fi; echo ok" _
                 ${CMAKE_BINARY_DIR}/emu_uncovered_sources.txt)
set_tests_properties(static.emu_covers_cuda_sources PROPERTIES LABELS "nogpu;static")

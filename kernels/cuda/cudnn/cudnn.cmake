# The cudnn_sdpa row (docs/cudnn.md): built when cudnn-frontend's headers and a cuDNN 9
# (header + library from one prefix) are found; otherwise the row does not exist and
# `attnbench list` does not show it. Included from kernels/cuda/CMakeLists.txt with
# ATTNBENCH_CUDNN_TARGET naming the target the CUDA kernels build into.
#
# Headers: ATTNBENCH_CUDNN_FRONTEND_INCLUDE (the folder holding cudnn_frontend.h), found in
# what scripts/setup.sh unpacks (${XDG_CACHE_HOME:-~/.cache}/attnbench/cudnn_frontend/<v>/include)
# or a copy carried to a machine without network (.debs/root/cudnn_frontend/<v>/include, put
# there by scripts/fetch_debs.sh; or .debs/cudnn_frontend/<v>/include).
# cuDNN: ATTNBENCH_CUDNN_ROOT, else $CUDNN_ROOT / $CUDNN_PATH, the CUDA toolkit, or the
# nvidia-cudnn-cu* wheel of python3 (where PyTorch's environment keeps it).
set(attnbench_cudnn_cache "$ENV{XDG_CACHE_HOME}")
if(NOT attnbench_cudnn_cache)
  set(attnbench_cudnn_cache "$ENV{HOME}/.cache")
endif()
file(GLOB attnbench_fe_candidates
     "${attnbench_cudnn_cache}/attnbench/cudnn_frontend/*/include/cudnn_frontend.h"
     "${CMAKE_SOURCE_DIR}/.debs/cudnn_frontend/*/include/cudnn_frontend.h"
     "${CMAKE_SOURCE_DIR}/.debs/root/cudnn_frontend/*/include/cudnn_frontend.h")
list(SORT attnbench_fe_candidates COMPARE NATURAL ORDER DESCENDING)  # newest version first
list(TRANSFORM attnbench_fe_candidates REPLACE "/cudnn_frontend.h$" "")
find_path(ATTNBENCH_CUDNN_FRONTEND_INCLUDE cudnn_frontend.h HINTS ${attnbench_fe_candidates}
          DOC "cudnn-frontend include folder (holds cudnn_frontend.h)")

set(attnbench_cudnn_prefixes ${ATTNBENCH_CUDNN_ROOT} $ENV{CUDNN_ROOT} $ENV{CUDNN_PATH}
    ${CUDAToolkit_LIBRARY_ROOT} ${CUDAToolkit_TARGET_DIR})
find_program(attnbench_python3 python3)
if(attnbench_python3)
  execute_process(COMMAND ${attnbench_python3} -c
                  "import nvidia.cudnn as m; print(list(m.__path__)[0])"
                  OUTPUT_VARIABLE attnbench_py_cudnn OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET
                  TIMEOUT 30)
  list(APPEND attnbench_cudnn_prefixes ${attnbench_py_cudnn})
endif()
set(attnbench_cudnn_include "")
set(attnbench_cudnn_library "")
foreach(prefix ${attnbench_cudnn_prefixes})
  file(GLOB attnbench_libs "${prefix}/lib/libcudnn.so" "${prefix}/lib64/libcudnn.so"
       "${prefix}/lib/libcudnn.so.9" "${prefix}/lib64/libcudnn.so.9")
  if(EXISTS "${prefix}/include/cudnn.h" AND attnbench_libs)
    set(attnbench_cudnn_include "${prefix}/include")
    list(GET attnbench_libs 0 attnbench_cudnn_library)
    break()
  endif()
endforeach()

if(NOT EXISTS "${ATTNBENCH_CUDNN_FRONTEND_INCLUDE}/cudnn_frontend.h" OR NOT attnbench_cudnn_library)
  message(STATUS "attnbench: cudnn_sdpa row OFF (cudnn-frontend headers: "
                 "${ATTNBENCH_CUDNN_FRONTEND_INCLUDE}; cuDNN library: "
                 "${attnbench_cudnn_library}; scripts/setup.sh fetches the headers)")
  return()
endif()
file(STRINGS "${attnbench_cudnn_include}/cudnn_version.h" attnbench_cudnn_v
     REGEX "#define CUDNN_(MAJOR|MINOR|PATCHLEVEL) +[0-9]+")
string(REGEX REPLACE "[^0-9 ]|CUDNN" "" attnbench_cudnn_v "${attnbench_cudnn_v}")
string(STRIP "${attnbench_cudnn_v}" attnbench_cudnn_v)
string(REGEX REPLACE " +" "." attnbench_cudnn_v "${attnbench_cudnn_v}")
message(STATUS "attnbench: cudnn_sdpa row ON (cuDNN ${attnbench_cudnn_v} at ${attnbench_cudnn_library}, "
               "cudnn-frontend ${ATTNBENCH_CUDNN_FRONTEND_INCLUDE})")

# The row (cudnn_rows.cpp) is in the CUDA module and needs no cuDNN; what runs cuDNN
# (cudnn_sdpa.cpp) is its own module, libattnbench_cudnn.so beside libattnbench_cuda.so,
# the only object that needs libcudnn.so.9 and libnvrtc: the row dlopens it on first use,
# so a cuDNN that does not load disables cudnn_sdpa alone (docs/cudnn.md).
target_sources(${ATTNBENCH_CUDNN_TARGET} PRIVATE ${CMAKE_CURRENT_LIST_DIR}/cudnn_rows.cpp)
target_link_libraries(${ATTNBENCH_CUDNN_TARGET} PUBLIC ${CMAKE_DL_LIBS})
# cuda_rows.cpp adds the row, and tests call cudnn_sdpa.hpp, only where it is built (never in
# the host emulator, which compiles cuda_rows.cpp without it).
target_compile_definitions(${ATTNBENCH_CUDNN_TARGET} PUBLIC ATTNBENCH_WITH_CUDNN
                           ATTNBENCH_CUDNN_MODULE_NAME="libattnbench_cudnn.so")

# One TU (57 s of one core, 1.6 GB, g++ 12 -O3 here); the JSON serialisation it does not use is
# left out (CUDNN_FRONTEND_SKIP_JSON_LIB: 62 s -> 44 s at -O2). Its references into the CUDA
# part (device_runner, stream, cuda_check) stay undefined here and resolve, when it is loaded,
# against the CUDA module (loaded RTLD_GLOBAL) or the executable holding the CUDA objects.
add_library(attnbench_cudnn MODULE ${CMAKE_CURRENT_LIST_DIR}/cudnn_sdpa.cpp)
set_target_properties(attnbench_cudnn PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin
                      POSITION_INDEPENDENT_CODE ON)
target_include_directories(attnbench_cudnn PRIVATE ${CMAKE_SOURCE_DIR} ${CUDAToolkit_INCLUDE_DIRS})
target_include_directories(attnbench_cudnn SYSTEM PRIVATE ${ATTNBENCH_CUDNN_FRONTEND_INCLUDE}
                           ${attnbench_cudnn_include})
target_compile_definitions(attnbench_cudnn PRIVATE ${ATTNBENCH_COMPILE_DEFS} ATTNBENCH_WITH_CUDA
                           ATTNBENCH_WITH_CUDNN CUDNN_FRONTEND_SKIP_JSON_LIB)
target_compile_options(attnbench_cudnn PRIVATE -Wall -Wextra -Wno-missing-field-initializers)
target_link_libraries(attnbench_cudnn PRIVATE ${attnbench_cudnn_library} CUDA::nvrtc CUDA::cudart fmt::fmt
                      nlohmann_json::nlohmann_json)
add_dependencies(attnbench_cuda attnbench_cudnn)  # built with the CUDA module, beside it

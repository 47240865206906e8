// Error checking for CUDA runtime and cuBLAS calls: every failure becomes a
// backend_error carrying the call, the error text and where it happened.
// Errors that poison the context (illegal address, launch failure, ...) are
// marked sticky so the harness ends the process and `--resume` carries on.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "core/errors.hpp"

namespace attnbench::cuda {

inline bool is_sticky(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorHardwareStackError:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable: return true;
    default: return false;
  }
}

// Defined in cuda_check.cpp (host C++: fmt cannot be compiled by nvcc 13).
[[noreturn]] void throw_cuda(cudaError_t e, const char* call, const char* file, int line);
[[noreturn]] void throw_cublas(cublasStatus_t s, const char* call, const char* file, int line);

}  // namespace attnbench::cuda

#define ATTN_CUDA_CHECK(call)                                                                          \
  do {                                                                                                 \
    const cudaError_t attn_err_ = (call);                                                              \
    if (attn_err_ != cudaSuccess) ::attnbench::cuda::throw_cuda(attn_err_, #call, __FILE__, __LINE__); \
  } while (0)

// After a kernel launch: catches bad launch configurations at once.
#define ATTN_CUDA_CHECK_LAUNCH() ATTN_CUDA_CHECK(cudaGetLastError())

#define ATTN_CUBLAS_CHECK(call)                                                                                  \
  do {                                                                                                           \
    const cublasStatus_t attn_st_ = (call);                                                                      \
    if (attn_st_ != CUBLAS_STATUS_SUCCESS) ::attnbench::cuda::throw_cublas(attn_st_, #call, __FILE__, __LINE__); \
  } while (0)

#include "core/cuda/cuda_check.cuh"

#include <fmt/format.h>

namespace attnbench::cuda {

void throw_cuda(cudaError_t e, const char* call, const char* file, int line) {
  throw backend_error(
      fmt::format("{} failed: {} ({}) at {}:{}", call, cudaGetErrorString(e), cudaGetErrorName(e), file, line),
      is_sticky(e));
}

void throw_cublas(cublasStatus_t s, const char* call, const char* file, int line) {
  throw backend_error(
      fmt::format("{} failed: {} ({}) at {}:{}", call, cublasGetStatusString(s), cublasGetStatusName(s), file, line));
}

}  // namespace attnbench::cuda

#include <cuda_runtime.h>

#include "core/cuda/device_buffer.cuh"

namespace attnbench::cuda {

cudaStream_t stream() {
  static cudaStream_t s = [] {
    cudaStream_t created = nullptr;
    ATTN_CUDA_CHECK(cudaStreamCreateWithFlags(&created, cudaStreamNonBlocking));
    return created;
  }();
  return s;
}

}  // namespace attnbench::cuda

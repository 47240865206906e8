// RAII device allocation and the one stream every attnbench launch uses.
#pragma once

#include <cstddef>
#include <cuda_runtime.h>
#include <utility>

#include "core/cuda/cuda_check.cuh"

namespace attnbench::cuda {

// The stream all runners enqueue on and the timer records events on.
cudaStream_t stream();

class device_buffer {
 public:
  device_buffer() = default;
  explicit device_buffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes_ > 0) ATTN_CUDA_CHECK(cudaMalloc(&ptr_, bytes_));
  }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  device_buffer(device_buffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  device_buffer& operator=(device_buffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  ~device_buffer() {
    if (ptr_) cudaFree(ptr_);
  }
  template <class T = void>
  T* get() const {
    return static_cast<T*>(ptr_);
  }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace attnbench::cuda

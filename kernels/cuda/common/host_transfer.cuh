// Host <-> device copies of the runners' tensors, converting each element between
// float (the harness's host layout) and the device element type T; synchronous on
// cuda::stream(). Include after device_runner.cuh.
#pragma once

#include <vector>

#include "core/cuda/dtype_traits.cuh"

namespace attnbench::cuda {

// A new device buffer holding `src` as is: the fp32 parameters of the scan and approximation
// rows, uploaded once by their runners' constructors (outside the timed region).
inline device_buffer uploaded(const std::vector<float>& src) {
  device_buffer b(src.size() * sizeof(float));
  ATTN_CUDA_CHECK(cudaMemcpyAsync(b.get(), src.data(), src.size() * sizeof(float), cudaMemcpyHostToDevice, stream()));
  ATTN_CUDA_CHECK(cudaStreamSynchronize(stream()));
  return b;
}

template <class T>
void upload_as(device_buffer& dst, const std::vector<float>& src) {
  std::vector<T> tmp(src.size());
  for (std::size_t i = 0; i < src.size(); ++i) tmp[i] = from_float<T>(src[i]);
  ATTN_CUDA_CHECK(cudaMemcpyAsync(dst.get(), tmp.data(), tmp.size() * sizeof(T), cudaMemcpyHostToDevice, stream()));
  ATTN_CUDA_CHECK(cudaStreamSynchronize(stream()));
}

template <class T>
std::vector<float> download_as(const device_buffer& src, std::size_t n) {
  std::vector<T> tmp(n);
  ATTN_CUDA_CHECK(cudaMemcpyAsync(tmp.data(), src.get(), n * sizeof(T), cudaMemcpyDeviceToHost, stream()));
  ATTN_CUDA_CHECK(cudaStreamSynchronize(stream()));
  std::vector<float> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = to_float(tmp[i]);
  return out;
}

}  // namespace attnbench::cuda

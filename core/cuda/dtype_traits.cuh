// Element types of the CUDA backend and host-side conversions from float.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <stdexcept>

#include "core/problem.hpp"

namespace attnbench::cuda {

template <class T>
struct dtype_of;
template <>
struct dtype_of<float> {
  static constexpr dtype value = dtype::fp32;
};
template <>
struct dtype_of<__half> {
  static constexpr dtype value = dtype::fp16;
};
template <>
struct dtype_of<__nv_bfloat16> {
  static constexpr dtype value = dtype::bf16;
};

__host__ __device__ inline float to_float(float x) { return x; }
__host__ __device__ inline float to_float(__half x) { return __half2float(x); }
__host__ __device__ inline float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

template <class T>
__host__ __device__ inline T from_float(float x);
template <>
__host__ __device__ inline float from_float<float>(float x) {
  return x;
}
template <>
__host__ __device__ inline __half from_float<__half>(float x) {
  return __float2half_rn(x);
}
template <>
__host__ __device__ inline __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

// Calls f(T{}) with T the element type of t. e4m3 has no element type here:
// its buffers hold codes with a per-tensor scale (device_runner), and a
// kernel written for float/half/bf16 elements must not be handed them, so
// e4m3 throws (callers branch on it first; its O is output_dtype's).
template <class F>
decltype(auto) dispatch_dtype(dtype t, F&& f) {
  switch (t) {
    case dtype::fp16: return f(__half{});
    case dtype::bf16: return f(__nv_bfloat16{});
    case dtype::e4m3:
      throw std::logic_error("dispatch_dtype: e4m3 has no element type; handle its codes and scales first");
    case dtype::fp32: break;
  }
  return f(float{});
}

}  // namespace attnbench::cuda

// Kernels behind the measured ceilings: a 16-byte-access copy for bandwidth
// and a random fill for the GEMM operands (never time on zeros).
#include "harness/cuda/ceiling_kernels.hpp"

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/dtype_traits.cuh"
#include "core/cuda/launch.cuh"

namespace attnbench::cuda {

namespace {

__device__ inline std::uint64_t mix(std::uint64_t x) {  // splitmix64 finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

template <class T>
__global__ void fill_uniform_kernel(T* p, std::int64_t n, std::uint64_t seed) {
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const float u = static_cast<float>(mix(seed ^ mix(static_cast<std::uint64_t>(i))) >> 40) *
                    (1.f / 16777216.f);  // [0, 1)
    p[i] = from_float<T>(2.f * u - 1.f);
  }
}

__global__ void copy16_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst,
                              std::int64_t n) {
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

// Grid-stride kernels: 32 blocks per SM. The SM count is asked of the device;
// a failure is a backend_error, never a silent 1-SM grid (an understated copy
// ceiling, issue 9 item 5).
unsigned grid_for(std::int64_t n, int threads) {
  int dev = 0, sms = 0;
  ATTN_CUDA_CHECK(cudaGetDevice(&dev));
  ATTN_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  const std::int64_t want = (n + threads - 1) / threads, cap = std::int64_t(sms) * 32;
  return static_cast<unsigned>(want < cap ? (want > 0 ? want : 1) : cap);
}

}  // namespace

void fill_uniform(void* ptr, dtype t, std::int64_t n, std::uint64_t seed, cudaStream_t st) {
  dispatch_dtype(t, [&](auto x) {
    using T = decltype(x);
    launch(fill_uniform_kernel<T>, grid_for(n, 256), 256, 0, st, static_cast<T*>(ptr), n, seed);
  });
  ATTN_CUDA_CHECK_LAUNCH();
}

void launch_copy16(const void* src, void* dst, std::size_t bytes, cudaStream_t st) {
  const std::int64_t n = static_cast<std::int64_t>(bytes / 16);
  launch(copy16_kernel, grid_for(n, 256), 256, 0, st, static_cast<const uint4*>(src),
         static_cast<uint4*>(dst), n);
  ATTN_CUDA_CHECK_LAUNCH();
}

}  // namespace attnbench::cuda

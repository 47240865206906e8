// Kernels behind the measured ceilings: a 16-byte-access copy for bandwidth,
// a random fill for the GEMM operands (never time on zeros) and independent
// ex2.approx chains for the exp rate.
#include "harness/cuda/ceiling_kernels.hpp"

#include <cmath>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/dtype_traits.cuh"
#include "core/cuda/launch.cuh"
#include "kernels/cuda/flash2/flash2_ptx.cuh"  // f2::fast_exp2: ex2.approx.ftz.f32 (the emulator's twin under ATTN_EMULATE)

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
    const float u =
        static_cast<float>(mix(seed ^ mix(static_cast<std::uint64_t>(i))) >> 40) * (1.f / 16777216.f);  // [0, 1)
    p[i] = from_float<T>(2.f * u - 1.f);
  }
}

__global__ void copy16_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst, std::int64_t n) {
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

// The exp ceiling: 8 independent chains per thread, one MUFU.EX2 per chain and step
// (the negation folds into the next ex2's operand), 256 threads per block and enough
// blocks for 2048 threads per SM: dozens of independent ex2 per SM sub-partition in
// flight against a latency of a few tens of cycles. The step loop is unrolled by 4.
__global__ void __launch_bounds__(exp2_chain_threads) exp2_chains_kernel(float* out, int steps) {
  float x[exp2_chains_per_thread];
#pragma unroll
  for (int c = 0; c < exp2_chains_per_thread; ++c) x[c] = exp2_chain_start(c);
#pragma unroll 4
  for (int s = 0; s < steps; ++s) {
#pragma unroll
    for (int c = 0; c < exp2_chains_per_thread; ++c) x[c] = -f2::fast_exp2(x[c]);
  }
  float sum = 0.f;
#pragma unroll
  for (int c = 0; c < exp2_chains_per_thread; ++c) sum += x[c];
  out[std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x] = sum;
}

// Grid-stride kernels: 32 blocks per SM. The SM count is asked of the device;
// a failure is a backend_error, never a silent 1-SM grid (an understated
// copy ceiling).
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

void launch_exp2_chains(float* out, const exp2_chains_launch& l, cudaStream_t st) {
  launch(exp2_chains_kernel, l.blocks, exp2_chain_threads, 0, st, out, l.steps);
  ATTN_CUDA_CHECK_LAUNCH();
}

float exp2_chains_expected_sum(int steps) {
  float sum = 0.f;
  for (int c = 0; c < exp2_chains_per_thread; ++c) {
    float x = exp2_chain_start(c);
    for (int s = 0; s < steps && s < 200; ++s) x = -std::exp2(x);  // converged long before 200
    sum += x;
  }
  return sum;
}

std::int64_t exp2_chains_first_wrong(const float* out, std::int64_t threads, int steps) {
  const float want = exp2_chains_expected_sum(steps);
  for (std::int64_t t = 0; t < threads; ++t)
    if (!(std::fabs(out[t] - want) <= 1e-5f * std::fabs(want))) return t;
  return -1;
}

void launch_copy16(const void* src, void* dst, std::size_t bytes, cudaStream_t st) {
  const std::int64_t n = static_cast<std::int64_t>(bytes / 16);
  launch(copy16_kernel, grid_for(n, 256), 256, 0, st, static_cast<const uint4*>(src), static_cast<uint4*>(dst), n);
  ATTN_CUDA_CHECK_LAUNCH();
}

}  // namespace attnbench::cuda

// naive and cublas_unfused, pass 2: row-wise masked softmax of the scores.
//
// Idea: one block of 128 threads per query row. Pass over the row once with
// an online (max, sum) per thread, combine the pairs across the block, then
// pass again writing P = exp(s - m) / l (0 where masked) and the row's
// log-sum-exp. Visibility comes from core/mask.hpp is_visible, the one
// definition every kernel uses. A row with no visible key gets P = 0 (so O =
// 0, never NaN) and lse = -inf.
// Expected bottleneck: memory: S is read twice and P written once, 12 bytes
// (fp32 P) or 10 bytes (fp16/bf16 P) per score for a handful of FLOPs.
#include <cmath>
#include <cstdint>

#include "core/mask.hpp"
#include "core/cuda/cuda_check.cuh"
#include "core/cuda/dtype_traits.cuh"
#include "core/cuda/launch.cuh"
#include "kernels/cuda/unfused/unfused_kernels.cuh"

namespace attnbench::cuda {

namespace {

constexpr int threads = 128;

// Merges (m2, l2) into (m, l): l is a sum of exp(s - m).
__device__ inline void merge(float& m, float& l, float m2, float l2) {
  const float mx = fmaxf(m, m2);
  if (mx == -INFINITY) return;  // both empty
  l = (m == -INFINITY ? 0.f : l * expf(m - mx)) + (m2 == -INFINITY ? 0.f : l2 * expf(m2 - mx));
  m = mx;
}

template <class TP>
__global__ void __launch_bounds__(threads) masked_softmax_kernel(problem p, const float* s, TP* prob, float* lse) {
  const std::int64_t row = blockIdx.x;
  const std::int64_t i = row % p.Nq;
  const float* srow = s + row * p.Nkv;
  TP* prow = prob + row * p.Nkv;

  float m = -INFINITY, l = 0.f;
  for (std::int64_t j = threadIdx.x; j < p.Nkv; j += threads) {
    const float x = srow[j];
    if (!is_visible(p, i, j)) continue;
    if (x > m) {
      l = (m == -INFINITY ? 0.f : l * expf(m - x)) + 1.f;
      m = x;
    } else {
      l += expf(x - m);
    }
  }
  for (int off = 16; off > 0; off /= 2)
    merge(m, l, __shfl_xor_sync(0xffffffffu, m, off), __shfl_xor_sync(0xffffffffu, l, off));
  __shared__ float sm[threads / 32], sl[threads / 32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) {
    sm[warp] = m;
    sl[warp] = l;
  }
  __syncthreads();
  m = sm[0];
  l = sl[0];
  for (int w = 1; w < threads / 32; ++w) merge(m, l, sm[w], sl[w]);

  const float inv_l = l > 0.f ? 1.f / l : 0.f;
  for (std::int64_t j = threadIdx.x; j < p.Nkv; j += threads) {
    const float x = srow[j];
    const float v = (l > 0.f && is_visible(p, i, j)) ? expf(x - m) * inv_l : 0.f;
    prow[j] = from_float<TP>(v);
  }
  if (threadIdx.x == 0) lse[row] = l > 0.f ? m + logf(l) : -INFINITY;
}

}  // namespace

void launch_masked_softmax(const problem& p, const float* s, void* prob, bool p_fp32, float* lse, cudaStream_t st) {
  const unsigned rows = static_cast<unsigned>(p.rows());
  if (p_fp32) {
    launch(masked_softmax_kernel<float>, rows, threads, 0, st, p, s, static_cast<float*>(prob), lse);
  } else {
    dispatch_dtype(p.type, [&](auto t) {
      using T = decltype(t);
      launch(masked_softmax_kernel<T>, rows, threads, 0, st, p, s, static_cast<T*>(prob), lse);
    });
  }
  ATTN_CUDA_CHECK_LAUNCH();
}

}  // namespace attnbench::cuda

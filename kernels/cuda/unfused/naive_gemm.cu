// naive (cuda), passes 1 and 3: a plain shared-memory tiled GEMM.
//
// Idea: the textbook unfused attention. Pass 1 computes every score
// S = QK^T / sqrt(d) into global memory (fp32), pass 2 (masked_softmax.cu)
// turns each row into probabilities P (fp32), pass 3 computes O = PV. Each
// pass is a separate kernel; this file holds the GEMM used by passes 1 and 3
// (32 x 32 output tile per block, 256 threads with four outputs each, k-step
// 32 staged through shared memory) and the K/V head expansion of
// naive_gqa_expand. Predecessor: none; this is the first CUDA variant and the
// reference point for "what fusion buys".
// Expected bottleneck: memory. S and P are Nq x Nkv fp32 per head, written and
// read back (five passes over Nq*Nkv*4 bytes) while each score costs only 2d
// FLOPs; the CUDA-core GEMM itself reaches a few TFLOP/s at best.
#include <cstdint>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/dtype_traits.cuh"
#include "core/cuda/launch.cuh"
#include "kernels/cuda/unfused/unfused_kernels.cuh"

namespace attnbench::cuda {

namespace {

constexpr int tile = 32;          // kernels/models/models.hpp cuda_naive_tile
constexpr int rows_per_pass = 8;  // blockDim = (32, 8)

struct gemm_args {
  const void* a;
  const void* b;
  void* c;
  std::int64_t M, N, K;
  std::int64_t lda, ldb, ldc;
  std::int64_t stride_a, stride_b, stride_c;  // per query head / per KV head / per query head
  std::int64_t H, group;
  float alpha;
};

// C[z][m, n] = alpha * sum_k A[z][m, k] * B[kv(z)](n, k), where B(n, k) is
// B[n * ldb + k] when b_k_major (K of QK^T) and B[k * ldb + n] otherwise (V).
template <class TA, class TB, bool b_k_major, class TC>
__global__ void __launch_bounds__(tile* rows_per_pass) tiled_gemm_kernel(gemm_args g) {
  __shared__ float as[tile][tile + 1];
  __shared__ float bs[tile][tile + 1];  // bs[n][k]
  const int tx = threadIdx.x, ty = threadIdx.y;
  const std::int64_t z = blockIdx.z;
  const std::int64_t kvz = (z / g.H) * (g.H / g.group) + (z % g.H) / g.group;
  const TA* a = static_cast<const TA*>(g.a) + z * g.stride_a;
  const TB* b = static_cast<const TB*>(g.b) + kvz * g.stride_b;
  TC* c = static_cast<TC*>(g.c) + z * g.stride_c;
  const std::int64_t m0 = std::int64_t(blockIdx.y) * tile, n0 = std::int64_t(blockIdx.x) * tile;

  float acc[tile / rows_per_pass] = {};
  for (std::int64_t k0 = 0; k0 < g.K; k0 += tile) {
    for (int r = ty; r < tile; r += rows_per_pass) {
      const std::int64_t m = m0 + r, k = k0 + tx;
      as[r][tx] = (m < g.M && k < g.K) ? to_float(a[m * g.lda + k]) : 0.f;
      if constexpr (b_k_major) {
        const std::int64_t n = n0 + r;
        bs[r][tx] = (n < g.N && k < g.K) ? to_float(b[n * g.ldb + k]) : 0.f;
      } else {
        const std::int64_t kk = k0 + r, n = n0 + tx;
        bs[tx][r] = (kk < g.K && n < g.N) ? to_float(b[kk * g.ldb + n]) : 0.f;
      }
    }
    __syncthreads();
#pragma unroll 8
    for (int kk = 0; kk < tile; ++kk) {
      const float bv = bs[tx][kk];
#pragma unroll
      for (int i = 0; i < tile / rows_per_pass; ++i) acc[i] += as[ty + i * rows_per_pass][kk] * bv;
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < tile / rows_per_pass; ++i) {
    const std::int64_t m = m0 + ty + i * rows_per_pass, n = n0 + tx;
    if (m < g.M && n < g.N) c[m * g.ldc + n] = from_float<TC>(g.alpha * acc[i]);
  }
}

template <class TA, class TB, bool b_k_major, class TC>
void launch_gemm(const gemm_args& g, std::int64_t batch, cudaStream_t st) {
  const dim3 grid(static_cast<unsigned>((g.N + tile - 1) / tile), static_cast<unsigned>((g.M + tile - 1) / tile),
                  static_cast<unsigned>(batch));
  launch(tiled_gemm_kernel<TA, TB, b_k_major, TC>, grid, dim3(tile, rows_per_pass), 0, st, g);
  ATTN_CUDA_CHECK_LAUNCH();
}

// Copies 16-byte units: a head of K or V is Nkv * d * e bytes, a multiple of
// 16 because d is a multiple of 8 and e >= 2.
__global__ void expand_kv_kernel(const uint4* src, uint4* dst, std::int64_t units_per_head, std::int64_t H,
                                 std::int64_t group, std::int64_t total) {
  const std::int64_t Hkv = H / group;
  for (std::int64_t u = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; u < total;
       u += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t z = u / units_per_head, r = u % units_per_head;
    const std::int64_t kvz = (z / H) * Hkv + (z % H) / group;
    dst[u] = src[kvz * units_per_head + r];
  }
}

}  // namespace

void launch_naive_scores(const problem& p, const void* q, const void* k, float* s, float alpha, cudaStream_t st) {
  const gemm_args g{q,     k,          s,           p.Nq,         p.Nkv, p.d,       p.d,  p.d,
                    p.Nkv, p.Nq * p.d, p.Nkv * p.d, p.Nq * p.Nkv, p.H,   p.group(), alpha};
  const std::int64_t batch = p.B * p.H;
  dispatch_dtype(p.type, [&](auto t) {
    using T = decltype(t);
    launch_gemm<T, T, true, float>(g, batch, st);
  });
}

void launch_naive_output(const problem& p, const float* prob, const void* v, void* o, cudaStream_t st) {
  const gemm_args g{prob,         v,           o,          p.Nq, p.d,       p.Nkv, p.Nkv, p.d, p.d,
                    p.Nq * p.Nkv, p.Nkv * p.d, p.Nq * p.d, p.H,  p.group(), 1.f};
  const std::int64_t batch = p.B * p.H;
  dispatch_dtype(p.type, [&](auto t) {
    using T = decltype(t);
    launch_gemm<float, T, false, T>(g, batch, st);
  });
}

void launch_expand_kv(const problem& p, const void* src, void* dst, cudaStream_t st) {
  const std::int64_t units_per_head = p.Nkv * p.d * dtype_bytes(p.type) / 16;
  const std::int64_t total = p.B * p.H * units_per_head;
  const std::int64_t blocks = std::min<std::int64_t>((total + 255) / 256, 65536);
  launch(expand_kv_kernel, static_cast<unsigned>(blocks), 256, 0, st, static_cast<const uint4*>(src),
         static_cast<uint4*>(dst), units_per_head, p.H, p.group(), total);
  ATTN_CUDA_CHECK_LAUNCH();
}

}  // namespace attnbench::cuda

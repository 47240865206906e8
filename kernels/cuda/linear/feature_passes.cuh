// The two passes of feature-map linear attention on CUDA, shared by `linear` (elu + 1 applied
// on load, kernels/cuda/linear/linear.cu) and `performer` (FAVOR+ features precomputed,
// kernels/cuda/approx/performer.cu): O_i = phi(q_i)^T S / phi(q_i)^T z with S = sum_j phi(k_j)
// v_j^T (F x d) and z = sum_j phi(k_j). The state [S | z] (F x (d+1), fp32, V augmented with a
// ones column) is built per KV head by a state pass: one block per (b, KV head, 32 state
// rows) walks the keys in order, 16 at a time through shared memory. Non-causal: the final
// state feeds an output pass (one block per 16 query rows reads the state). Causal (a chunked
// scan, chunk = Bc): the state pass writes the exclusive prefix state at the start of every
// key chunk that holds query rows (the last chunk's keys are never needed), and the output
// pass adds, for each 16-row tile (in aligned positions i' = i + Nkv - Nq, so a tile sits in
// one chunk), the prefix state's contribution plus the masked intra-chunk block
// sum_{c*Bc <= j <= i'} (phi(q_i).phi(k_j)) [v_j, 1]. Rows with i' < 0 are the runner's to
// zero. A feature map `Map` supplies F <= 256 (map.F) and phi: map.key(kvz, j, f) for key j
// of (b, KV head) kvz, map.query(z, i, f) for query row i of (b, head) z.
#pragma once

#include <cstdint>

#include "core/cuda/dtype_traits.cuh"
#include "core/mask.hpp"
#include "core/tiles.hpp"

namespace attnbench::cuda::feature_passes {

constexpr int state_rows = 32;          // cuda_linear_state_rows, cuda_performer_state_rows
constexpr int key_step = 16;            // keys staged per step (min Bc = 16, so chunks align)
constexpr int out_rows = 16;            // cuda_linear_rows
constexpr int max_cols_per_thread = 2;  // d + 1 <= 257 columns over <= 256 threads
constexpr int max_features = 256;

__host__ __device__ inline std::int64_t imin(std::int64_t a, std::int64_t b) { return a < b ? a : b; }
__host__ __device__ inline bool causal(const problem& p) { return p.mask.kind == mask_kind::causal; }

struct pass_args {
  const void* v;
  void* o;
  float* state;  // [B*Hkv, n_states, F, d+1]
  std::int64_t n_states, first_chunk;
};

// State pass: block (state-row tile, b * Hkv + hk); thread owns columns
// c = tid + i * blockDim.x of the augmented state (c == d is z).
template <class T, class Map>
__global__ void __launch_bounds__(256) feature_state_kernel(problem p, pass_args a, Map map) {
  __shared__ float pk[key_step][state_rows];
  const std::int64_t d = p.d, F = map.F, kvz = blockIdx.y, a0 = std::int64_t(blockIdx.x) * state_rows;
  const std::int64_t na = imin(state_rows, F - a0);
  const T* v = static_cast<const T*>(a.v) + kvz * p.Nkv * d;
  float* state = a.state + kvz * a.n_states * F * (d + 1);
  const int tid = threadIdx.x, nt = blockDim.x;
  const std::int64_t kend = causal(p) ? (ceil_div(p.Nkv, p.Bc) - 1) * p.Bc : p.Nkv;

  float acc[max_cols_per_thread][state_rows] = {};
  auto write_state = [&](std::int64_t s) {
    float* dst = state + s * F * (d + 1);
#pragma unroll
    for (int ci = 0; ci < max_cols_per_thread; ++ci) {
      const std::int64_t c = tid + std::int64_t(ci) * nt;
      if (c > d) continue;
#pragma unroll
      for (int r = 0; r < state_rows; ++r)
        if (r < na) dst[(a0 + r) * (d + 1) + c] = acc[ci][r];
    }
  };

  for (std::int64_t j0 = 0; j0 < kend; j0 += key_step) {
    if (causal(p) && j0 % p.Bc == 0 && j0 / p.Bc >= a.first_chunk)
      write_state(j0 / p.Bc - a.first_chunk);  // exclusive prefix of chunk j0 / Bc
    const std::int64_t nk = imin(key_step, kend - j0);
    __syncthreads();
    for (int e = tid; e < key_step * state_rows; e += nt) {
      const int kk = e / state_rows, r = e % state_rows;
      pk[kk][r] = (kk < nk && r < na) ? map.key(kvz, j0 + kk, a0 + r) : 0.f;
    }
    __syncthreads();
    for (int kk = 0; kk < nk; ++kk) {
#pragma unroll
      for (int ci = 0; ci < max_cols_per_thread; ++ci) {
        const std::int64_t c = tid + std::int64_t(ci) * nt;
        if (c > d) continue;
        const float vv = c < d ? to_float(v[(j0 + kk) * d + c]) : 1.f;
#pragma unroll
        for (int r = 0; r < state_rows; ++r) acc[ci][r] += pk[kk][r] * vv;
      }
    }
  }
  write_state(causal(p) ? kend / p.Bc - a.first_chunk : 0);
}

// Output pass: block (row tile, b * H + h). Non-causal tiles are 16 query
// rows; causal tiles are 16 aligned positions i' (rows i = i' - shift).
template <class T, class Map>
__global__ void __launch_bounds__(256) feature_output_kernel(problem p, pass_args a, Map map) {
  __shared__ float pq[out_rows][max_features + 1];  // phi(Q) rows, stride F + 1
  __shared__ float pk[key_step][max_features + 1];  // phi(K) keys (causal intra-chunk part)
  __shared__ float w[out_rows][key_step + 1];
  __shared__ float den[out_rows];
  const std::int64_t d = p.d, F = map.F, z = blockIdx.y;
  const std::int64_t kvz = (z / p.H) * p.Hkv + (z % p.H) / p.group();
  const std::int64_t shift = p.Nkv - p.Nq, t0 = std::int64_t(blockIdx.x) * out_rows;
  const int tid = threadIdx.x, nt = blockDim.x;

  std::int64_t i_first, R, kstart = 0, kend = 0, s_index = 0;
  if (causal(p)) {
    const std::int64_t lo = max(t0, shift), hi = min(t0 + out_rows, p.Nkv);
    R = hi - lo;
    i_first = lo - shift;
    const std::int64_t c = t0 / p.Bc;
    s_index = c - a.first_chunk;
    kstart = c * p.Bc;
    kend = hi;  // keys up to the tile's last aligned position
  } else {
    i_first = t0;
    R = imin(out_rows, p.Nq - t0);
  }
  if (R <= 0) return;

  const T* v = static_cast<const T*>(a.v) + kvz * p.Nkv * d;
  T* o = static_cast<T*>(a.o) + (z * p.Nq + i_first) * d;
  const float* state = a.state + (kvz * a.n_states + s_index) * F * (d + 1);

  const int fi = static_cast<int>(F);  // 32-bit tile-local indices (no 64-bit division)
  for (int e = tid; e < out_rows * fi; e += nt) {
    const int r = e / fi, x = e % fi;
    pq[r][x] = r < R ? map.query(z, i_first + r, x) : 0.f;
  }
  __syncthreads();

  float acc[max_cols_per_thread][out_rows] = {};
  for (std::int64_t x = 0; x < F; ++x) {
#pragma unroll
    for (int ci = 0; ci < max_cols_per_thread; ++ci) {
      const std::int64_t c = tid + std::int64_t(ci) * nt;
      if (c > d) continue;
      const float s = state[x * (d + 1) + c];
#pragma unroll
      for (int r = 0; r < out_rows; ++r) acc[ci][r] += pq[r][x] * s;
    }
  }

  for (std::int64_t kb = kstart; kb < kend; kb += key_step) {
    const std::int64_t nk = imin(key_step, kend - kb);
    for (int e = tid; e < key_step * fi; e += nt) {
      const int kk = e / fi, x = e % fi;
      pk[kk][x] = kk < nk ? map.key(kvz, kb + kk, x) : 0.f;
    }
    __syncthreads();
    for (int e = tid; e < out_rows * key_step; e += nt) {
      const int r = e / key_step, kk = e % key_step;
      float dot = 0.f;
      if (r < R && kk < nk) {
        for (std::int64_t x = 0; x < F; ++x) dot += pq[r][x] * pk[kk][x];
        if (kb + kk > i_first + r + shift) dot = 0.f;  // causal: j <= i'
      }
      w[r][kk] = dot;
    }
    __syncthreads();
    for (int kk = 0; kk < nk; ++kk) {
#pragma unroll
      for (int ci = 0; ci < max_cols_per_thread; ++ci) {
        const std::int64_t c = tid + std::int64_t(ci) * nt;
        if (c > d) continue;
        const float vv = c < d ? to_float(v[(kb + kk) * d + c]) : 1.f;
#pragma unroll
        for (int r = 0; r < out_rows; ++r) acc[ci][r] += w[r][kk] * vv;
      }
    }
    __syncthreads();
  }

#pragma unroll
  for (int ci = 0; ci < max_cols_per_thread; ++ci) {
    if (tid + std::int64_t(ci) * nt == d) {
#pragma unroll
      for (int r = 0; r < out_rows; ++r) den[r] = acc[ci][r];
    }
  }
  __syncthreads();
#pragma unroll
  for (int ci = 0; ci < max_cols_per_thread; ++ci) {
    const std::int64_t c = tid + std::int64_t(ci) * nt;
    if (c >= d) continue;
#pragma unroll
    for (int r = 0; r < out_rows; ++r)
      if (r < R) o[r * d + c] = from_float<T>(acc[ci][r] / den[r]);
  }
}

}  // namespace attnbench::cuda::feature_passes

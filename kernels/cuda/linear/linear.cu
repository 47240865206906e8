// linear (cuda): linear attention with the feature map phi(x) = elu(x) + 1.
//
// Idea: O_i = phi(q_i)^T S / phi(q_i)^T z with S = sum_j phi(k_j) v_j^T and
// z = sum_j phi(k_j), so the cost is linear in the sequence length. The state
// [S | z] (d x (d+1), fp32, V augmented with a ones column) is built per KV
// head by a state pass: one block per (b, KV head, 32 state rows) walks the
// keys in order, 16 at a time through shared memory. Non-causal: the final
// state feeds an output pass (one block per 16 query rows reads the state).
// Causal (a chunked scan, chunk = Bc): the state pass writes the exclusive
// prefix state at the start of every key chunk that holds query rows (the
// last chunk's keys are never needed), and the output pass adds, for each
// 16-row tile (in aligned positions i' = i + Nkv - Nq, so a tile sits in one
// chunk), the prefix state's contribution plus the masked intra-chunk block
// sum_{c*Bc <= j <= i'} (phi(q_i).phi(k_j)) [v_j, 1]. Rows with i' < 0 see no
// key and are written as zeros. Only masks none and causal exist for linear
// attention here. Predecessor: none on the GPU; this is the linear-time
// alternative the softmax variants are compared with.
// Expected bottleneck: the state pass's sequential walk over the keys
// (B*Hkv*d/32 blocks, each d+1 FMAs per key per thread: latency-bound at small
// batch), then the output pass's state reads (4d(d+1) bytes per 16 rows).
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>

#include "core/mask.hpp"
#include "kernels/models/models.hpp"
#include "core/cuda/launch_limits.hpp"
#include "kernels/cuda/common/device_runner.cuh"
#include "core/cuda/dtype_traits.cuh"
#include "core/cuda/launch.cuh"

namespace attnbench {

namespace cuda {
namespace {

constexpr int state_rows = 32;          // cuda_linear_state_rows
constexpr int key_step = 16;            // keys staged per step (min Bc = 16, so chunks align)
constexpr int out_rows = 16;            // cuda_linear_rows
constexpr int max_cols_per_thread = 2;  // d + 1 <= 257 columns over <= 256 threads

__host__ __device__ inline std::int64_t imin(std::int64_t a, std::int64_t b) { return a < b ? a : b; }
__device__ inline float phi(float x) { return x > 0.f ? x + 1.f : expf(x); }

struct linear_args {
  const void *q, *k, *v;
  void* o;
  float* state;  // [B*Hkv, n_states, d, d+1]
  std::int64_t n_states, first_chunk;
};

__host__ __device__ inline bool causal(const problem& p) { return p.mask.kind == mask_kind::causal; }

// State pass: block (state-row tile, b * Hkv + hk); thread owns columns
// c = tid + i * blockDim.x of the augmented state (c == d is z).
template <class T>
__global__ void __launch_bounds__(256) linear_state_kernel(problem p, linear_args a) {
  __shared__ float pk[key_step][state_rows];
  const std::int64_t d = p.d, kvz = blockIdx.y, a0 = std::int64_t(blockIdx.x) * state_rows;
  const std::int64_t na = imin(state_rows, d - a0);
  const T* k = static_cast<const T*>(a.k) + kvz * p.Nkv * d;
  const T* v = static_cast<const T*>(a.v) + kvz * p.Nkv * d;
  float* state = a.state + kvz * a.n_states * d * (d + 1);
  const int tid = threadIdx.x, nt = blockDim.x;
  const std::int64_t kend = causal(p) ? (ceil_div(p.Nkv, p.Bc) - 1) * p.Bc : p.Nkv;

  float acc[max_cols_per_thread][state_rows] = {};
  auto write_state = [&](std::int64_t s) {
    float* dst = state + s * d * (d + 1);
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
      pk[kk][r] = (kk < nk && r < na) ? phi(to_float(k[(j0 + kk) * d + a0 + r])) : 0.f;
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
template <class T>
__global__ void __launch_bounds__(256) linear_output_kernel(problem p, linear_args a) {
  __shared__ float pq[out_rows][257];  // phi(Q) rows, stride d + 1
  __shared__ float pk[key_step][257];  // phi(K) keys (causal intra-chunk part)
  __shared__ float w[out_rows][key_step + 1];
  __shared__ float den[out_rows];
  const std::int64_t d = p.d, z = blockIdx.y;
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

  const T* q = static_cast<const T*>(a.q) + (z * p.Nq + i_first) * d;
  const T* k = static_cast<const T*>(a.k) + kvz * p.Nkv * d;
  const T* v = static_cast<const T*>(a.v) + kvz * p.Nkv * d;
  T* o = static_cast<T*>(a.o) + (z * p.Nq + i_first) * d;
  const float* state = a.state + (kvz * a.n_states + s_index) * d * (d + 1);

  const int di = static_cast<int>(d);  // 32-bit tile-local indices (no 64-bit division)
  for (int e = tid; e < out_rows * di; e += nt) {
    const int r = e / di, x = e % di;
    pq[r][x] = r < R ? phi(to_float(q[r * d + x])) : 0.f;
  }
  __syncthreads();

  float acc[max_cols_per_thread][out_rows] = {};
  for (std::int64_t x = 0; x < d; ++x) {
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
    for (int e = tid; e < key_step * di; e += nt) {
      const int kk = e / di, x = e % di;
      pk[kk][x] = kk < nk ? phi(to_float(k[(kb + kk) * d + x])) : 0.f;
    }
    __syncthreads();
    for (int e = tid; e < out_rows * key_step; e += nt) {
      const int r = e / key_step, kk = e % key_step;
      float dot = 0.f;
      if (r < R && kk < nk) {
        for (std::int64_t x = 0; x < d; ++x) dot += pq[r][x] * pk[kk][x];
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

std::int64_t n_states(const problem& p) { return causal(p) ? num_kv_tiles(p) - linear_first_chunk(p) : 1; }

class linear_runner : public device_runner {
 public:
  linear_runner(const problem& p, bool writes_lse)
      : device_runner(p, writes_lse), state_(p.B * p.Hkv * n_states(p) * p.d * (p.d + 1) * sizeof(float)) {}
  void run() override {
    const problem& p = p_;
    const linear_args a{q_.get(),
                        k_.get(),
                        v_.get(),
                        o_.get(),
                        state_.get<float>(),
                        n_states(p),
                        causal(p) ? linear_first_chunk(p) : 0};
    const int threads = static_cast<int>(imin(256, (p.d + 1 + 31) / 32 * 32));
    const dim3 sgrid(static_cast<unsigned>(ceil_div(p.d, state_rows)), static_cast<unsigned>(p.B * p.Hkv));
    const std::int64_t tiles = causal(p) ? ceil_div(p.Nkv, out_rows) : ceil_div(p.Nq, out_rows);
    const dim3 ogrid(static_cast<unsigned>(tiles), static_cast<unsigned>(p.B * p.H));
    dispatch_dtype(p.type, [&](auto t) {
      using T = decltype(t);
      launch(linear_state_kernel<T>, sgrid, threads, 0, stream(), p, a);
      ATTN_CUDA_CHECK_LAUNCH();
      launch(linear_output_kernel<T>, ogrid, threads, 0, stream(), p, a);
      ATTN_CUDA_CHECK_LAUNCH();
    });
    if (causal(p) && p.Nq > p.Nkv) {  // rows with i' < 0 see no key: zeros
      const std::size_t e = dtype_bytes(p.type);
      ATTN_CUDA_CHECK(cudaMemset2DAsync(o_.get(), p.Nq * p.d * e, 0, (p.Nq - p.Nkv) * p.d * e, p.B * p.H, stream()));
    }
  }

 private:
  device_buffer state_;
};

}  // namespace
}  // namespace cuda

void add_cuda_rows_linear(std::vector<variant>& rows) {
  rows.push_back({
      .name = "linear",
      .backend = backend_kind::cuda,
      .math = attention_math::linear,
      .summary = "linear attention, phi = elu + 1: KV-state pass then output pass; causal: chunked scan",
      .writes_lse = false,
      .caps = {.dtypes = {dtype::fp32, dtype::fp16, dtype::bf16}, .masks = mask_none | mask_causal},
      .tags = {tag::fused},
      .check =
          [](const problem& p) {
            return cuda::check_launch(
                {.grid_x = ceil_div(p.mask.kind == mask_kind::causal ? p.Nkv : p.Nq, cuda_linear_rows),
                 .grid_y = p.B * p.H},
                "linear");
          },
      .model =
          [](const problem& p) {
            return model_figures{model_flops_linear(p), model_flops_executed_linear_cuda(p), model_bytes_linear_cuda(p),
                                 model_exps_linear_cuda(p)};
          },
      .memory_bytes = memory_bytes_linear_cuda,
      .make_runner = [](const problem& p, bool lse) -> std::unique_ptr<runner> {
        return std::make_unique<cuda::linear_runner>(p, lse);
      },
  });
}

}  // namespace attnbench

// performer (cuda): Performer FAVOR+, the math of the CPU row (kernels/cpu/performer.cpp,
// docs/approximations.md): phi(x) = exp(omega~ x - |x~|^2 / 2 - stabiliser), m = 256 seeded
// block-orthogonal features (kernels/reference/approx_params.hpp), then linear attention over
// the m features, O_i = phi(q_i)^T S / phi(q_i)^T z.
// Idea: a feature pass maps every row once and writes the features to global memory (one
// block per 16 rows, a thread per feature: the d x m product against omega~ staged from
// global memory): queries as exp(u - max_f u) (their own row's stabiliser), keys as the log
// features u, with the block's max; a reduction kernel folds those maxima into the keys'
// stabiliser s per (batch, KV head). The key-side stabiliser is a max over the whole sequence,
// so nothing can be exponentiated before every key is mapped: it costs the u round trip
// (4 m bytes per key written, read again by the state pass: 2 m / d times K's own bytes at
// d = 64, m = 256) plus a launch of B Hkv blocks reading Nkv / 16 maxima each. The passes
// after it are `linear`'s (kernels/cuda/linear/linear.cu: state pass, then output pass;
// causal: exclusive prefix state per key chunk plus the masked intra-chunk block), reading
// the features instead of applying elu + 1 on load, with exp(u - s) on the keys' load.
// Changed from the CPU row: the features are computed once and kept in global memory (the
// CPU recomputes the key features for the stabiliser); changed from linear.cu: the feature
// width is m, not d (state m x (d + 1)). Those two passes are a copy of linear.cu's with the
// width and the feature load changed: sharing them means moving linear.cu's kernels into a
// header templated on the feature source (and its negative control to
// ab_emu_negative_header), a change to the linear row this file leaves for later.
// Expected bottleneck: the feature pass's math, 2 d m FLOPs per row (the product is plain
// FMAs, no tensor cores), then the state pass's walk over the keys (m / 32 blocks per KV head)
// and the features' traffic, 4 m bytes per row written and read (4x Q's at d = 64).
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/cuda/dtype_traits.cuh"
#include "core/cuda/launch.cuh"
#include "core/cuda/launch_limits.hpp"
#include "core/mask.hpp"
#include "kernels/cuda/common/device_runner.cuh"
#include "kernels/models/models.hpp"
#include "kernels/reference/approx_params.hpp"

namespace attnbench {

namespace cuda {
namespace {

constexpr int features = 256;                                    // m; one feature per thread of the feature pass
constexpr int map_rows = static_cast<int>(cuda_performer_rows);  // rows per feature block
constexpr int state_rows = 32;                                   // state rows (features) per state-pass block
constexpr int key_step = 16;                                     // keys staged per step (min Bc = 16)
constexpr int out_rows = 16;                                     // output rows per block
constexpr int max_cols_per_thread = 2;                           // d + 1 <= 257 columns over <= 256 threads
constexpr int max_d = 256;                                       // validate(problem) bounds d
static_assert(features == performer_default_features && state_rows == cuda_performer_state_rows);

__host__ __device__ inline std::int64_t imin(std::int64_t a, std::int64_t b) { return a < b ? a : b; }
__host__ __device__ inline bool causal(const problem& p) { return p.mask.kind == mask_kind::causal; }

struct performer_args {
  const float *q, *k, *v;
  float* o;
  const float* omega_t;  // [d x m]: d^-1/4 omega^T
  float* qf;             // [B H Nq, m]: phi(q), stabilised per row
  float* ku;             // [B Hkv Nkv, m]: the keys' log features u
  float* kpart;          // [B Hkv, ceil(Nkv / map_rows)]: each feature block's max of u
  float* kmax;           // [B Hkv]: the keys' stabiliser s
  float* state;          // [B Hkv, n_states, m, d + 1]
  std::int64_t n_states, first_chunk;
};

__device__ inline float warp_max(float x) {
  for (int o = 16; o > 0; o >>= 1) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, o));
  return x;
}

// Feature pass: block (row tile, z), z = b H + h (queries) or b Hkv + hkv (keys); thread f
// computes u_f = omega~_f . x - |x|^2 / (2 sqrt(d)) for the tile's rows.
__global__ void __launch_bounds__(features) performer_feature_kernel(problem p, performer_args a, bool queries) {
  __shared__ float xs[map_rows][max_d];
  __shared__ float half_sq[map_rows];
  __shared__ float wmax[map_rows][features / 32];
  const std::int64_t d = p.d, z = blockIdx.y, n = queries ? p.Nq : p.Nkv, r0 = std::int64_t(blockIdx.x) * map_rows;
  const int R = static_cast<int>(imin(map_rows, n - r0)), f = threadIdx.x, di = static_cast<int>(d);
  const float* x = (queries ? a.q : a.k) + (z * n + r0) * d;
  for (int e = f; e < map_rows * di; e += features) {
    const int r = e / di, c = e % di;
    xs[r][c] = r < R ? x[r * d + c] : 0.f;
  }
  __syncthreads();
  if (f < map_rows) {
    float sq = 0.f;
    for (int c = 0; c < di; ++c) sq += xs[f][c] * xs[f][c];
    half_sq[f] = 0.5f * sq / sqrtf(static_cast<float>(d));  // |x~|^2 / 2
  }
  __syncthreads();
  float u[map_rows] = {};
  for (int c = 0; c < di; ++c) {
    const float w = a.omega_t[c * features + f];
#pragma unroll
    for (int r = 0; r < map_rows; ++r) u[r] += w * xs[r][c];
  }
  const int warp = f / 32, lane = f % 32;
#pragma unroll
  for (int r = 0; r < map_rows; ++r) {
    u[r] -= half_sq[r];
    const float mx = warp_max(r < R ? u[r] : -INFINITY);
    if (lane == 0) wmax[r][warp] = mx;
  }
  __syncthreads();
  if (queries) {
    float* out = a.qf + (z * n + r0) * features;
    for (int r = 0; r < R; ++r) {
      float mx = wmax[r][0];
      for (int w = 1; w < features / 32; ++w) mx = fmaxf(mx, wmax[r][w]);
      out[r * features + f] = expf(u[r] - mx);
    }
    return;
  }
  float* out = a.ku + (z * n + r0) * features;
  for (int r = 0; r < R; ++r) out[r * features + f] = u[r];
  if (f == 0) {
    float mx = -INFINITY;
    for (int r = 0; r < R; ++r)
      for (int w = 0; w < features / 32; ++w) mx = fmaxf(mx, wmax[r][w]);
    a.kpart[z * gridDim.x + blockIdx.x] = mx;
  }
}

// The keys' stabiliser: block z = b Hkv + hkv folds its feature blocks' maxima.
__global__ void __launch_bounds__(256) performer_key_max_kernel(performer_args a, int parts) {
  __shared__ float red[256];
  const float* part = a.kpart + std::int64_t(blockIdx.x) * parts;
  float mx = -INFINITY;
  for (int t = threadIdx.x; t < parts; t += blockDim.x) mx = fmaxf(mx, part[t]);
  red[threadIdx.x] = mx;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (static_cast<int>(threadIdx.x) < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
    __syncthreads();
  }
  if (threadIdx.x == 0) a.kmax[blockIdx.x] = red[0];
}

// phi(k_j)_f up to 1 / sqrt(m), stabilised by the KV head's s.
__device__ inline float key_feature(const float* ku, float s, std::int64_t j, std::int64_t f) {
  return expf(ku[j * features + f] - s);
}

// State pass (linear.cu's): block (state-row tile of features, b Hkv + hkv); thread owns
// columns c = tid + i blockDim.x of the augmented state [S | z] (c == d is z).
__global__ void __launch_bounds__(256) performer_state_kernel(problem p, performer_args a) {
  __shared__ float pk[key_step][state_rows];
  const std::int64_t d = p.d, kvz = blockIdx.y, a0 = std::int64_t(blockIdx.x) * state_rows;
  const float* ku = a.ku + kvz * p.Nkv * features;
  const float* v = a.v + kvz * p.Nkv * d;
  const float s = a.kmax[kvz];
  float* state = a.state + kvz * a.n_states * features * (d + 1);
  const int tid = threadIdx.x, nt = blockDim.x;
  const std::int64_t kend = causal(p) ? (ceil_div(p.Nkv, p.Bc) - 1) * p.Bc : p.Nkv;

  float acc[max_cols_per_thread][state_rows] = {};
  auto write_state = [&](std::int64_t si) {
    float* dst = state + si * features * (d + 1);
#pragma unroll
    for (int ci = 0; ci < max_cols_per_thread; ++ci) {
      const std::int64_t c = tid + std::int64_t(ci) * nt;
      if (c > d) continue;
#pragma unroll
      for (int r = 0; r < state_rows; ++r) dst[(a0 + r) * (d + 1) + c] = acc[ci][r];
    }
  };

  for (std::int64_t j0 = 0; j0 < kend; j0 += key_step) {
    if (causal(p) && j0 % p.Bc == 0 && j0 / p.Bc >= a.first_chunk) write_state(j0 / p.Bc - a.first_chunk);
    const std::int64_t nk = imin(key_step, kend - j0);
    __syncthreads();
    for (int e = tid; e < key_step * state_rows; e += nt) {
      const int kk = e / state_rows, r = e % state_rows;
      pk[kk][r] = kk < nk ? key_feature(ku, s, j0 + kk, a0 + r) : 0.f;
    }
    __syncthreads();
    for (int kk = 0; kk < nk; ++kk) {
#pragma unroll
      for (int ci = 0; ci < max_cols_per_thread; ++ci) {
        const std::int64_t c = tid + std::int64_t(ci) * nt;
        if (c > d) continue;
        const float vv = c < d ? v[(j0 + kk) * d + c] : 1.f;
#pragma unroll
        for (int r = 0; r < state_rows; ++r) acc[ci][r] += pk[kk][r] * vv;
      }
    }
  }
  write_state(causal(p) ? kend / p.Bc - a.first_chunk : 0);
}

// Output pass (linear.cu's): block (row tile, b H + h). Non-causal tiles are 16 query rows;
// causal tiles are 16 aligned positions i' (rows i = i' - shift), inside one key chunk.
__global__ void __launch_bounds__(256) performer_output_kernel(problem p, performer_args a) {
  __shared__ float pq[out_rows][features + 1];
  __shared__ float pk[key_step][features + 1];
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
    kend = hi;
  } else {
    i_first = t0;
    R = imin(out_rows, p.Nq - t0);
  }
  if (R <= 0) return;

  const float* qf = a.qf + (z * p.Nq + i_first) * features;
  const float* ku = a.ku + kvz * p.Nkv * features;
  const float* v = a.v + kvz * p.Nkv * d;
  float* o = a.o + (z * p.Nq + i_first) * d;
  const float* state = a.state + (kvz * a.n_states + s_index) * features * (d + 1);

  for (int e = tid; e < out_rows * features; e += nt) {
    const int r = e / features, x = e % features;
    pq[r][x] = r < R ? qf[r * features + x] : 0.f;
  }
  __syncthreads();

  float acc[max_cols_per_thread][out_rows] = {};
  for (int x = 0; x < features; ++x) {
#pragma unroll
    for (int ci = 0; ci < max_cols_per_thread; ++ci) {
      const std::int64_t c = tid + std::int64_t(ci) * nt;
      if (c > d) continue;
      const float sv = state[x * (d + 1) + c];
#pragma unroll
      for (int r = 0; r < out_rows; ++r) acc[ci][r] += pq[r][x] * sv;
    }
  }

  const float s = causal(p) ? a.kmax[kvz] : 0.f;
  for (std::int64_t kb = kstart; kb < kend; kb += key_step) {
    const std::int64_t nk = imin(key_step, kend - kb);
    for (int e = tid; e < key_step * features; e += nt) {
      const int kk = e / features, x = e % features;
      pk[kk][x] = kk < nk ? key_feature(ku, s, kb + kk, x) : 0.f;
    }
    __syncthreads();
    for (int e = tid; e < out_rows * key_step; e += nt) {
      const int r = e / key_step, kk = e % key_step;
      float dot = 0.f;
      if (r < R && kk < nk) {
        for (int x = 0; x < features; ++x) dot += pq[r][x] * pk[kk][x];
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
        const float vv = c < d ? v[(kb + kk) * d + c] : 1.f;
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
      if (r < R) o[r * d + c] = acc[ci][r] / den[r];
  }
}

std::int64_t n_states(const problem& p) { return causal(p) ? num_kv_tiles(p) - linear_first_chunk(p) : 1; }

std::int64_t workspace_floats(const problem& p) {
  return p.d * features + (p.B * p.H * p.Nq + p.B * p.Hkv * p.Nkv) * features +
         p.B * p.Hkv * (ceil_div(p.Nkv, map_rows) + 1) + p.B * p.Hkv * n_states(p) * features * (p.d + 1);
}

class performer_runner : public device_runner {
 public:
  explicit performer_runner(const problem& p)
      : device_runner(p, false),
        omega_t_(p.d * features * sizeof(float)),
        qf_(p.B * p.H * p.Nq * features * sizeof(float)),
        ku_(p.B * p.Hkv * p.Nkv * features * sizeof(float)),
        kpart_(p.B * p.Hkv * ceil_div(p.Nkv, map_rows) * sizeof(float)),
        kmax_(p.B * p.Hkv * sizeof(float)),
        state_(p.B * p.Hkv * n_states(p) * features * (p.d + 1) * sizeof(float)) {
    const std::vector<float> w = make_performer_features(features, p.d);
    std::vector<float> wt(static_cast<std::size_t>(p.d * features));
    const float c = static_cast<float>(std::pow(static_cast<double>(p.d), -0.25));
    for (std::int64_t f = 0; f < features; ++f)
      for (std::int64_t x = 0; x < p.d; ++x) wt[x * features + f] = c * w[f * p.d + x];
    ATTN_CUDA_CHECK(
        cudaMemcpyAsync(omega_t_.get(), wt.data(), wt.size() * sizeof(float), cudaMemcpyHostToDevice, stream()));
    ATTN_CUDA_CHECK(cudaStreamSynchronize(stream()));
  }
  void run() override {
    const problem& p = p_;
    const performer_args a{q_.get<const float>(), k_.get<const float>(), v_.get<const float>(),
                           o_.get<float>(),       omega_t_.get<float>(), qf_.get<float>(),
                           ku_.get<float>(),      kpart_.get<float>(),   kmax_.get<float>(),
                           state_.get<float>(),   n_states(p),           causal(p) ? linear_first_chunk(p) : 0};
    const int parts = static_cast<int>(ceil_div(p.Nkv, map_rows));
    launch(performer_feature_kernel, dim3(static_cast<unsigned>(parts), static_cast<unsigned>(p.B * p.Hkv)), features,
           0, stream(), p, a, false);
    ATTN_CUDA_CHECK_LAUNCH();
    launch(performer_feature_kernel,
           dim3(static_cast<unsigned>(ceil_div(p.Nq, map_rows)), static_cast<unsigned>(p.B * p.H)), features, 0,
           stream(), p, a, true);
    ATTN_CUDA_CHECK_LAUNCH();
    launch(performer_key_max_kernel, static_cast<unsigned>(p.B * p.Hkv), 256, 0, stream(), a, parts);
    ATTN_CUDA_CHECK_LAUNCH();
    const int threads = static_cast<int>(imin(256, (p.d + 1 + 31) / 32 * 32));
    launch(performer_state_kernel, dim3(features / state_rows, static_cast<unsigned>(p.B * p.Hkv)), threads, 0,
           stream(), p, a);
    ATTN_CUDA_CHECK_LAUNCH();
    const std::int64_t tiles = causal(p) ? ceil_div(p.Nkv, out_rows) : ceil_div(p.Nq, out_rows);
    launch(performer_output_kernel, dim3(static_cast<unsigned>(tiles), static_cast<unsigned>(p.B * p.H)), threads, 0,
           stream(), p, a);
    ATTN_CUDA_CHECK_LAUNCH();
    if (causal(p) && p.Nq > p.Nkv) {  // rows with i' < 0 see no key: zeros
      const std::size_t e = sizeof(float);
      ATTN_CUDA_CHECK(cudaMemset2DAsync(o_.get(), p.Nq * p.d * e, 0, (p.Nq - p.Nkv) * p.d * e, p.B * p.H, stream()));
    }
  }

 private:
  device_buffer omega_t_, qf_, ku_, kpart_, kmax_, state_;
};

}  // namespace
}  // namespace cuda

void add_cuda_rows_performer(std::vector<variant>& rows) {
  rows.push_back({
      .name = "performer",
      .backend = backend_kind::cuda,
      .math = attention_math::performer,
      .summary = "Performer FAVOR+ (m = 256 seeded features, stabilised): feature pass to global memory, the keys' "
                 "stabiliser reduced, then linear's state and output passes over the features",
      .writes_lse = false,
      .caps = {.dtypes = {dtype::fp32}, .masks = mask_none | mask_causal},
      .tags = {tag::fused, tag::comparison},
      .check =
          [](const problem& p) {
            const std::int64_t q = ceil_div(p.Nq, cuda::map_rows), k = ceil_div(p.Nkv, cuda::map_rows);
            return cuda::check_launch({.grid_x = std::max(q, k), .grid_y = p.B * p.H}, "performer");
          },
      .model = model_performer_cuda,
      .memory_bytes =
          [](const problem& p) { return cuda::device_runner::base_memory_bytes(p) + 4 * cuda::workspace_floats(p); },
      .make_runner = [](const problem& p, bool) -> std::unique_ptr<runner> {
        return std::make_unique<cuda::performer_runner>(p);
      },
  });
}

}  // namespace attnbench

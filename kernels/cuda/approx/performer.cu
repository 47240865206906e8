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
// (4 m bytes per key written and read again by the state pass, each way m / d = 4 times K's
// own bytes at d = 64, m = 256) plus a launch of B Hkv blocks reading Nkv / 16 maxima each.
// The passes after it are `linear`'s, shared (kernels/cuda/linear/feature_passes.cuh: state
// pass, then output pass; causal: exclusive prefix state per key chunk plus the masked
// intra-chunk block) with a feature map that reads phi(q) as written and exp(u - s) for the keys
// instead of applying elu + 1 on load.
// Changed from the CPU row: the features are computed once and kept in global memory (the
// CPU recomputes the key features for the stabiliser); changed from linear: the feature
// width is m, not d (state m x (d + 1)).
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
#include "kernels/cuda/common/host_transfer.cuh"
#include "kernels/cuda/linear/feature_passes.cuh"
#include "kernels/models/models.hpp"
#include "kernels/reference/approx_params.hpp"

namespace attnbench {

namespace cuda {
namespace {

constexpr int features = 256;                                    // m; one feature per thread of the feature pass
constexpr int map_rows = static_cast<int>(cuda_performer_rows);  // rows per feature block
constexpr int max_d = 256;                                       // validate(problem) bounds d
using feature_passes::causal;
using feature_passes::imin;
using feature_passes::out_rows;
using feature_passes::state_rows;
static_assert(features == performer_default_features && state_rows == cuda_performer_state_rows);
static_assert(features <= feature_passes::max_features);

struct performer_args {
  const float *q, *k;
  const float* omega_t;  // [d x m]: d^-1/4 omega^T
  float* qf;             // [B H Nq, m]: phi(q), stabilised per row
  float* ku;             // [B Hkv Nkv, m]: the keys' log features u
  float* kpart;          // [B Hkv, ceil(Nkv / map_rows)]: each feature block's max of u
  float* kmax;           // [B Hkv]: the keys' stabiliser s
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

// phi(k_j)_f up to 1 / sqrt(m), stabilised by the KV head's s, and phi(q_i)_f as written.
struct performer_map {
  const float *qf, *ku, *kmax;
  std::int64_t F, Nq, Nkv;
  __device__ float key(std::int64_t kvz, std::int64_t j, std::int64_t f) const {
    return expf(ku[(kvz * Nkv + j) * features + f] - kmax[kvz]);
  }
  __device__ float query(std::int64_t z, std::int64_t i, std::int64_t f) const {
    return qf[(z * Nq + i) * features + f];
  }
};

std::int64_t n_states(const problem& p) { return causal(p) ? num_kv_tiles(p) - linear_first_chunk(p) : 1; }

std::int64_t workspace_floats(const problem& p) {
  return p.d * features + (p.B * p.H * p.Nq + p.B * p.Hkv * p.Nkv) * features +
         p.B * p.Hkv * (ceil_div(p.Nkv, map_rows) + 1) + p.B * p.Hkv * n_states(p) * features * (p.d + 1);
}

class performer_runner : public device_runner {
 public:
  explicit performer_runner(const problem& p)
      : device_runner(p, false),
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
    omega_t_ = uploaded(wt);
  }
  void run() override {
    const problem& p = p_;
    const performer_args a{q_.get<const float>(), k_.get<const float>(), omega_t_.get<float>(), qf_.get<float>(),
                           ku_.get<float>(),      kpart_.get<float>(),   kmax_.get<float>()};
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
    const feature_passes::pass_args pa{v_.get(), o_.get(), state_.get<float>(), n_states(p),
                                       causal(p) ? linear_first_chunk(p) : 0};
    const performer_map map{
        qf_.get<const float>(), ku_.get<const float>(), kmax_.get<const float>(), features, p.Nq, p.Nkv};
    launch(feature_passes::feature_state_kernel<float, performer_map>,
           dim3(features / state_rows, static_cast<unsigned>(p.B * p.Hkv)), threads, 0, stream(), p, pa, map);
    ATTN_CUDA_CHECK_LAUNCH();
    const std::int64_t tiles = causal(p) ? ceil_div(p.Nkv, out_rows) : ceil_div(p.Nq, out_rows);
    launch(feature_passes::feature_output_kernel<float, performer_map>,
           dim3(static_cast<unsigned>(tiles), static_cast<unsigned>(p.B * p.H)), threads, 0, stream(), p, pa, map);
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

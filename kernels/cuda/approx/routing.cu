// routing (cuda): the Routing Transformer with balanced routing and fixed seeded centroids,
// the math of the CPU row (kernels/cpu/routing.cpp, docs/approximations.md): c = round(sqrt(Nkv))
// clusters, each cluster's top w_q queries and top w_k keys by the fp64 score x . mu (ties to
// the lower position), dense softmax attention per cluster on the original positions (causal
// bottom-right), the scatter-mean over the clusters a row was routed to and saw a key in.
// Idea: routing in three launches per side (keys per (batch, KV head), queries per (batch,
// head)): the scores, c per token in fp64 (a block stages 32 tokens, a thread per (token,
// cluster subset); each product of two floats is exact in fp64, so the scores are the fp64
// reference's bit for bit); a rank count, a thread per (token, cluster) counting the tokens
// ahead of it (higher score, or equal and lower position) over the cluster's n scores staged
// 256 at a time, selected when the rank is below w; a compaction per (cluster, side) scanning
// the flags in position order, which writes the index lists ascending (and, for the queries,
// each token's slot in each cluster or -1). Attention: a block per (cluster, batch x head), a
// warp per routed query row, the routed keys gathered from global memory one at a time with an
// online softmax (masked pairs as -inf, every routed pair loaded and exponentiated, as the CPU
// row counts them), the row's result and whether it saw a key written per (cluster, slot); a
// scatter-mean kernel, a warp per query row, adds them in cluster order (the CPU row's order)
// through the slot table, no atomics, deterministic. run() records events around the two
// phases; phase_times() sums their elapsed times over every run (runner::phase_times).
// Changed from the CPU row: selection by rank counting instead of nth_element (the same set),
// the per-row results kept in global memory instead of a per-head accumulator on chip, an
// online softmax instead of two passes over a score tile.
// Expected bottleneck: the rank count, c n^2 comparisons per head (n = 2048: 45 x 4.2 M),
// against the attention's 4 d w_q w_k c FLOPs (d = 64: 0.2 G per head, latency-bound gathers);
// the fp64 scores, 2 d c FLOPs per token, run at the fp64 rate.
#include <cuda_runtime.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/cuda/dtype_traits.cuh"
#include "core/cuda/launch.cuh"
#include "core/cuda/launch_limits.hpp"
#include "core/mask.hpp"
#include "kernels/cuda/common/device_runner.cuh"
#include "kernels/cuda/common/host_transfer.cuh"
#include "kernels/models/models.hpp"
#include "kernels/reference/approx_params.hpp"

namespace attnbench {

namespace cuda {
namespace {

constexpr int threads = static_cast<int>(cuda_routing_threads);
constexpr int score_tokens = static_cast<int>(cuda_routing_score_tokens);  // tokens staged per score block
constexpr int attn_warps = 4;                                              // query rows in flight per attention block
constexpr int mean_rows = threads / 32;                                    // query rows per scatter-mean block
constexpr int max_d_per_lane = 256 / 32;                                   // d <= 256 over 32 lanes

struct route_args {
  const float* x;      // [Z, n, d] (K or Q)
  const float* mu;     // [c, d]
  double* score;       // [Z, c, n]
  std::uint8_t* flag;  // [Z, c, n]: in the cluster's top w
  std::int32_t* idx;   // [Z, c, w]: the selected positions, ascending
  std::int32_t* slot;  // [Z, c, n]: the token's position in idx, -1 if not selected (queries only)
  std::int64_t n, w, c;
};

// Scores: block (token tile, z); thread (token = tid % 32, clusters tid / 32, + 8, ...).
__global__ void __launch_bounds__(threads) routing_score_kernel(problem p, route_args a) {
  __shared__ float xs[score_tokens][256];
  const std::int64_t d = p.d, z = blockIdx.y, t0 = std::int64_t(blockIdx.x) * score_tokens;
  const int di = static_cast<int>(d), tid = threadIdx.x;
  const float* x = a.x + (z * a.n + t0) * d;
  const std::int64_t rows = a.n - t0 < score_tokens ? a.n - t0 : score_tokens;
  for (int e = tid; e < score_tokens * di; e += threads) {
    const int r = e / di, col = e % di;
    xs[r][col] = r < rows ? x[r * d + col] : 0.f;
  }
  __syncthreads();
  const int tok = tid % score_tokens;
  if (tok >= rows) return;
  for (std::int64_t cl = tid / score_tokens; cl < a.c; cl += threads / score_tokens) {
    const float* mu = a.mu + cl * d;
    double dot = 0;
    for (int e = 0; e < di; ++e) dot += double(xs[tok][e]) * double(mu[e]);
    a.score[(z * a.c + cl) * a.n + t0 + tok] = dot;
  }
}

// Rank count: block (token tile, cluster, z); a token is selected when fewer than w tokens
// come before it (higher score, or the same score at a lower position).
__global__ void __launch_bounds__(threads) routing_rank_kernel(route_args a) {
  __shared__ double tile[threads];
  const std::int64_t z = blockIdx.z, cl = blockIdx.y, t = std::int64_t(blockIdx.x) * threads + threadIdx.x;
  const double* s = a.score + (z * a.c + cl) * a.n;
  const double st = t < a.n ? s[t] : 0.0;
  std::int64_t ahead = 0;
  for (std::int64_t u0 = 0; u0 < a.n; u0 += threads) {
    __syncthreads();
    if (u0 + threadIdx.x < a.n) tile[threadIdx.x] = s[u0 + threadIdx.x];
    __syncthreads();
    const int m = a.n - u0 < threads ? static_cast<int>(a.n - u0) : threads;
    for (int k = 0; k < m; ++k) {
      const double su = tile[k];
      ahead += su > st || (su == st && u0 + k < t);
    }
  }
  if (t < a.n) a.flag[(z * a.c + cl) * a.n + t] = ahead < a.w;
}

// Compaction: block (cluster, z) scans the flags in position order, 256 at a time.
__global__ void __launch_bounds__(threads) routing_compact_kernel(route_args a) {
  __shared__ int scan[threads];
  const std::int64_t z = blockIdx.y, cl = blockIdx.x, base = (z * a.c + cl) * a.n;
  const int tid = threadIdx.x;
  std::int32_t* idx = a.idx + (z * a.c + cl) * a.w;
  std::int64_t carry = 0;
  for (std::int64_t t0 = 0; t0 < a.n; t0 += threads) {
    const std::int64_t t = t0 + tid;
    const int f = t < a.n ? a.flag[base + t] : 0;
    scan[tid] = f;
    __syncthreads();
    for (int off = 1; off < threads; off <<= 1) {  // inclusive Hillis-Steele scan
      const int add = tid >= off ? scan[tid - off] : 0;
      __syncthreads();
      scan[tid] += add;
      __syncthreads();
    }
    const std::int64_t at = carry + scan[tid] - f;
    if (f) idx[at] = static_cast<std::int32_t>(t);
    if (a.slot && t < a.n) a.slot[base + t] = f ? static_cast<std::int32_t>(at) : -1;
    carry += scan[threads - 1];
    __syncthreads();
  }
}

struct attention_args {
  const float *q, *k, *v;
  float* o;
  const std::int32_t *qidx, *kidx, *qslot;
  float* part;         // [B H, c, w_q, d]: each routed row's attention over its cluster (0 if it saw none)
  std::uint8_t* seen;  // [B H, c, w_q]
  std::int64_t c, wq, wk;
};

// Attention: block (cluster, b H + h), a warp per routed query row; lane owns columns
// lane + 32 k. Online softmax over the cluster's w_k keys in list order.
__global__ void __launch_bounds__(attn_warps * 32) routing_attention_kernel(problem p, attention_args a) {
  const std::int64_t d = p.d, cl = blockIdx.x, zh = blockIdx.y, b = zh / p.H, h = zh % p.H;
  const std::int64_t kvz = b * p.Hkv + p.kv_head(h);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const std::int32_t* qi = a.qidx + (zh * a.c + cl) * a.wq;
  const std::int32_t* kj = a.kidx + (kvz * a.c + cl) * a.wk;
  const float* k = a.k + kvz * p.Nkv * d;
  const float* v = a.v + kvz * p.Nkv * d;
  const float scale = 1.0f / sqrtf(static_cast<float>(d));
  for (std::int64_t r = warp; r < a.wq; r += attn_warps) {
    const std::int64_t i = qi[r];
    const float* q = a.q + (zh * p.Nq + i) * d;
    float qr[max_d_per_lane], acc[max_d_per_lane];
#pragma unroll
    for (int x = 0; x < max_d_per_lane; ++x) {
      const std::int64_t e = lane + 32 * x;
      qr[x] = e < d ? q[e] : 0.f;
      acc[x] = 0.f;
    }
    float m = -INFINITY, l = 0.f;
    for (std::int64_t u = 0; u < a.wk; ++u) {
      const std::int64_t j = kj[u];
      float dot = 0.f;
#pragma unroll
      for (int x = 0; x < max_d_per_lane; ++x) {
        const std::int64_t e = lane + 32 * x;
        if (e < d) dot += qr[x] * k[j * d + e];
      }
      for (int off = 16; off > 0; off >>= 1) dot += __shfl_xor_sync(0xffffffffu, dot, off);
      const float sc = is_visible(p, h, i, j) ? dot * scale : -INFINITY;
      const float m_new = fmaxf(m, sc);
      const float corr = m_new == -INFINITY ? 1.f : expf(m - m_new);
      const float pw = m_new == -INFINITY ? 0.f : expf(sc - m_new);
      l = l * corr + pw;
#pragma unroll
      for (int x = 0; x < max_d_per_lane; ++x) {
        const std::int64_t e = lane + 32 * x;
        if (e < d) acc[x] = acc[x] * corr + pw * v[j * d + e];
      }
      m = m_new;
    }
    const bool saw = m != -INFINITY;
    float* out = a.part + ((zh * a.c + cl) * a.wq + r) * d;
#pragma unroll
    for (int x = 0; x < max_d_per_lane; ++x) {
      const std::int64_t e = lane + 32 * x;
      if (e < d) out[e] = saw ? acc[x] / l : 0.f;
    }
    if (lane == 0) a.seen[(zh * a.c + cl) * a.wq + r] = saw;
  }
}

// Scatter-mean: block (row tile, b H + h), a warp per query row; the row's results summed in
// cluster order, divided by the number of clusters it saw a key in; zeros for none.
__global__ void __launch_bounds__(threads) routing_mean_kernel(problem p, attention_args a) {
  const std::int64_t d = p.d, zh = blockIdx.y, i = std::int64_t(blockIdx.x) * mean_rows + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (i >= p.Nq) return;
  float acc[max_d_per_lane] = {};
  int count = 0;
  for (std::int64_t cl = 0; cl < a.c; ++cl) {
    const std::int64_t r = a.qslot[(zh * a.c + cl) * p.Nq + i];
    if (r < 0) continue;
    const std::int64_t row = (zh * a.c + cl) * a.wq + r;
    count += a.seen[row];
#pragma unroll
    for (int x = 0; x < max_d_per_lane; ++x) {
      const std::int64_t e = lane + 32 * x;
      if (e < d) acc[x] += a.part[row * d + e];
    }
  }
  const float inv = count > 0 ? 1.0f / static_cast<float>(count) : 0.f;
  float* o = a.o + (zh * p.Nq + i) * d;
#pragma unroll
  for (int x = 0; x < max_d_per_lane; ++x) {
    const std::int64_t e = lane + 32 * x;
    if (e < d) o[e] = acc[x] * inv;
  }
}

std::int64_t workspace_bytes(const problem& p) {
  const routing_shape rs = routing_shape_of(p);
  const std::int64_t c = rs.clusters, zk = p.B * p.Hkv, zq = p.B * p.H;
  return 4 * c * p.d + (8 + 1) * c * (zk * p.Nkv + zq * p.Nq) + 4 * c * (zk * rs.wk + zq * rs.wq) + 4 * c * zq * p.Nq +
         (4 * p.d + 1) * c * zq * rs.wq;
}

class routing_runner : public device_runner {
 public:
  explicit routing_runner(const problem& p)
      : device_runner(p, false),
        rs_(routing_shape_of(p)),
        mu_(uploaded(make_routing_centroids(rs_.clusters, p.d))),
        kscore_(p.B * p.Hkv * rs_.clusters * p.Nkv * sizeof(double)),
        qscore_(p.B * p.H * rs_.clusters * p.Nq * sizeof(double)),
        kflag_(p.B * p.Hkv * rs_.clusters * p.Nkv),
        qflag_(p.B * p.H * rs_.clusters * p.Nq),
        kidx_(p.B * p.Hkv * rs_.clusters * rs_.wk * sizeof(std::int32_t)),
        qidx_(p.B * p.H * rs_.clusters * rs_.wq * sizeof(std::int32_t)),
        qslot_(p.B * p.H * rs_.clusters * p.Nq * sizeof(std::int32_t)),
        part_(p.B * p.H * rs_.clusters * rs_.wq * p.d * sizeof(float)),
        seen_(p.B * p.H * rs_.clusters * rs_.wq) {}
  ~routing_runner() override {
    for (const auto* pool : {&events_, &spare_})
      for (const auto& ev : *pool)
        for (cudaEvent_t e : ev) cudaEventDestroy(e);
  }

  void run() override {
    const problem& p = p_;
    const std::int64_t c = rs_.clusters;
    // The phase events: resolved ones are reused, so a timed run creates none after the first
    // phase_times() (cudaEventCreate is host work inside the timed region).
    std::array<cudaEvent_t, 3> ev{};
    if (spare_.empty()) {
      for (cudaEvent_t& e : ev) ATTN_CUDA_CHECK(cudaEventCreate(&e));
    } else {
      ev = spare_.back();
      spare_.pop_back();
    }
    events_.push_back(ev);
    ATTN_CUDA_CHECK(cudaEventRecord(ev[0], stream()));
    const route_args keys{k_.get<const float>(),
                          mu_.get<const float>(),
                          kscore_.get<double>(),
                          kflag_.get<std::uint8_t>(),
                          kidx_.get<std::int32_t>(),
                          nullptr,
                          p.Nkv,
                          rs_.wk,
                          c};
    const route_args queries{q_.get<const float>(),
                             mu_.get<const float>(),
                             qscore_.get<double>(),
                             qflag_.get<std::uint8_t>(),
                             qidx_.get<std::int32_t>(),
                             qslot_.get<std::int32_t>(),
                             p.Nq,
                             rs_.wq,
                             c};
    for (const auto& [a, z] : {std::pair{keys, p.B * p.Hkv}, std::pair{queries, p.B * p.H}}) {
      const unsigned zu = static_cast<unsigned>(z), cu = static_cast<unsigned>(c);
      launch(routing_score_kernel, dim3(static_cast<unsigned>(ceil_div(a.n, score_tokens)), zu), threads, 0, stream(),
             p, a);
      ATTN_CUDA_CHECK_LAUNCH();
      launch(routing_rank_kernel, dim3(static_cast<unsigned>(ceil_div(a.n, threads)), cu, zu), threads, 0, stream(), a);
      ATTN_CUDA_CHECK_LAUNCH();
      launch(routing_compact_kernel, dim3(cu, zu), threads, 0, stream(), a);
      ATTN_CUDA_CHECK_LAUNCH();
    }
    ATTN_CUDA_CHECK(cudaEventRecord(ev[1], stream()));
    const attention_args at{q_.get<const float>(),
                            k_.get<const float>(),
                            v_.get<const float>(),
                            o_.get<float>(),
                            qidx_.get<const std::int32_t>(),
                            kidx_.get<const std::int32_t>(),
                            qslot_.get<const std::int32_t>(),
                            part_.get<float>(),
                            seen_.get<std::uint8_t>(),
                            c,
                            rs_.wq,
                            rs_.wk};
    const unsigned heads = static_cast<unsigned>(p.B * p.H);
    launch(routing_attention_kernel, dim3(static_cast<unsigned>(c), heads), attn_warps * 32, 0, stream(), p, at);
    ATTN_CUDA_CHECK_LAUNCH();
    launch(routing_mean_kernel, dim3(static_cast<unsigned>(ceil_div(p.Nq, mean_rows)), heads), threads, 0, stream(), p,
           at);
    ATTN_CUDA_CHECK_LAUNCH();
    ATTN_CUDA_CHECK(cudaEventRecord(ev[2], stream()));
  }

  // Waits for the recorded runs and adds their phases' elapsed times.
  std::vector<phase_time> phase_times() const override {
    for (const auto& ev : events_) {
      ATTN_CUDA_CHECK(cudaEventSynchronize(ev[2]));
      float route_ms = 0, attn_ms = 0;
      ATTN_CUDA_CHECK(cudaEventElapsedTime(&route_ms, ev[0], ev[1]));
      ATTN_CUDA_CHECK(cudaEventElapsedTime(&attn_ms, ev[1], ev[2]));
      routing_s_ += 1e-3 * route_ms;
      attention_s_ += 1e-3 * attn_ms;
      spare_.push_back(ev);
    }
    events_.clear();
    return {{"routing", routing_s_}, {"attention", attention_s_}};
  }

 private:
  routing_shape rs_;
  device_buffer mu_, kscore_, qscore_, kflag_, qflag_, kidx_, qidx_, qslot_, part_, seen_;
  mutable std::vector<std::array<cudaEvent_t, 3>> events_;  // runs not yet added to the sums
  mutable std::vector<std::array<cudaEvent_t, 3>> spare_;   // resolved, for the next runs
  mutable double routing_s_ = 0, attention_s_ = 0;
};

}  // namespace
}  // namespace cuda

void add_cuda_rows_routing(std::vector<variant>& rows) {
  rows.push_back({
      .name = "routing",
      .backend = backend_kind::cuda,
      .math = attention_math::routing,
      .summary = "Routing Transformer (c = round(sqrt(Nkv)) seeded centroids): fp64 scores, rank-count top-w per "
                 "cluster, a warp per routed row with an online softmax, scatter-mean; phases timed with events",
      .writes_lse = false,
      .caps = {.dtypes = {dtype::fp32}, .masks = mask_none | mask_causal},
      .tags = {tag::fused, tag::comparison},
      .check =
          [](const problem& p) {
            const routing_shape rs = routing_shape_of(p);
            return cuda::check_launch({.grid_x = std::max(ceil_div(std::max(p.Nq, p.Nkv), cuda::score_tokens),
                                                          ceil_div(p.Nq, cuda::mean_rows)),
                                       .grid_y = std::max(rs.clusters, p.B * p.H),
                                       .grid_z = p.B * p.H},
                                      "routing");
          },
      .model = model_routing_cuda,
      .model_phases = model_routing_cuda_phases,
      .memory_bytes =
          [](const problem& p) { return cuda::device_runner::base_memory_bytes(p) + cuda::workspace_bytes(p); },
      .make_runner = [](const problem& p, bool) -> std::unique_ptr<runner> {
        return std::make_unique<cuda::routing_runner>(p);
      },
      .resolve = untiled_problem,
  });
}

}  // namespace attnbench

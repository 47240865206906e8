// selective_scan (cuda): Mamba-1's selective scan, forward, the semantics of the CPU row
// (kernels/cpu/selective_scan.cpp, docs/alternatives.md): per channel ch = h d + x and step t,
// dt' = softplus(dt + bias), h = exp(dt' A) h + dt' B_t u, y = C_t . h + D u, out = y silu(z).
// Idea: a chunked parallel scan. The step h_t = a_t h_{t-1} + b_t is the affine map
// (a_t, b_t); maps compose associatively, (a1, b1) after (a0, b0) = (a1 a0, a1 b0 + b1), so a
// warp scans a chunk of 32 steps (a step per lane) in 5 shuffle rounds per state element n,
// and h_t = A_t carry + B_t with the inclusive prefix (A_t, B_t) and the carry of the chunks
// before (the last lane's h, kept in shared memory, passed on in order). A block owns
// (b, h, 8 consecutive channels of the head), a warp per channel: per chunk it stages the u,
// dt, z tiles (32 steps x 8 channels, a thread an element) in shared memory, each warp scans its
// channel (lanes = steps, reading the tile transposed), and the out tile goes back.
// Changed from the CPU row: the same chunk loop (tiles in, the carry on chip, out tile out),
// but the chunk is 32 steps (one per lane), not Bc, and the steps inside a chunk run in
// parallel by the combine instead of one after another; B_t and C_t are read per lane
// (stride N, shared by the group's channels through L1).
// Expected bottleneck: the exponentials, one per (channel, step, n) plus two (softplus,
// silu): D L (N + 2) MUFU ex2 against 16 / N bytes each in fp32 (docs/alternatives.md);
// the scan's 10 shuffles per (channel, step, n) come next.
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>

#include "core/cuda/dtype_traits.cuh"
#include "core/cuda/launch.cuh"
#include "core/cuda/launch_limits.hpp"
#include "kernels/cuda/common/device_runner.cuh"
#include "kernels/cuda/common/host_transfer.cuh"
#include "kernels/models/models.hpp"
#include "kernels/reference/scan_parameters.hpp"

namespace attnbench {

namespace cuda {
namespace {

constexpr int chunk = 32;  // steps per chunk: one per lane
// A warp per channel, 8 channels per block: B D / 8 blocks (D = 1024 at B = 1: 128 blocks for
// 132 SMs; 32 channels a block would leave three quarters of an H200 idle), and a tile row of
// 8 fp32 channels is one 32-byte sector.
constexpr int tile_channels = 8;  // cuda_selective_scan_channels: channels per block
constexpr int warps = tile_channels;

struct selective_scan_args {
  const void *u, *dt, *z;
  void* out;
  const float *a, *skip, *bias, *b, *c;  // A [D, N], D [D], bias [D], B and C [B, G, L, N]
};

__device__ inline float softplus(float v) { return v > 20.f ? v : log1pf(expf(v)); }  // Mamba's threshold

template <class T>
__global__ void __launch_bounds__(warps * 32) selective_scan_kernel(problem p, selective_scan_args g) {
  __shared__ float u_s[chunk][tile_channels + 1], dt_s[chunk][tile_channels + 1], z_s[chunk][tile_channels + 1];
  __shared__ float carry[tile_channels * max_dstate];  // [channel][n]
  const std::int64_t d = p.d, N = p.dstate, L = p.Nkv, G = p.ngroups;
  const std::int64_t b = blockIdx.z, h = blockIdx.y, x0 = std::int64_t(blockIdx.x) * tile_channels;
  const int nch = static_cast<int>(d - x0 < tile_channels ? d - x0 : tile_channels);
  const std::int64_t per_group = p.H * d / G, row0 = (b * p.H + h) * L;
  const T* u = static_cast<const T*>(g.u) + row0 * d + x0;
  const T* dt = static_cast<const T*>(g.dt) + row0 * d + x0;
  const T* z = static_cast<const T*>(g.z) + row0 * d + x0;
  T* out = static_cast<T*>(g.out) + row0 * d + x0;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;

  for (int e = tid; e < tile_channels * N; e += warps * 32) carry[e] = 0.f;
  for (std::int64_t t0 = 0; t0 < L; t0 += chunk) {
    const int steps = static_cast<int>(L - t0 < chunk ? L - t0 : chunk);
    __syncthreads();
    for (int e = tid; e < chunk * tile_channels; e += warps * 32) {
      const int r = e / tile_channels, x = e % tile_channels;
      const bool in = r < steps && x < nch;
      const std::int64_t at = (t0 + r) * d + x;
      u_s[r][x] = in ? to_float(u[at]) : 0.f;
      dt_s[r][x] = in ? to_float(dt[at]) : 0.f;
      z_s[r][x] = in ? to_float(z[at]) : 0.f;
    }
    __syncthreads();
    for (int x = warp; x < nch; x += warps) {
      const std::int64_t ch = h * d + x0 + x, t = t0 + lane;
      const bool valid = lane < steps;
      const float* bt = g.b + ((b * G + ch / per_group) * L + t) * N;
      const float* ct = g.c + ((b * G + ch / per_group) * L + t) * N;
      const float uu = u_s[lane][x], dtv = valid ? softplus(dt_s[lane][x] + g.bias[ch]) : 0.f;
      const float dtu = dtv * uu;
      float y = g.skip[ch] * uu;
      for (std::int64_t n = 0; n < N; ++n) {
        float da = valid ? expf(dtv * g.a[ch * N + n]) : 1.f;
        float db = valid ? dtu * bt[n] : 0.f;
#pragma unroll
        for (int off = 1; off < 32; off *= 2) {  // inclusive scan: earlier lanes' map first
          const float pa = __shfl_up_sync(0xffffffffu, da, off), pb = __shfl_up_sync(0xffffffffu, db, off);
          if (lane >= off) {
            db = da * pb + db;
            da = da * pa;
          }
        }
        const float hn = da * carry[x * N + n] + db;
        if (valid) y += ct[n] * hn;
        const float last = __shfl_sync(0xffffffffu, hn, steps - 1);
        __syncwarp();  // every lane has read carry before lane 0 overwrites it: a shuffle orders no memory
        if (lane == 0) carry[x * N + n] = last;
      }
      if (valid) z_s[lane][x] = y * (z_s[lane][x] / (1.f + expf(-z_s[lane][x])));
    }
    __syncthreads();
    for (int e = tid; e < chunk * tile_channels; e += warps * 32) {
      const int r = e / tile_channels, x = e % tile_channels;
      if (r < steps && x < nch) out[(t0 + r) * d + x] = from_float<T>(z_s[r][x]);
    }
  }
}

class selective_scan_runner : public device_runner {
 public:
  explicit selective_scan_runner(const problem& p) : device_runner(p, false) {
    const selective_scan_parameters s = make_selective_scan_parameters(p);
    for (auto [buf, src] : {std::pair{&a_, &s.a}, {&skip_, &s.skip}, {&bias_, &s.bias}, {&b_, &s.b}, {&c_, &s.c}}) {
      *buf = uploaded(*src);
    }
  }
  void run() override {
    const problem& p = p_;
    const selective_scan_args g{q_.get(),           k_.get(),        v_.get(),
                                o_.get(),           a_.get<float>(), skip_.get<float>(),
                                bias_.get<float>(), b_.get<float>(), c_.get<float>()};
    const dim3 grid(static_cast<unsigned>(ceil_div(p.d, tile_channels)), static_cast<unsigned>(p.H),
                    static_cast<unsigned>(p.B));
    dispatch_dtype(p.type, [&](auto t) {
      launch(selective_scan_kernel<decltype(t)>, grid, warps * 32, 0, stream(), p, g);
      ATTN_CUDA_CHECK_LAUNCH();
    });
  }

 private:
  device_buffer a_, skip_, bias_, b_, c_;
};

}  // namespace
}  // namespace cuda

void add_cuda_rows_selective_scan(std::vector<variant>& rows) {
  rows.push_back({
      .name = "selective_scan",
      .backend = backend_kind::cuda,
      .math = attention_math::selective_scan,
      .summary = "Mamba-1 selective scan: h = exp(dt A) h + dt B u, out = (C h + D u) silu(z); warp scan of 32-step "
                 "chunks by the affine combine, the carry in shared memory",
      .writes_lse = false,
      .caps = {.dtypes = {dtype::fp32, dtype::fp16, dtype::bf16}, .masks = mask_causal, .gqa = false},
      .tags = {tag::scan},
      .check =
          [](const problem& p) {
            if (const support s = scan_support(p, true); !s.ok) return s;
            return cuda::check_launch({.grid_x = ceil_div(p.d, cuda::tile_channels), .grid_y = p.H, .grid_z = p.B},
                                      "selective_scan");
          },
      .model =
          [](const problem& p) {
            return model_figures{model_flops_selective_scan(p), model_flops_selective_scan(p),
                                 model_bytes_selective_scan_cuda(p), model_exps_selective_scan(p)};
          },
      .memory_bytes = memory_bytes_selective_scan_cuda,
      .make_runner = [](const problem& p, bool) -> std::unique_ptr<runner> {
        return std::make_unique<cuda::selective_scan_runner>(p);
      },
  });
}

}  // namespace attnbench

// additive (cuda): Bahdanau additive attention, e_ij = v^T tanh(W q_i + U k_j), softmax over j,
// O = P V, the math of the CPU row (kernels/cpu/additive.cpp) with its seeded W, U, v (a = d,
// kernels/reference/approx_params.hpp).
// Idea: the projections are applied once: a small kernel per (chunk of 32 rows, head) writes
// Q' = Q W^T and K' = K U^T (fp32, [rows x a]; W^T and U^T read coalesced from global/L2),
// then one fused FlashAttention-style kernel, a block per (query tile of Br rows, batch, head):
// Q' tile and v in shared memory, the key tiles of the causal bound walked in order (K' and V
// staged in shared memory), every score of the tile v^T tanh(q'_r + k'_c) computed by one
// thread each, masked element-wise (core/mask.hpp's interval masks: window, causal, global;
// the CPU row's sparse terms are refused here), an online softmax (a warp per row: running
// max m, sum l, rescale alpha) and the accumulator alpha O + P V in shared memory; O and lse
// written once. GQA native: K' and V per KV head. fp16/bf16 inputs are widened on load; all
// math is fp32.
// tanh(x) = 1 - 2 / (e^{2x} + 1) with __expf and __fdividef, the CPU row's formula: two SFU
// ops (ex2, rcp), no cancellation beyond 2^-24 absolute. tanh.approx.f32 (one SFU op, sm_75+)
// has a relative error near 2^-11: summed over a = 64 terms that is ~1e-4 in the score, an
// order of magnitude past the 1e-5 fp32 check.
// Changed from the CPU row: the same projection pass and tile walk, one thread per score
// instead of a vectorised row, O's accumulator in shared memory instead of a tile GEMM.
// Expected bottleneck: the SFU. A score costs a tanh per width element (here 2a SFU ops: ex2,
// rcp) and 3a + 2d FP32 FLOPs; a dot-product score costs 2d tensor-core FLOPs and one exp. Per
// H100 SM and clock: 16 SFU results against 4096 dense fp16 tensor FLOPs (989 TFLOP/s / 132 SMs /
// 1.83 GHz), so at a = d = 64 about 0.12 additive scores (2a + 1 = 129 SFU ops; the FP32 pipe's
// 128 lanes would allow ~0.8) against 32 dot-product scores (QK^T alone): ~250x fewer
// (docs/approximations.md).
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
#include "core/tiles.hpp"
#include "kernels/cuda/common/device_runner.cuh"
#include "kernels/cuda/common/host_transfer.cuh"
#include "kernels/models/models.hpp"
#include "kernels/reference/approx_params.hpp"

namespace attnbench {

namespace cuda {
namespace {

constexpr int threads = 128;
constexpr int warps = threads / 32;
constexpr int proj_rows = 32;  // rows of X per projection block

std::int64_t attention_smem_bytes(const problem& p) {
  const std::int64_t a = p.d, d = p.d;
  return 4 * (a + p.Br * a + p.Bc * (a + 1) + p.Bc * d + p.Br * p.Bc + p.Br * d + 3 * p.Br);
}
std::int64_t projection_smem_bytes(const problem& p) { return 4 * proj_rows * p.d; }

__device__ __forceinline__ float tanh_sfu(float x) { return 1.f - __fdividef(2.f, __expf(2.f * x) + 1.f); }

// core/mask.hpp's is_visible for the interval masks (local window, causal, global tokens): the
// sparse terms are not claimed; their out-of-line call (or inlined, their 64-bit divisions) made
// ptxas spill 4 to 24 bytes on sm_80 and sm_90 in this kernel.
__device__ __forceinline__ bool interval_visible(const problem& p, std::int64_t i, std::int64_t j) {
  return i < p.mask.global || j < p.mask.global || window_keys(p, i, i + 1).contains(j);
}

// out [heads * n, a] (fp32) = X [heads * n, d] (T) times M^T, m_t = M^T [d x a] (fp32).
template <class T>
__global__ void __launch_bounds__(threads)
    additive_project_kernel(const T* x, std::int64_t n, int d, int a, const float* m_t, float* out) {
  extern __shared__ __align__(16) unsigned char smem[];
  float* xs = reinterpret_cast<float*>(smem);
  const std::int64_t r0 = std::int64_t(blockIdx.x) * proj_rows, base = std::int64_t(blockIdx.y) * n + r0;
  const int rows = static_cast<int>(min(std::int64_t(proj_rows), n - r0)), tid = threadIdx.x;
  for (int e = tid; e < rows * d; e += threads) xs[e] = to_float(x[base * d + e]);
  __syncthreads();
  for (int e = tid; e < rows * a; e += threads) {
    const int r = e / a, c = e % a;
    float s = 0.f;
    for (int t = 0; t < d; ++t) s += xs[r * d + t] * m_t[t * a + c];
    out[base * a + e] = s;
  }
}

struct additive_args {
  const float *qp, *kp;  // Q' [B*H*Nq, a], K' [B*Hkv*Nkv, a] (fp32)
  const float* vw;       // v [a]
  const void* v;         // V [B, Hkv, Nkv, d] in T
  void* o;
  float* lse;
};

template <class T>
__global__ void __launch_bounds__(threads) additive_kernel(problem p, additive_args g) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int d = static_cast<int>(p.d), a = d, lk = a + 1;  // odd stride: a warp's k' rows hit distinct banks
  const int br = static_cast<int>(p.Br), bc = static_cast<int>(p.Bc);
  float* vv = reinterpret_cast<float*>(smem);
  float* qs = vv + a;
  float* ks = qs + br * a;
  float* vs = ks + bc * lk;
  float* ss = vs + bc * d;
  float* acc = ss + br * bc;
  float* m = acc + br * d;
  float* l = m + br;
  float* alpha = l + br;

  // Head indices in 32 bits (a 64-bit division is a called subroutine).
  const int H = static_cast<int>(p.H), z = static_cast<int>(blockIdx.y), h = z % H;
  const std::int64_t qt = blockIdx.x, kvz = std::int64_t(z / H) * p.Hkv + h / static_cast<int>(p.group());
  const std::int64_t r0 = qt * p.Br, row0 = z * p.Nq + r0;
  const int R = static_cast<int>(min(p.Br, p.Nq - r0));
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const T* v = static_cast<const T*>(g.v) + kvz * p.Nkv * d;

  for (int e = tid; e < a; e += threads) vv[e] = g.vw[e];
  for (int e = tid; e < R * a; e += threads) qs[e] = g.qp[row0 * a + e];
  for (int e = tid; e < R * d; e += threads) acc[e] = 0.f;
  for (int r = tid; r < R; r += threads) {
    m[r] = -INFINITY;
    l[r] = 0.f;
  }

  const span64 tiles = causal_bounded_kv_tiles(p, qt);
  for (std::int64_t kt = tiles.lo; kt < tiles.hi; ++kt) {
    const std::int64_t c0 = kt * p.Bc;
    const int C = static_cast<int>(min(p.Bc, p.Nkv - c0));
    const float* kp = g.kp + (kvz * p.Nkv + c0) * a;
    for (int e = tid; e < C * a; e += threads) ks[(e / a) * lk + e % a] = kp[e];
    for (int e = tid; e < C * d; e += threads) vs[e] = to_float(v[c0 * d + e]);
    __syncthreads();

    // S = v^T tanh(q'_r + k'_c) for every pair of the tile (as the model counts), -inf where masked.
    for (int e = tid; e < R * C; e += threads) {
      const int r = e / C, c = e % C;
      const float* qr = qs + r * a;
      const float* kc = ks + c * lk;
      float s = 0.f;
      for (int t = 0; t < a; ++t) s += vv[t] * tanh_sfu(qr[t] + kc[t]);
      ss[r * bc + c] = interval_visible(p, r0 + r, c0 + c) ? s : -INFINITY;
    }
    __syncthreads();

    // Online softmax, a warp per row: m, l updated, alpha = e^{m_old - m_new}, P in place of S.
    for (int r = warp; r < R; r += warps) {
      float* srow = ss + r * bc;
      float mt = -INFINITY;
      for (int c = lane; c < C; c += 32) mt = fmaxf(mt, srow[c]);
      for (int off = 16; off > 0; off /= 2) mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, off));
      const float m_old = m[r], m_new = fmaxf(m_old, mt);
      float lt = 0.f;
      for (int c = lane; c < C; c += 32) {
        const float pr = m_new == -INFINITY ? 0.f : expf(srow[c] - m_new);
        srow[c] = pr;
        lt += pr;
      }
      for (int off = 16; off > 0; off /= 2) lt += __shfl_xor_sync(0xffffffffu, lt, off);
      __syncwarp();
      if (lane == 0) {
        const float al = m_old == -INFINITY ? 0.f : expf(m_old - m_new);
        alpha[r] = al;
        l[r] = al * l[r] + lt;
        m[r] = m_new;
      }
    }
    __syncthreads();

    for (int e = tid; e < R * d; e += threads) {
      const int r = e / d, x = e % d;
      float pv = 0.f;
      for (int c = 0; c < C; ++c) pv += ss[r * bc + c] * vs[c * d + x];
      acc[e] = alpha[r] * acc[e] + pv;
    }
    __syncthreads();
  }

  __syncthreads();  // l and m of a tile with no key tile to walk were set by other threads
  // Rows with no visible key: O = 0, lse = -inf.
  T* o = static_cast<T*>(g.o) + row0 * d;
  for (int e = tid; e < R * d; e += threads) {
    const float lr = l[e / d];
    o[e] = from_float<T>(lr > 0.f ? acc[e] / lr : 0.f);
  }
  for (int r = tid; r < R; r += threads) g.lse[row0 + r] = l[r] > 0.f ? m[r] + logf(l[r]) : -INFINITY;
}

class additive_runner : public device_runner {
 public:
  additive_runner(const problem& p, bool writes_lse)
      : device_runner(p, writes_lse),
        qp_(p.B * p.H * p.Nq * p.d * sizeof(float)),
        kp_(p.B * p.Hkv * p.Nkv * p.d * sizeof(float)),
        smem_(attention_smem_bytes(p)) {
    const std::int64_t a = additive_width(p), d = p.d;
    additive_params s = make_additive_params(a, d);
    std::vector<float> w_t(d * a), u_t(d * a);
    for (std::int64_t c = 0; c < a; ++c)  // W^T, U^T [d x a]: a warp's lanes read consecutive c
      for (std::int64_t x = 0; x < d; ++x) {
        w_t[x * a + c] = s.w[c * d + x];
        u_t[x * a + c] = s.u[c * d + x];
      }
    for (auto [buf, src] : {std::pair{&w_t_, &w_t}, {&u_t_, &u_t}, {&vw_, &s.v}}) {
      *buf = uploaded(*src);
    }
    dispatch_dtype(p.type, [&](auto t) {
      ATTN_CUDA_CHECK(cudaFuncSetAttribute(additive_kernel<decltype(t)>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(smem_)));
    });
  }
  void run() override {
    const problem& p = p_;
    const int d = static_cast<int>(p.d);
    const std::int64_t psmem = projection_smem_bytes(p);
    const additive_args g{qp_.get<float>(), kp_.get<float>(), vw_.get<float>(), v_.get(), o_.get(), lse_.get<float>()};
    const dim3 grid(static_cast<unsigned>(num_q_tiles(p)), static_cast<unsigned>(p.B * p.H));
    dispatch_dtype(p.type, [&](auto t) {
      using T = decltype(t);
      const dim3 gq(static_cast<unsigned>(ceil_div(p.Nq, proj_rows)), static_cast<unsigned>(p.B * p.H));
      const dim3 gk(static_cast<unsigned>(ceil_div(p.Nkv, proj_rows)), static_cast<unsigned>(p.B * p.Hkv));
      launch(additive_project_kernel<T>, gq, threads, psmem, stream(), q_.get<const T>(), p.Nq, d, d,
             w_t_.get<const float>(), qp_.get<float>());
      launch(additive_project_kernel<T>, gk, threads, psmem, stream(), k_.get<const T>(), p.Nkv, d, d,
             u_t_.get<const float>(), kp_.get<float>());
      launch(additive_kernel<T>, grid, threads, smem_, stream(), p, g);
    });
    ATTN_CUDA_CHECK_LAUNCH();
  }

 private:
  device_buffer w_t_, u_t_, vw_, qp_, kp_;
  std::int64_t smem_;
};

}  // namespace
}  // namespace cuda

void add_cuda_rows_additive(std::vector<variant>& rows) {
  rows.push_back({
      .name = "additive",
      .backend = backend_kind::cuda,
      .math = attention_math::additive,
      .summary = "Bahdanau additive score v^T tanh(W q + U k) (a = d, seeded): projections once (Q', K' fp32 through "
                 "memory), then a fused online-softmax kernel, a thread per score, tanh as ex2 + rcp on the SFU",
      .writes_lse = true,
      .caps = {.dtypes = {dtype::fp32, dtype::fp16, dtype::bf16}, .masks = mask_all},
      .tags = {tag::fused, tag::comparison},
      .check =
          [](const problem& p) {
            const std::string tiles =
                "additive Br=" + std::to_string(p.Br) + " Bc=" + std::to_string(p.Bc) + " d=" + std::to_string(p.d);
            if (const support s = cuda::check_launch({.grid_x = num_q_tiles(p),
                                                      .grid_y = p.B * p.H,
                                                      .threads = cuda::threads,
                                                      .smem_bytes = cuda::attention_smem_bytes(p)},
                                                     tiles);
                !s.ok)
              return s;
            return cuda::check_launch({.grid_x = ceil_div(std::max(p.Nq, p.Nkv), cuda::proj_rows),
                                       .grid_y = p.B * p.H,
                                       .threads = cuda::threads,
                                       .smem_bytes = cuda::projection_smem_bytes(p)},
                                      "additive projection");
          },
      .model = model_additive_cuda,
      .memory_bytes =
          [](const problem& p) {
            const std::int64_t a = additive_width(p);
            return cuda::device_runner::base_memory_bytes(p) +
                   4 * a * (2 * p.d + 1 + p.B * p.H * p.Nq + p.B * p.Hkv * p.Nkv);
          },
      .make_runner = [](const problem& p, bool lse) -> std::unique_ptr<runner> {
        return std::make_unique<cuda::additive_runner>(p, lse);
      },
  });
}

}  // namespace attnbench

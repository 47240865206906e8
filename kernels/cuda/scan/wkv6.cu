// wkv6 (cuda): RWKV-6's WKV operator, forward, the semantics of the CPU row (kernels/cpu/wkv6.cpp,
// docs/alternatives.md): r, k, v in Q, K, V, per head a d x d state S[j][i] (key channel j, value
// channel i) and per step t, with the data-dependent decay w_t[j] = exp(-exp(w_raw_t[j])):
//   out_t[i] = sum_j r_t[j] (u[j] k_t[j] v_t[i] + S[j][i]),   S[j][i] = w_t[j] S[j][i] + k_t[j] v_t[i].
// Idea: a block per (b, head), a thread per value channel i holding its column S[.][i] in
// registers (d <= 64: RWKV-6's head size); per step the threads stage r, k and the decay of
// their own channel in shared memory (one exp pair per channel, not per thread and channel),
// then each walks j: the output's dot product and the state update in one pass over its column.
// Changed from the CPU row: the same step order, but the d value channels run in parallel (one
// per thread) instead of in SIMD lanes, and there are no chunk tiles: the state never leaves the
// registers and each step's loads are one coalesced row.
// Expected bottleneck: latency at small B H (a block of d threads per head: B H = 32 heads fill
// 32 of 132 SMs with 2 warps each), the FMA chain of 5 d FLOPs per thread and step otherwise
// (5 d^2 + 5 d FLOPs against 2 d exps and about 5 d e bytes per head and step).
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>

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

constexpr int max_head = 64;  // cuda_wkv6_max_d: a thread's state column in registers

struct wkv6_args {
  const void *r, *k, *v;
  void* out;
  const float *w_raw, *u;  // w_raw [B, H, L, d] (Q's layout), u [D]
};

template <class T>
__global__ void __launch_bounds__(max_head) wkv6_kernel(problem p, wkv6_args g) {
  __shared__ float r_s[max_head], k_s[max_head], w_s[max_head], u_s[max_head];
  const std::int64_t d = p.d, L = p.Nkv, bh = blockIdx.x, h = bh % p.H;
  const int i = threadIdx.x;
  const std::int64_t base = bh * L * d + i;
  const T* r = static_cast<const T*>(g.r) + base;
  const T* k = static_cast<const T*>(g.k) + base;
  const T* v = static_cast<const T*>(g.v) + base;
  const float* w_raw = g.w_raw + base;
  T* out = static_cast<T*>(g.out) + base;
  u_s[i] = g.u[h * d + i];
  float s[max_head] = {};
  for (std::int64_t t = 0; t < L; ++t) {
    __syncthreads();  // the previous step's reads of r_s, k_s, w_s are done
    r_s[i] = to_float(r[t * d]);
    k_s[i] = to_float(k[t * d]);
    w_s[i] = expf(-expf(w_raw[t * d]));
    const float vi = to_float(v[t * d]);
    __syncthreads();
    float y = 0.f;
#pragma unroll
    for (int j = 0; j < max_head; ++j) {
      if (j < d) {
        const float kj = k_s[j];
        y += r_s[j] * (u_s[j] * kj * vi + s[j]);
        s[j] = w_s[j] * s[j] + kj * vi;
      }
    }
    out[t * d] = from_float<T>(y);
  }
}

class wkv6_runner : public device_runner {
 public:
  explicit wkv6_runner(const problem& p) : device_runner(p, false) {
    const wkv6_parameters s = make_wkv6_parameters(p);
    for (auto [buf, src] : {std::pair{&w_raw_, &s.w_raw}, {&u_, &s.u}}) {
      *buf = uploaded(*src);
    }
  }
  void run() override {
    const problem& p = p_;
    const wkv6_args g{q_.get(), k_.get(), v_.get(), o_.get(), w_raw_.get<float>(), u_.get<float>()};
    dispatch_dtype(p.type, [&](auto t) {
      launch(wkv6_kernel<decltype(t)>, static_cast<unsigned>(p.B * p.H), static_cast<unsigned>(p.d), 0, stream(), p, g);
      ATTN_CUDA_CHECK_LAUNCH();
    });
  }

 private:
  device_buffer w_raw_, u_;
};

}  // namespace
}  // namespace cuda

void add_cuda_rows_wkv6(std::vector<variant>& rows) {
  rows.push_back({
      .name = "wkv6",
      .backend = backend_kind::cuda,
      .math = attention_math::wkv6,
      .summary = "RWKV-6 WKV: a d x d state per head, data-dependent decay exp(-exp(w)) and bonus u; a block per "
                 "head, a thread per value channel with its state column in registers (d <= 64)",
      .writes_lse = false,
      .caps = {.dtypes = {dtype::fp32, dtype::fp16, dtype::bf16}, .masks = mask_causal, .gqa = false},
      .tags = {tag::scan},
      .check =
          [](const problem& p) {
            if (const support s = scan_support(p, false); !s.ok) return s;
            if (p.d > cuda::max_head)
              return support::no("wkv6 (cuda) keeps a thread's state column in registers: needs d <= 64 (got d=" +
                                 std::to_string(p.d) + ")");
            return cuda::check_launch({.grid_x = p.B * p.H, .threads = p.d}, "wkv6");
          },
      .model =
          [](const problem& p) {
            return model_figures{model_flops_wkv6(p), model_flops_wkv6(p), model_bytes_wkv6_cuda(p),
                                 model_exps_wkv6(p)};
          },
      .memory_bytes = memory_bytes_wkv6_cuda,
      .make_runner = [](const problem& p, bool) -> std::unique_ptr<runner> {
        return std::make_unique<cuda::wkv6_runner>(p);
      },
  });
}

}  // namespace attnbench

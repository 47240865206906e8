// wkv (cuda): RWKV-4's WKV operator, forward, the semantics of the CPU row (kernels/cpu/wkv.cpp,
// docs/alternatives.md): per channel a decayed weighted mean of the past values, weights
// e^{(t-1-i) w + k_i}, and e^{u + k_t} for the current step, in the numerically stable running-max
// form: the sums p (with v) and q (without) are kept scaled by e^{-o}, o the largest exponent
// seen, so every exp has a non-positive argument and nothing overflows however large k is.
// Idea: the recurrence is per channel and its state is three floats, so a thread owns one
// (b, channel) and walks the sequence in order with the state in registers (the shape of
// wkv_cuda.cu in BlinkDL/RWKV-LM); consecutive threads own consecutive channels of a head, so
// every step's k and v loads and out store are coalesced.
// Changed from the CPU row: the same per-channel recurrence, but one channel per thread and
// no chunk tiles (the carry never leaves registers; a warp's loads are one 128-byte line).
// Expected bottleneck: latency of the serial chain at small B D (B D / 256 blocks, each step
// four dependent exps); at B D >= ~10^5 channels the exps, 4 per channel-step against 12
// bytes in fp32 (docs/alternatives.md).
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

constexpr int threads = 256;
constexpr float min_exponent = -1e38f;  // the starting o: e^{o - anything finite} is 0

struct wkv_args {
  const void *k, *v;
  void* out;
  const float *w, *u;  // per channel [D]
};

template <class T>
__global__ void __launch_bounds__(threads) wkv_kernel(problem p, wkv_args g) {
  const std::int64_t i = std::int64_t(blockIdx.x) * threads + threadIdx.x, d = p.d, L = p.Nkv;
  if (i >= p.B * p.H * d) return;
  const std::int64_t bh = i / d, ch = (bh % p.H) * d + i % d, base = bh * L * d + i % d;
  const T* k = static_cast<const T*>(g.k) + base;
  const T* v = static_cast<const T*>(g.v) + base;
  T* out = static_cast<T*>(g.out) + base;
  const float w = g.w[ch], u = g.u[ch];
  float num = 0.f, den = 0.f, o = min_exponent;
  for (std::int64_t t = 0; t < L; ++t) {
    const float kt = to_float(k[t * d]), vt = to_float(v[t * d]);
    const float uk = u + kt, mo = fmaxf(o, uk);
    const float ea = expf(o - mo), eb = expf(uk - mo);
    out[t * d] = from_float<T>((ea * num + eb * vt) / (ea * den + eb));
    const float wo = w + o, mu = fmaxf(wo, kt);
    const float fa = expf(wo - mu), fb = expf(kt - mu);
    num = fa * num + fb * vt;
    den = fa * den + fb;
    o = mu;
  }
}

class wkv_runner : public device_runner {
 public:
  explicit wkv_runner(const problem& p) : device_runner(p, false) {
    const wkv_parameters s = make_wkv_parameters(p);
    for (auto [buf, src] : {std::pair{&w_, &s.w}, {&u_, &s.u}}) {
      *buf = uploaded(*src);
    }
  }
  void run() override {
    const problem& p = p_;
    const wkv_args g{k_.get(), v_.get(), o_.get(), w_.get<float>(), u_.get<float>()};
    const unsigned blocks = static_cast<unsigned>(ceil_div(p.B * p.H * p.d, threads));
    dispatch_dtype(p.type, [&](auto t) {
      launch(wkv_kernel<decltype(t)>, blocks, threads, 0, stream(), p, g);
      ATTN_CUDA_CHECK_LAUNCH();
    });
  }

 private:
  device_buffer w_, u_;
};

}  // namespace
}  // namespace cuda

void add_cuda_rows_wkv(std::vector<variant>& rows) {
  rows.push_back({
      .name = "wkv",
      .backend = backend_kind::cuda,
      .math = attention_math::wkv,
      .summary = "RWKV-4 WKV: per-channel decayed weighted mean of v with bonus u, running-max form; a thread per "
                 "channel, sequential over L, the state in registers",
      .writes_lse = false,
      .caps = {.dtypes = {dtype::fp32, dtype::fp16, dtype::bf16}, .masks = mask_causal, .gqa = false},
      .tags = {tag::scan},
      .check =
          [](const problem& p) {
            if (const support s = scan_support(p, false); !s.ok) return s;
            return cuda::check_launch({.grid_x = ceil_div(p.B * p.H * p.d, cuda::threads)}, "wkv");
          },
      .model =
          [](const problem& p) {
            return model_figures{model_flops_wkv(p), model_flops_wkv(p), model_bytes_wkv_cuda(p), model_exps_wkv(p)};
          },
      .memory_bytes = memory_bytes_wkv_cuda,
      .make_runner = [](const problem& p, bool) -> std::unique_ptr<runner> {
        return std::make_unique<cuda::wkv_runner>(p);
      },
  });
}

}  // namespace attnbench

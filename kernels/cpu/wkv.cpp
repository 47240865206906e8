// wkv (CPU): RWKV-4's WKV operator, forward (Peng et al. 2023; wkv_cuda.cu in BlinkDL/RWKV-LM),
// on the attention problem of the same width: channel ch = h d + x, k and v in K and V, the
// output in O (Q, RWKV's receptance, is applied outside the operator and not read;
// docs/alternatives.md). Per channel: a softmax-like weighted mean of the past values with
// weights e^{(t-1-i) w + k_i} (w < 0: the time decay) and e^{u + k_t} for the current step
// (u: the bonus), computed in the numerically stable running-max form: the sums p, q are
// kept scaled by e^{-o}, o the largest exponent seen, so no exp overflows.
// Changed from the selective scan: the state is 2 numbers and a max per channel instead of
// N, and the decay is a per-channel constant (not input-dependent): attention with a fixed
// exponential-decay position bias, in O(L) per channel instead of O(L^2).
// Loop shape: a task per (batch, head) walks the sequence in chunks of Bc steps, k and v
// tiles (Bc x d) in, out tile out, the carry (p, q, o per channel) in the thread's buffer;
// vectorised over the head's d channels.
// Expected bottleneck: the exponentials, 4 per channel-step against 17 FLOPs and 12 bytes.
#include <limits>
#include <vector>

#include "kernels/cpu/cpu_common.hpp"
#include "kernels/cpu/exp_approx.hpp"
#include "kernels/reference/scan_parameters.hpp"

namespace attnbench::cpu {

void wkv_chunk(std::int64_t steps, std::int64_t d, const float* k, const float* v, const float* w, const float* u,
               float* num, float* den, float* mx, float* out, bool decay_twice);

// One chunk of `steps` steps over a head's d channels; num, den, mx: the carry (p, q, o).
__attribute__((target_clones("avx512f", "avx2", "default"))) void wkv_chunk(std::int64_t steps, std::int64_t d,
                                                                            const float* k, const float* v,
                                                                            const float* w, const float* u, float* num,
                                                                            float* den, float* mx, float* out,
                                                                            bool decay_twice) {
  const float w_scale = decay_twice ? 2.0f : 1.0f;
  for (std::int64_t t = 0; t < steps; ++t) {
    const float* kt = k + t * d;
    const float* vt = v + t * d;
    float* ot = out + t * d;
#pragma omp simd
    for (std::int64_t x = 0; x < d; ++x) {
      const float o = mx[x], uk = u[x] + kt[x];
      float no = o > uk ? o : uk;
      float wa = exp_approx(o - no), wb = exp_approx(uk - no);
      ot[x] = (wa * num[x] + wb * vt[x]) / (wa * den[x] + wb);
      const float wo = w_scale * w[x] + o;
      no = wo > kt[x] ? wo : kt[x];
      wa = exp_approx(wo - no);
      wb = exp_approx(kt[x] - no);
      num[x] = wa * num[x] + wb * vt[x];
      den[x] = wa * den[x] + wb;
      mx[x] = no;
    }
  }
}

namespace {

// wkv_cuda.cu's starting o (MIN_VALUE): e^{o - anything finite} is 0, and o stays finite.
constexpr float min_exponent = -1e38f;

class wkv_runner final : public cpu_runner {
 public:
  wkv_runner(const problem& p, bool writes_lse, scan_fault fault)
      : cpu_runner(p, writes_lse), fault_(fault), s_(make_wkv_parameters(p)) {
    if (fault_ == scan_fault::carry_through_memory) carries_.resize(3 * p.B * p.H * p.d);
  }

  void run() override {
    reset_counters();
    const problem& p = p_;
    const std::int64_t d = p.d, L = p.Nkv, Bc = p.Bc, chunks = (L + Bc - 1) / Bc, tasks = p.B * p.H;
    const bool threads = p.B * p.H * d * L >= (std::int64_t{1} << 16);
#pragma omp parallel if (threads)
    {
      std::vector<float> buf(3 * Bc * d + 5 * d);  // k, v, out tiles; w, u; the carry p, q, o
      float* k = buf.data();
      float* v = k + Bc * d;
      float* out = v + Bc * d;
      float* w = out + Bc * d;
      float* u = w + d;
      float* carry = u + d;  // num, den, mx: 3 d
#pragma omp for schedule(dynamic, 1)
      for (std::int64_t task = 0; task < tasks; ++task) {
        const std::int64_t b = task / p.H, h = task % p.H;
        load(w, s_.w.data() + h * d, d, bytes_);
        load(u, s_.u.data() + h * d, d, bytes_);
        for (std::int64_t c = 0; c < chunks; ++c) {
          const std::int64_t t0 = c * Bc, steps = std::min(Bc, L - t0);
          if (c == 0 || fault_ == scan_fault::drop_carry) {
            std::fill(carry, carry + 2 * d, 0.0f);
            std::fill(carry + 2 * d, carry + 3 * d, min_exponent);
          } else if (fault_ == scan_fault::carry_through_memory) {
            store(carries_.data() + task * 3 * d, carry, 3 * d, bytes_);
            load(carry, carries_.data() + task * 3 * d, 3 * d, bytes_);
          }
          load(k, k_.data() + q_offset(p, b, h, t0), steps * d, bytes_);
          load(v, v_.data() + q_offset(p, b, h, t0), steps * d, bytes_);
          wkv_chunk(steps, d, k, v, w, u, carry, carry + d, carry + 2 * d, out, fault_ == scan_fault::decay_twice);
          exps_.add(4 * steps * d);
          store(o_.data() + q_offset(p, b, h, t0), out, steps * d, bytes_);
        }
      }
    }
  }

 private:
  scan_fault fault_;
  wkv_parameters s_;
  std::vector<float> carries_;  // carry_through_memory only
};

}  // namespace

std::unique_ptr<runner> make_wkv_runner(const problem& p, bool writes_lse, scan_fault fault) {
  return std::make_unique<wkv_runner>(p, writes_lse, fault);
}

}  // namespace attnbench::cpu

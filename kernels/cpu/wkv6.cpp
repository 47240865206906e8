// wkv6 (CPU): RWKV-6's WKV operator, forward (Peng et al. 2024, "Eagle and Finch"; wkv6_cuda.cu
// in BlinkDL/RWKV-LM), on the attention problem of the same width: r, k, v in Q, K, V (the
// receptance, key and value of a head of d channels), the output in O (docs/alternatives.md).
// Per head, a d x d state S[j][i] (key channel j, value channel i) and per step t:
//   out_t[i] = sum_j r_t[j] (u[j] k_t[j] v_t[i] + S[j][i]),   S[j][i] = w_t[j] S[j][i] + k_t[j] v_t[i],
// w_t[j] = exp(-exp(w_raw_t[j])): a data-dependent decay per key channel, u the bonus.
// Changed from RWKV-4's WKV: the state is a matrix per head (linear attention with a decay)
// instead of two numbers per channel, and the decay depends on the input; no running max is
// needed (no exponential of the keys). The choice of RWKV-6 over RWKV-7: its recurrence is
// wkv6_cuda.cu's exactly, with an explicit O(T) per row form for the reference; RWKV-7's
// state update adds a rank-one "delta rule" term (S (diag(w) + a b^T)) with no such short form.
// Loop shape: a task per (batch, head) walks the sequence in chunks of Bc steps, r, k, v, w_raw
// tiles (Bc x d) in, out tile out, S (d x d) carried in the thread's buffer; vectorised over the
// value channels i (rows of S are contiguous).
// Expected bottleneck: math, 5 d^2 FLOPs per head and step against 2 d exps and 20 d bytes
// (d = 64: 64 FLOPs per byte, 160 per exp), the state products running at the FMA rate.
#include <vector>

#include "kernels/cpu/cpu_common.hpp"
#include "kernels/cpu/exp_approx.hpp"
#include "kernels/reference/scan_parameters.hpp"

namespace attnbench::cpu {

void wkv6_chunk(std::int64_t steps, std::int64_t d, const float* r, const float* k, const float* v, const float* w_raw,
                const float* u, float* state, float* w, float* out, bool decay_twice);

// One chunk of `steps` steps of a head; state [d][d] (key channel j, value channel i).
__attribute__((target_clones("avx512f", "avx2", "default"))) void wkv6_chunk(std::int64_t steps, std::int64_t d,
                                                                             const float* r, const float* k,
                                                                             const float* v, const float* w_raw,
                                                                             const float* u, float* state, float* w,
                                                                             float* out, bool decay_twice) {
  for (std::int64_t t = 0; t < steps; ++t) {
    const float* rt = r + t * d;
    const float* kt = k + t * d;
    const float* vt = v + t * d;
    const float* wt = w_raw + t * d;
    float* ot = out + t * d;
    float bonus = 0.0f;
#pragma omp simd reduction(+ : bonus)
    for (std::int64_t j = 0; j < d; ++j) {
      w[j] = exp_approx(-exp_approx(wt[j]));
      bonus += rt[j] * u[j] * kt[j];
    }
    if (decay_twice)  // the planted fault (tests): the decay applied twice
      for (std::int64_t j = 0; j < d; ++j) w[j] *= w[j];
#pragma omp simd
    for (std::int64_t i = 0; i < d; ++i) ot[i] = bonus * vt[i];
    for (std::int64_t j = 0; j < d; ++j) {
      const float rj = rt[j], kj = kt[j], wj = w[j];
      float* sj = state + j * d;
#pragma omp simd
      for (std::int64_t i = 0; i < d; ++i) {
        ot[i] += rj * sj[i];
        sj[i] = wj * sj[i] + kj * vt[i];
      }
    }
  }
}

namespace {

class wkv6_runner final : public cpu_runner {
 public:
  wkv6_runner(const problem& p, bool writes_lse, scan_fault fault)
      : cpu_runner(p, writes_lse), fault_(fault), s_(make_wkv6_parameters(p)) {
    if (fault_ == scan_fault::carry_through_memory) carries_.resize(p.B * p.H * p.d * p.d);
  }

  void run() override {
    reset_counters();
    const problem& p = p_;
    const std::int64_t d = p.d, L = p.Nkv, Bc = p.Bc, chunks = (L + Bc - 1) / Bc, tasks = p.B * p.H;
    const bool threads = p.B * p.H * d * d * L >= (std::int64_t{1} << 20);
#pragma omp parallel if (threads)
    {
      std::vector<float> buf(5 * Bc * d + d * d + 2 * d);  // r, k, v, w_raw, out tiles; S; u; w
      float* r = buf.data();
      float* k = r + Bc * d;
      float* v = k + Bc * d;
      float* w_raw = v + Bc * d;
      float* out = w_raw + Bc * d;
      float* state = out + Bc * d;
      float* u = state + d * d;
      float* w = u + d;
#pragma omp for schedule(dynamic, 1)
      for (std::int64_t task = 0; task < tasks; ++task) {
        const std::int64_t b = task / p.H, h = task % p.H;
        load(u, s_.u.data() + h * d, d, bytes_);
        for (std::int64_t c = 0; c < chunks; ++c) {
          const std::int64_t t0 = c * Bc, steps = std::min(Bc, L - t0), at = q_offset(p, b, h, t0);
          if (c == 0 || fault_ == scan_fault::drop_carry) {
            std::fill(state, state + d * d, 0.0f);
          } else if (fault_ == scan_fault::carry_through_memory) {
            store(carries_.data() + task * d * d, state, d * d, bytes_);
            load(state, carries_.data() + task * d * d, d * d, bytes_);
          }
          load(r, q_.data() + at, steps * d, bytes_);
          load(k, k_.data() + at, steps * d, bytes_);
          load(v, v_.data() + at, steps * d, bytes_);
          load(w_raw, s_.w_raw.data() + at, steps * d, bytes_);
          wkv6_chunk(steps, d, r, k, v, w_raw, u, state, w, out, fault_ == scan_fault::decay_twice);
          exps_.add(2 * steps * d);
          store(o_.data() + at, out, steps * d, bytes_);
        }
      }
    }
  }

 private:
  scan_fault fault_;
  wkv6_parameters s_;
  std::vector<float> carries_;  // carry_through_memory only
};

}  // namespace

std::unique_ptr<runner> make_wkv6_runner(const problem& p, bool writes_lse, scan_fault fault) {
  return std::make_unique<wkv6_runner>(p, writes_lse, fault);
}

}  // namespace attnbench::cpu

// selective_scan (CPU): Mamba-1's selective scan, forward (Gu & Dao 2023; the semantics of
// selective_scan_ref in state-spaces/mamba), on the attention problem of the same width:
// channel ch = h d + x, u, dt, z in Q, K, V, out in O (docs/alternatives.md). Per channel
// and step: dt' = softplus(dt + bias), h = exp(dt' A) h + dt' B_t u (N state elements),
// y = C_t . h + D u, out = y silu(z).
// Changed from attention: no pairs of positions at all. A state of N numbers per channel
// carries the past, so the work is linear in L (B D L N state updates) where attention's is
// quadratic; the price is a serial dependence along L.
// Loop shape of a chunked scan: a task per (batch, head) walks the sequence in chunks of Bc
// steps (the chunk of Mamba's CUDA kernel, which keeps a channel in one block and carries
// the state across chunks in registers): per chunk it loads the u, dt, z tiles (Bc x d,
// contiguous) and, per run of channels in one group, the B and C tiles (Bc x N), runs the
// steps with the carry h (N x d, in the thread's buffer: it never goes to memory), and
// stores the out tile. Vectorised over the head's d channels, not over N: B_t and C_t are
// then broadcasts and C . h needs no horizontal sum per step (N = 16 is one AVX-512 vector
// either way; N = 1 or 3 would waste most lanes over N).
// Expected bottleneck: the exponentials, D L (N + 2) of them against 6 FLOPs and at most
// 16 / N bytes per exp (docs/alternatives.md): exp-bound on every machine, memory never.
#include <vector>

#include "kernels/cpu/cpu_common.hpp"
#include "kernels/cpu/scan_functions.hpp"
#include "kernels/reference/scan_parameters.hpp"

namespace attnbench::cpu {

void selective_scan_chunk(std::int64_t steps, std::int64_t d, std::int64_t N, std::int64_t x0, std::int64_t x1,
                          const float* u, const float* dt, const float* z, const float* bt, const float* ct,
                          const float* a, const float* skip, const float* bias, float* st, float* dtv, float* dtu,
                          float* y, float* out, bool decay_twice);

// One chunk of `steps` steps over the channels [x0, x1) of a head (row stride d): the tiles
// are in the thread's buffers; st is the carry [N][d]; a is A transposed [N][d]. (Outside the
// anonymous namespace: GCC's target_clones resolver wants external linkage.)
__attribute__((target_clones("avx512f", "avx2", "default"))) void selective_scan_chunk(
    std::int64_t steps, std::int64_t d, std::int64_t N, std::int64_t x0, std::int64_t x1, const float* u,
    const float* dt, const float* z, const float* bt, const float* ct, const float* a, const float* skip,
    const float* bias, float* st, float* dtv, float* dtu, float* y, float* out, bool decay_twice) {
  for (std::int64_t t = 0; t < steps; ++t) {
    const float* ut = u + t * d;
    const float* dtt = dt + t * d;
    const float* zt = z + t * d;
    float* ot = out + t * d;
#pragma omp simd
    for (std::int64_t x = x0; x < x1; ++x) {
      const float v = softplus_approx(dtt[x] + bias[x]);
      dtv[x] = v;
      dtu[x] = v * ut[x];
      y[x] = skip[x] * ut[x];
    }
    for (std::int64_t n = 0; n < N; ++n) {
      const float bn = bt[t * N + n], cn = ct[t * N + n];
      float* hn = st + n * d;
      const float* an = a + n * d;
      if (!decay_twice) {
#pragma omp simd
        for (std::int64_t x = x0; x < x1; ++x) {
          hn[x] = exp_approx(dtv[x] * an[x]) * hn[x] + dtu[x] * bn;
          y[x] += cn * hn[x];
        }
      } else {  // the planted fault (tests): the decay applied twice, two exps
#pragma omp simd
        for (std::int64_t x = x0; x < x1; ++x) {
          hn[x] = exp_approx(dtv[x] * an[x]) * exp_approx(dtv[x] * an[x]) * hn[x] + dtu[x] * bn;
          y[x] += cn * hn[x];
        }
      }
    }
#pragma omp simd
    for (std::int64_t x = x0; x < x1; ++x) ot[x] = y[x] * silu_approx(zt[x]);
  }
}

namespace {

// The run of channels [x0, x1) of a head that shares one group's B and C.
struct channel_run {
  std::int64_t x0, x1, group;
};

class selective_scan_runner final : public cpu_runner {
 public:
  selective_scan_runner(const problem& p, bool writes_lse, scan_fault fault)
      : cpu_runner(p, writes_lse), fault_(fault), s_(make_selective_scan_parameters(p)) {
    if (fault_ == scan_fault::carry_through_memory) carries_.resize(p.B * p.H * p.dstate * p.d);
  }

  void run() override {
    reset_counters();
    const problem& p = p_;
    const std::int64_t d = p.d, N = p.dstate, L = p.Nkv, Bc = p.Bc, G = p.ngroups;
    const std::int64_t per_group = p.H * d / G, chunks = (L + Bc - 1) / Bc, tasks = p.B * p.H;
    const bool threads = p.B * p.H * d * L * N >= (std::int64_t{1} << 18);
#pragma omp parallel if (threads)
    {
      // Tiles: u, dt, z, out (Bc x d); B, C (Bc x N); carry and A^T (N x d); D, bias and the
      // per-step rows dt', dt' u, y (d each).
      std::vector<float> buf(4 * Bc * d + 2 * Bc * N + 2 * N * d + 5 * d);
      float* u = buf.data();
      float* dt = u + Bc * d;
      float* z = dt + Bc * d;
      float* out = z + Bc * d;
      float* bt = out + Bc * d;
      float* ct = bt + Bc * N;
      float* st = ct + Bc * N;
      float* a = st + N * d;
      float* skip = a + N * d;
      float* bias = skip + d;
      float* dtv = bias + d;
      float* dtu = dtv + d;
      float* y = dtu + d;
      std::vector<channel_run> runs;
#pragma omp for schedule(dynamic, 1)
      for (std::int64_t task = 0; task < tasks; ++task) {
        const std::int64_t b = task / p.H, h = task % p.H, c0 = h * d;
        runs.clear();
        for (std::int64_t x0 = 0; x0 < d;) {
          const std::int64_t g = (c0 + x0) / per_group, x1 = std::min(d, (g + 1) * per_group - c0);
          runs.push_back({x0, x1, g});
          x0 = x1;
        }
        load_transposed(a, d, s_.a.data() + c0 * N, d, N, bytes_);
        load(skip, s_.skip.data() + c0, d, bytes_);
        load(bias, s_.bias.data() + c0, d, bytes_);
        std::fill(st, st + N * d, 0.0f);
        for (std::int64_t c = 0; c < chunks; ++c) {
          const std::int64_t t0 = c * Bc, steps = std::min(Bc, L - t0);
          if (c > 0 && fault_ == scan_fault::drop_carry) std::fill(st, st + N * d, 0.0f);
          if (c > 0 && fault_ == scan_fault::carry_through_memory) {
            float* carry = carries_.data() + task * N * d;
            store(carry, st, N * d, bytes_);
            load(st, carry, N * d, bytes_);
          }
          load(u, q_.data() + q_offset(p, b, h, t0), steps * d, bytes_);
          load(dt, k_.data() + q_offset(p, b, h, t0), steps * d, bytes_);
          load(z, v_.data() + q_offset(p, b, h, t0), steps * d, bytes_);
          for (const channel_run& r : runs) {
            const std::int64_t bc = ((b * G + r.group) * L + t0) * N;
            load(bt, s_.b.data() + bc, steps * N, bytes_);
            load(ct, s_.c.data() + bc, steps * N, bytes_);
            selective_scan_chunk(steps, d, N, r.x0, r.x1, u, dt, z, bt, ct, a, skip, bias, st, dtv, dtu, y, out,
                                 fault_ == scan_fault::decay_twice);
            exps_.add(steps * (r.x1 - r.x0) * (N + 2 + (fault_ == scan_fault::decay_twice ? N : 0)));
          }
          store(o_.data() + q_offset(p, b, h, t0), out, steps * d, bytes_);
        }
      }
    }
  }

 private:
  scan_fault fault_;
  selective_scan_parameters s_;
  std::vector<float> carries_;  // carry_through_memory only: one carry per task
};

}  // namespace

std::unique_ptr<runner> make_selective_scan_runner(const problem& p, bool writes_lse, scan_fault fault) {
  return std::make_unique<selective_scan_runner>(p, writes_lse, fault);
}

}  // namespace attnbench::cpu

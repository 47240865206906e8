// ssd (CPU): Mamba-2's state space duality layer, forward, in its chunked form (Dao & Gu 2024;
// the four steps of ssd_minimal_discrete in state-spaces/mamba, mamba_ssm/modules/ssd_minimal.py),
// on the attention problem of the same width: H heads of P = d channels, x and z in Q and V,
// out in O (docs/alternatives.md). Per head and step: dt = softplus(dt_raw + bias),
// S = exp(dt A) S + dt B_t x_t^T (an N x P state), y = S^T C_t + D x_t, out = y silu(z).
// Changed from the selective scan: A is one scalar per head, so the recurrence is linear
// attention with a decay mask, y_t = sum_{s<=t} (C_t . B_s) exp(A_cs[t] - A_cs[s]) dt_s x_s +
// D x_t. Within a chunk of Q = Bc steps that sum is two matrix products, (C B^T o L) (dt x),
// L the lower-triangular decay mask; across chunks the state carries the rest, added as
// exp(A_cs[t]) C_t . S_in, and the chunk's own contribution updates S_in. Per (batch, head) task
// the chunks run in order with S in the thread's buffer; per chunk it loads x, z (T x P), dt_raw
// (T) and its group's B, C (T x N), and stores out (T x P).
// Expected bottleneck: the matrix products, 2 T (N + P) FLOPs per step in the intra-chunk
// products and 4 N P in the state's, against T / 2 + P + 2 exps per step (the decay mask's
// exps per pair, silu's per channel): near the ridge point, tensor cores' work on a GPU.
#include <vector>

#include "kernels/cpu/cpu_common.hpp"
#include "kernels/cpu/scan_functions.hpp"
#include "kernels/cpu/tile_gemm.hpp"
#include "kernels/reference/scan_parameters.hpp"

namespace attnbench::cpu {

// A thread's tiles: x, z, out, dt x (Q x P); B^T (N x Q: the products C B^T and B^T (dt x)
// then both take it row-major, tile_gemm has no NT form), C (Q x N); the state S (N x P); the
// mask M (Q x Q); dt, A_cs, exp(A_cs) and the last row of L (Q each); the chunk's decay
// repeated per state row (N).
struct ssd_tiles {
  static std::int64_t floats(std::int64_t Q, std::int64_t P, std::int64_t N) {
    return 4 * Q * P + 2 * Q * N + N * P + Q * Q + 4 * Q + N;
  }
  ssd_tiles(float* f, std::int64_t Q, std::int64_t P, std::int64_t N)
      : x(f),
        z(x + Q * P),
        out(z + Q * P),
        xdt(out + Q * P),
        bt(xdt + Q * P),
        ct(bt + Q * N),
        st(ct + Q * N),
        m(st + N * P),
        dt(m + Q * Q),
        acs(dt + Q),
        eacs(acs + Q),
        last_row(eacs + Q),
        chunk_decay(last_row + Q) {}
  float *x, *z, *out, *xdt, *bt, *ct, *st, *m, *dt, *acs, *eacs, *last_row, *chunk_decay;
};

void ssd_chunk(const ssd_tiles& w, std::int64_t T, std::int64_t P, std::int64_t N, std::int64_t Q, float a, float skip,
               float bias, bool carry_on, bool twice);

// One chunk of T steps in the thread's tiles; S, the carry, is updated only when a later chunk
// reads it. (Outside the anonymous namespace: GCC's target_clones resolver wants external
// linkage; the clones are what vectorise the exp loops: without them, on the build's baseline
// target, this chunk ran scalar, 47 us a chunk at B1 H4 L4096 d64 N16.)
__attribute__((target_clones("avx512f", "avx2", "default"))) void ssd_chunk(const ssd_tiles& w, std::int64_t T,
                                                                            std::int64_t P, std::int64_t N,
                                                                            std::int64_t Q, float a, float skip,
                                                                            float bias, bool carry_on, bool twice) {
  const float *x = w.x, *z = w.z, *bt = w.bt, *ct = w.ct;
  float *out = w.out, *xdt = w.xdt, *st = w.st, *m = w.m;
  float *dt = w.dt, *acs = w.acs, *eacs = w.eacs, *last_row = w.last_row;
  float run = 0;
  for (std::int64_t t = 0; t < T; ++t) {
    dt[t] = softplus_approx(dt[t] + bias);
    run += dt[t] * a;
    acs[t] = run;
    eacs[t] = exp_approx(run);
    for (std::int64_t i = 0; i < P; ++i) xdt[t * P + i] = dt[t] * x[t * P + i];
  }
  // M = (C B^T) o L, L[t][s] = exp(A_cs[t] - A_cs[s]) for s <= t, else 0.
  tile_gemm(T, T, N, 1.0f, {ct, N, 1}, bt, Q, m, Q, {});
  for (std::int64_t t = 0; t < T; ++t) {
    float* mt = m + t * Q;
    const float at = acs[t];
    if (!twice) {
#pragma omp simd
      for (std::int64_t s = 0; s <= t; ++s) mt[s] *= exp_approx(at - acs[s]);
    } else {  // the planted fault (tests): the decay applied twice, two exps a pair
#pragma omp simd
      for (std::int64_t s = 0; s <= t; ++s) mt[s] *= exp_approx(at - acs[s]) * exp_approx(at - acs[s]);
    }
    std::fill(mt + t + 1, mt + T, 0.0f);
  }
  // out = diag(exp(A_cs)) C S_in + M (dt x), then D x, then the gate.
  tile_gemm(T, P, N, 1.0f, {ct, N, 1}, st, P, out, P, {.ab_row_scale = eacs});
  tile_gemm(T, P, T, 1.0f, {m, Q, 1}, xdt, P, out, P, {.accumulate = true});
#pragma omp simd
  for (std::int64_t e = 0; e < T * P; ++e) out[e] = (out[e] + skip * x[e]) * silu_approx(z[e]);
  // S_out = exp(A_cs[T-1]) S_in + B^T diag(L[T-1]) (dt x); L[T-1][s] = exp(A_cs[T-1] - A_cs[s]),
  // recomputed (T exps) since M holds it multiplied by C B^T.
  if (carry_on) {
#pragma omp simd
    for (std::int64_t t = 0; t < T; ++t) last_row[t] = exp_approx(acs[T - 1] - acs[t]);
    for (std::int64_t t = 0; t < T; ++t)
#pragma omp simd
      for (std::int64_t i = 0; i < P; ++i) xdt[t * P + i] *= last_row[t];
    std::fill(w.chunk_decay, w.chunk_decay + N, eacs[T - 1]);
    tile_gemm(N, P, T, 1.0f, {bt, Q, 1}, xdt, P, st, P, {.accumulate = true, .c_row_scale = w.chunk_decay});
  }
}

namespace {

class ssd_runner final : public cpu_runner {
 public:
  ssd_runner(const problem& p, bool writes_lse, scan_fault fault)
      : cpu_runner(p, writes_lse), fault_(fault), s_(make_ssd_parameters(p)) {
    if (fault_ == scan_fault::carry_through_memory) carries_.resize(p.B * p.H * p.dstate * p.d);
  }

  void run() override {
    reset_counters();
    const problem& p = p_;
    const std::int64_t P = p.d, N = p.dstate, L = p.Nkv, Q = p.Bc, G = p.ngroups;
    const std::int64_t heads_per_group = p.H / G, chunks = (L + Q - 1) / Q, tasks = p.B * p.H;
    blas_single_thread blas;
#pragma omp parallel if (tasks > 1 && p.B * p.H * L * P * N >= (std::int64_t{1} << 18))
    {
      std::vector<float> buf(ssd_tiles::floats(Q, P, N));
      const ssd_tiles w(buf.data(), Q, P, N);
#pragma omp for schedule(dynamic, 1)
      for (std::int64_t task = 0; task < tasks; ++task) {
        const std::int64_t b = task / p.H, h = task % p.H, g = h / heads_per_group;
        float a = 0, skip = 0, bias = 0;
        load(&a, &s_.a[h], 1, bytes_);
        load(&skip, &s_.skip[h], 1, bytes_);
        load(&bias, &s_.bias[h], 1, bytes_);
        std::fill(w.st, w.st + N * P, 0.0f);
        for (std::int64_t c = 0; c < chunks; ++c) {
          const std::int64_t t0 = c * Q, T = std::min(Q, L - t0);
          if (c > 0 && fault_ == scan_fault::drop_carry) std::fill(w.st, w.st + N * P, 0.0f);
          if (c > 0 && fault_ == scan_fault::carry_through_memory) {
            float* carry = carries_.data() + task * N * P;
            store(carry, w.st, N * P, bytes_);
            load(w.st, carry, N * P, bytes_);
          }
          load(w.dt, s_.dt_raw.data() + (b * p.H + h) * L + t0, T, bytes_);
          load(w.x, q_.data() + q_offset(p, b, h, t0), T * P, bytes_);
          load(w.z, v_.data() + q_offset(p, b, h, t0), T * P, bytes_);
          const std::int64_t bc = ((b * G + g) * L + t0) * N;
          load_transposed(w.bt, Q, s_.b.data() + bc, T, N, bytes_);
          load(w.ct, s_.c.data() + bc, T * N, bytes_);
          const bool twice = fault_ == scan_fault::decay_twice, carry_on = c + 1 < chunks;
          ssd_chunk(w, T, P, N, Q, a, skip, bias, carry_on, twice);
          exps_.add(T * (T + 1) / 2 * (twice ? 2 : 1) + 2 * T + T * P + (carry_on ? T : 0));
          store(o_.data() + q_offset(p, b, h, t0), w.out, T * P, bytes_);
        }
      }
    }
  }

 private:
  scan_fault fault_;
  ssd_parameters s_;
  std::vector<float> carries_;  // carry_through_memory: [B, H, N, P]
};

}  // namespace

std::unique_ptr<runner> make_ssd_runner(const problem& p, bool writes_lse, scan_fault fault) {
  return std::make_unique<ssd_runner>(p, writes_lse, fault);
}

}  // namespace attnbench::cpu

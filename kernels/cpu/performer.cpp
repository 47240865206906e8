// performer (CPU): Performer FAVOR+ (Choromanski et al. 2021). Idea: softmax's kernel
// exp(q . k / sqrt(d)) is the expectation of phi(q) . phi(k) over positive random
// features phi(x) = exp(omega^T x~ - |x~|^2 / 2) / sqrt(m), x~ = d^-1/4 x, with m fixed
// block-orthogonal Gaussian omega (kernels/reference/approx_params.hpp), so attention
// becomes linear attention with m features: O_i = phi(q_i)^T S / phi(q_i)^T z,
// S = sum_j phi(k_j) v_j^T (m x d), z = sum_j phi(k_j). Changed from `linear`: the
// feature map is a product (X omega~^T, m = 256 columns) and an exp per feature instead
// of elu + 1 per element, and it needs stabilisers: each query row subtracts its own
// max of omega^T q~ - |q~|^2 / 2 (a per-row factor, cancels in the ratio); the keys
// share one max over every key and feature of (batch, KV head) (a common factor of
// numerator and denominator), which costs a pass over K before the state pass can
// start (K read twice, the feature product of the keys computed twice). The 1/sqrt(m)
// cancels likewise and is not applied. Non-causal: the state pass per (batch, KV head)
// and the output pass per (query tile, batch, head) as in `linear`; causal: the
// chunked prefix-sum form (chunk = Bc, exclusive prefix states, masked intra-chunk
// block phi(Q) phi(K_c)^T recomputing phi(K_c)), as in `linear`.
// Expected bottleneck: math: the feature products, 2 d m FLOPs per mapped row (3 per
// key), against 2 m (d + 1) for the state, and m exps per mapped row.
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/cpu/cpu_common.hpp"
#include "kernels/reference/approx_params.hpp"

namespace attnbench::cpu {

namespace {

class performer_runner final : public cpu_runner {
 public:
  performer_runner(const problem& p, bool writes_lse, planted_defect defect)
      : cpu_runner(p, writes_lse),
        stabilised_(defect != planted_defect::performer_no_stabiliser),
        causal_(p.mask.kind == mask_kind::causal),
        m_(performer_features(p)),
        first_chunk_(linear_first_chunk(p)),
        states_per_head_(causal_ ? num_kv_tiles(p) - first_chunk_ : 1),
        omega_t_(p.d * m_),
        state_(state_elems() * p.B * p.Hkv * states_per_head_),
        key_max_(p.B * p.Hkv) {
    // omega~^T = d^-1/4 omega^T, [d x m]: X omega~^T is then an NN product.
    const std::vector<float> w = make_performer_features(m_, p.d);
    const float c = static_cast<float>(std::pow(static_cast<double>(p.d), -0.25));
    for (std::int64_t f = 0; f < m_; ++f)
      for (std::int64_t x = 0; x < p.d; ++x) omega_t_[x * m_ + f] = c * w[f * p.d + x];
  }

  void run() override {
    reset_counters();
    blas_single_thread blas;
    state_pass();
    if (causal_)
      causal_output_pass();
    else
      output_pass();
  }

 private:
  std::int64_t state_elems() const { return m_ * p_.d + m_; }
  float* state(std::int64_t b, std::int64_t hkv, std::int64_t c) {
    return state_.data() + ((b * p_.Hkv + hkv) * states_per_head_ + c) * state_elems();
  }

  // u = x omega~^T - |x~|^2 / 2 for `rows` rows of x (u: rows x m).
  void log_features(const float* x, std::int64_t rows, const float* omega_t, float* u) const {
    const std::int64_t d = p_.d;
    gemm_nn(rows, m_, d, 1.0f, x, d, omega_t, m_, 0.0f, u, m_);
    const float half_scale = 0.5f / std::sqrt(static_cast<float>(d));  // |x~|^2 / 2 = |x|^2 / (2 sqrt(d))
    for (std::int64_t r = 0; r < rows; ++r) {
      float sq = 0;
      for (std::int64_t c = 0; c < d; ++c) sq += x[r * d + c] * x[r * d + c];
      const float diag = half_scale * sq;
      for (std::int64_t f = 0; f < m_; ++f) u[r * m_ + f] -= diag;
    }
  }
  // phi(Q) rows: u -> exp(u - max_f u) per row (m exps a row).
  void query_features(float* u, std::int64_t rows) {
    for (std::int64_t r = 0; r < rows; ++r)
      exp_sub_sum(u + r * m_, m_, stabilised_ ? row_max(u + r * m_, m_) : 0.0f, exps_);
  }
  // phi(K) rows: u -> exp(u - s), s the keys' common stabiliser.
  void key_features(float* u, std::int64_t rows, float s) { exp_sub_sum(u, rows * m_, stabilised_ ? s : 0.0f, exps_); }

  // Per (batch, KV head): pass A, the keys' stabiliser; pass B, S = phi(K)^T V, z = sum phi(K)
  // (causal: the running state stored as chunk c's exclusive prefix from the first chunk
  // with queries on, the last chunk feeding none).
  void state_pass() {
    const problem& p = p_;
    const std::int64_t d = p.d, nc = num_kv_tiles(p), tasks = p.B * p.Hkv;
#pragma omp parallel if (worth_threads(p))
    {
      std::vector<float> buf(state_elems() + d * m_ + p.Bc * m_);
      float* st = buf.data();
      float* om = st + state_elems();
      float* u = om + d * m_;
#pragma omp for schedule(static)
      for (std::int64_t t = 0; t < tasks; ++t) {
        const std::int64_t b = t / p.Hkv, hkv = t % p.Hkv;
        load(om, omega_t_.data(), d * m_, bytes_);
        float s = -std::numeric_limits<float>::infinity();
        for (std::int64_t c = 0; c < nc; ++c) {
          const std::int64_t cols = kv_tile_cols(p, c);
          log_features(read_tile(k_.data() + kv_offset(p, b, hkv, c * p.Bc), cols * d, bytes_), cols, om, u);
          s = std::max(s, row_max(u, cols * m_));
        }
        if (causal_) store(&key_max_[t], &s, 1, bytes_);
        std::fill(st, st + state_elems(), 0.0f);
        for (std::int64_t c = 0; c < nc; ++c) {
          if (causal_ && c >= first_chunk_) store(state(b, hkv, c - first_chunk_), st, state_elems(), bytes_);
          if (causal_ && c == nc - 1) break;
          const std::int64_t cols = kv_tile_cols(p, c);
          const float* ks = read_tile(k_.data() + kv_offset(p, b, hkv, c * p.Bc), cols * d, bytes_);
          const float* vs = read_tile(v_.data() + kv_offset(p, b, hkv, c * p.Bc), cols * d, bytes_);
          log_features(ks, cols, om, u);
          key_features(u, cols, s);
          gemm_tn(m_, d, cols, 1.0f, u, m_, vs, d, 1.0f, st, d);  // S += phi(K)^T V
          for (std::int64_t j = 0; j < cols; ++j)                 // z += sum_j phi(k_j)
            for (std::int64_t f = 0; f < m_; ++f) st[m_ * d + f] += u[j * m_ + f];
        }
        if (!causal_) store(state(b, hkv, 0), st, state_elems(), bytes_);
      }
    }
  }

  static void normalise(float* num, const float* den, std::int64_t rows, std::int64_t d) {
    for (std::int64_t r = 0; r < rows; ++r) scale(num + r * d, d, 1.0f / den[r]);
  }

  void output_pass() {
    const problem& p = p_;
    const std::int64_t d = p.d, tasks = num_q_tiles(p) * p.B * p.H;
#pragma omp parallel if (worth_threads(p))
    {
      std::vector<float> buf(state_elems() + d * m_ + p.Br * m_ + p.Br * d + p.Br);
      float* st = buf.data();
      float* om = st + state_elems();
      float* u = om + d * m_;
      float* num = u + p.Br * m_;
      float* den = num + p.Br * d;
#pragma omp for schedule(static)
      for (std::int64_t t = 0; t < tasks; ++t) {
        const auto [qt, b, h] = qbh_task_of(p, t);
        const std::int64_t rows = q_tile_rows(p, qt), r0 = qt * p.Br;
        load(st, state(b, p.kv_head(h), 0), state_elems(), bytes_);
        load(om, omega_t_.data(), d * m_, bytes_);
        log_features(read_tile(q_.data() + q_offset(p, b, h, r0), rows * d, bytes_), rows, om, u);
        query_features(u, rows);
        gemm_nn(rows, d, m_, 1.0f, u, m_, st, d, 0.0f, num, d);           // phi(Q) S
        gemm_nn(rows, 1, m_, 1.0f, u, m_, st + m_ * d, 1, 0.0f, den, 1);  // phi(Q) z
        normalise(num, den, rows, d);
        store(o_.data() + q_offset(p, b, h, r0), num, rows * d, bytes_);
      }
    }
  }

  void causal_output_pass() {
    const problem& p = p_;
    const std::int64_t d = p.d, Bc = p.Bc, nc = num_kv_tiles(p);
    const std::int64_t dead = std::max<std::int64_t>(0, p.Nq - p.Nkv);  // rows with i' < 0
    const std::int64_t tasks = (nc - first_chunk_) * p.B * p.H;
#pragma omp parallel if (worth_threads(p))
    {
      std::vector<float> buf(state_elems() + d * m_ + 2 * Bc * m_ + Bc * d + Bc * Bc + Bc);
      float* st = buf.data();
      float* om = st + state_elems();
      float* uq = om + d * m_;
      float* uk = uq + Bc * m_;
      float* num = uk + Bc * m_;
      float* a = num + Bc * d;
      float* den = a + Bc * Bc;
#pragma omp for schedule(static) nowait
      for (std::int64_t bh = 0; bh < p.B * p.H; ++bh)
        if (dead > 0) fill_store(o_.data() + q_offset(p, bh / p.H, bh % p.H, 0), 0.0f, dead * d, bytes_);
#pragma omp for schedule(dynamic, 1)
      for (std::int64_t t = 0; t < tasks; ++t) {
        const std::int64_t c = nc - 1 - t / (p.B * p.H), b = (t / p.H) % p.B, h = t % p.H;
        const std::int64_t hkv = p.kv_head(h), cols = kv_tile_cols(p, c), c0 = c * Bc;
        const span64 rws = linear_chunk_rows(p, c);
        const std::int64_t rows = rws.size();
        float s = 0;
        load(&s, &key_max_[b * p.Hkv + hkv], 1, bytes_);
        load(st, state(b, hkv, c - first_chunk_), state_elems(), bytes_);
        load(om, omega_t_.data(), d * m_, bytes_);
        log_features(read_tile(q_.data() + q_offset(p, b, h, rws.lo), rows * d, bytes_), rows, om, uq);
        query_features(uq, rows);
        log_features(read_tile(k_.data() + kv_offset(p, b, hkv, c0), cols * d, bytes_), cols, om, uk);
        key_features(uk, cols, s);
        const float* vs = read_tile(v_.data() + kv_offset(p, b, hkv, c0), cols * d, bytes_);
        // Inter-chunk: phi(Q) S_c and phi(Q) z_c.
        gemm_nn(rows, d, m_, 1.0f, uq, m_, st, d, 0.0f, num, d);
        gemm_nn(rows, 1, m_, 1.0f, uq, m_, st + m_ * d, 1, 0.0f, den, 1);
        // Intra-chunk: A = phi(Q) phi(K_c)^T with keys j > i' zeroed.
        gemm_nt(rows, cols, m_, 1.0f, uq, m_, uk, m_, 0.0f, a, Bc);
        for (std::int64_t r = 0; r < rows; ++r) {
          mask_row(p, rws.lo + r, c0, a + r * Bc, cols, 0.0f);
          den[r] += sum(a + r * Bc, cols);
        }
        gemm_nn(rows, d, cols, 1.0f, a, Bc, vs, d, 1.0f, num, d);
        normalise(num, den, rows, d);
        store(o_.data() + q_offset(p, b, h, rws.lo), num, rows * d, bytes_);
      }
    }
  }

  bool stabilised_;
  bool causal_;
  std::int64_t m_;                // random features
  std::int64_t first_chunk_;      // causal: first key chunk holding some i'
  std::int64_t states_per_head_;  // causal: one prefix state per chunk from first_chunk_
  std::vector<float> omega_t_;    // [d x m] fp32, d^-1/4 omega^T
  std::vector<float> state_;      // [B, Hkv, states_per_head, m*d + m] fp32
  std::vector<float> key_max_;    // [B, Hkv]: the keys' stabiliser (causal: read by the output pass)
};

}  // namespace

std::unique_ptr<runner> make_performer_runner(const problem& p, bool writes_lse, planted_defect defect) {
  return std::make_unique<performer_runner>(p, writes_lse, defect);
}

}  // namespace attnbench::cpu

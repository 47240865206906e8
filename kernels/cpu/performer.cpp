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
// cancels likewise and is not applied. The passes are `linear`'s (feature_map_runner:
// F = m; causal, the intra-chunk block phi(Q) phi(K_c)^T recomputes phi(K_c)).
// Expected bottleneck: math: the feature products, 2 d m FLOPs per mapped row (3 per
// key), against 2 m (d + 1) for the state, and m exps per mapped row.
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/cpu/feature_map_runner.hpp"
#include "kernels/reference/approx_params.hpp"

namespace attnbench::cpu {

namespace {

// Scratch per thread: omega~^T (d x m) as loaded, then the keys' stabiliser s.
class performer_runner final : public feature_map_runner {
 public:
  performer_runner(const problem& p, bool writes_lse, planted_defect defect)
      : feature_map_runner(p, writes_lse, performer_features(p), p.d * performer_features(p) + 1),
        stabilised_(defect != planted_defect::performer_no_stabiliser),
        m_(features_),
        omega_t_(p.d * m_),
        key_max_(p.B * p.Hkv) {
    // omega~^T = d^-1/4 omega^T, [d x m]: X omega~^T is then an NN product.
    const std::vector<float> w = make_performer_features(m_, p.d);
    const float c = static_cast<float>(std::pow(static_cast<double>(p.d), -0.25));
    for (std::int64_t f = 0; f < m_; ++f)
      for (std::int64_t x = 0; x < p.d; ++x) omega_t_[x * m_ + f] = c * w[f * p.d + x];
  }

 private:
  float& key_stabiliser(float* scratch) const { return scratch[p_.d * m_]; }

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

  // Pass A over the keys of (batch, KV head): their common stabiliser, the max over every
  // key and feature (causal: kept for the output pass, which maps keys again).
  void begin_state(std::int64_t b, std::int64_t hkv, float* scratch, float* u) override {
    const problem& p = p_;
    load(scratch, omega_t_.data(), p.d * m_, bytes_);
    float s = -std::numeric_limits<float>::infinity();
    for (std::int64_t c = 0; c < num_kv_tiles(p); ++c) {
      const std::int64_t cols = kv_tile_cols(p, c);
      log_features(read_tile(k_.data() + kv_offset(p, b, hkv, c * p.Bc), cols * p.d, bytes_), cols, scratch, u);
      s = std::max(s, row_max(u, cols * m_));
    }
    if (causal_) store(&key_max_[b * p.Hkv + hkv], &s, 1, bytes_);
    key_stabiliser(scratch) = s;
  }
  void begin_output(std::int64_t b, std::int64_t hkv, float* scratch) override {
    if (causal_) load(&key_stabiliser(scratch), &key_max_[b * p_.Hkv + hkv], 1, bytes_);
    load(scratch, omega_t_.data(), p_.d * m_, bytes_);
  }
  // phi(Q) rows: u -> exp(u - max_f u) per row (m exps a row).
  void map_queries(const float* global, std::int64_t rows, float* u, float* scratch) override {
    log_features(read_tile(global, rows * p_.d, bytes_), rows, scratch, u);
    for (std::int64_t r = 0; r < rows; ++r)
      exp_sub_sum(u + r * m_, m_, stabilised_ ? row_max(u + r * m_, m_) : 0.0f, exps_);
  }
  // phi(K) rows: u -> exp(u - s), s the keys' common stabiliser.
  void map_keys(const float* global, std::int64_t rows, float* u, float* scratch) override {
    log_features(read_tile(global, rows * p_.d, bytes_), rows, scratch, u);
    exp_sub_sum(u, rows * m_, stabilised_ ? key_stabiliser(scratch) : 0.0f, exps_);
  }

  bool stabilised_;
  std::int64_t m_;              // random features
  std::vector<float> omega_t_;  // [d x m] fp32, d^-1/4 omega^T
  std::vector<float> key_max_;  // [B, Hkv]: the keys' stabiliser (causal: read by the output pass)
};

}  // namespace

std::unique_ptr<runner> make_performer_runner(const problem& p, bool writes_lse, planted_defect defect) {
  return std::make_unique<performer_runner>(p, writes_lse, defect);
}

}  // namespace attnbench::cpu

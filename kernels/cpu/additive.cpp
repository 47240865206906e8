// additive (CPU): Bahdanau, Cho and Bengio (2015)'s additive attention,
// e_ij = v^T tanh(W q_i + U k_j), softmax over j, O = P V. Idea: the projections are
// applied once, q' = W q and k' = U k ([a] each, a = d), in a projection pass that
// writes Q' and K' (fp32), so the score is an add, a tanh and a multiply-add per
// width element; then a FlashAttention-2 loop (flash2.cpp) with that score in place of
// scale q . k: per (query tile, batch, head) Q' read once, the key tiles of the causal
// bound walked with an online softmax (tile_softmax.hpp), O and lse written once. GQA
// native (K' per KV head). Any interval or sparse mask (element-wise, as flash2).
// Changed from flash2: the score is not a product, so no tensor-core or tile GEMM can
// compute it: a (rows x cols x a) tanh per tile, each an exp on the FPU
// (tanh_score), against the one exp per score of the softmax.
// Expected bottleneck: the exp roof: a + 1 exps per computed score against 2 (3a + 2d)
// FLOPs; at a = d = 64, ~65 exps per 640 FLOPs where dot-product attention has one
// per 256.
// Luong's "general" score q^T W k is dot-product attention on (W^T q, k) after one
// projection GEMM: no row of its own (docs/approximations.md).
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/cpu/cpu_common.hpp"
#include "kernels/cpu/tile_gemm.hpp"
#include "kernels/cpu/tile_softmax.hpp"
#include "kernels/reference/approx_params.hpp"

namespace attnbench::cpu {

namespace {

// The control: tanh replaced by the identity.
float identity_score(const float* q, const float* k, const float* v, std::int64_t n) {
  float s = 0;
  for (std::int64_t c = 0; c < n; ++c) s += v[c] * (q[c] + k[c]);
  return s;
}

class additive_runner final : public cpu_runner {
 public:
  additive_runner(const problem& p, bool writes_lse, planted_defect defect)
      : cpu_runner(p, writes_lse),
        a_(additive_width(p)),
        score_(defect == planted_defect::additive_tanh_identity ? identity_score : tanh_score),
        params_(make_additive_params(a_, p.d)),
        w_t_(p.d * a_),
        u_t_(p.d * a_),
        qp_(p.B * p.H * p.Nq * a_),
        kp_(p.B * p.Hkv * p.Nkv * a_),
        tiles_(make_kv_tile_list(p, tile_walk::causal_bound)) {
    for (std::int64_t c = 0; c < a_; ++c)  // W^T, U^T [d x a]: X W^T is an NN product
      for (std::int64_t x = 0; x < p.d; ++x) {
        w_t_[x * a_ + c] = params_.w[c * p.d + x];
        u_t_[x * a_ + c] = params_.u[c * p.d + x];
      }
  }

  void run() override {
    reset_counters();
    blas_single_thread blas;
    project(q_.data(), p_.B * p_.H, p_.Nq, w_t_.data(), qp_.data());
    project(k_.data(), p_.B * p_.Hkv, p_.Nkv, u_t_.data(), kp_.data());
    attention_pass();
  }

 private:
  // Per head: X' = X M^T in chunks of Br rows; M^T read once per head.
  void project(const float* x, std::int64_t heads, std::int64_t n, const float* m_t, float* out) {
    const std::int64_t d = p_.d, Br = p_.Br;
#pragma omp parallel if (worth_threads(p_))
    {
      std::vector<float> buf(d * a_ + Br * a_);
      float* mt = buf.data();
      float* xp = mt + d * a_;
#pragma omp for schedule(static)
      for (std::int64_t t = 0; t < heads; ++t) {
        load(mt, m_t, d * a_, bytes_);
        for (std::int64_t r0 = 0; r0 < n; r0 += Br) {
          const std::int64_t rows = std::min(Br, n - r0);
          const float* xs = read_tile(x + (t * n + r0) * d, rows * d, bytes_);
          gemm_nn(rows, a_, d, 1.0f, xs, d, mt, a_, 0.0f, xp, a_);
          store(out + (t * n + r0) * a_, xp, rows * a_, bytes_);
        }
      }
    }
  }

  void attention_pass() {
    const problem& p = p_;
    const std::int64_t d = p.d, a = a_, Br = p.Br, Bc = p.Bc;
    const float neg_inf = -std::numeric_limits<float>::infinity();
    const std::int64_t tasks = num_q_tiles(p) * p.B * p.H;
#pragma omp parallel if (worth_threads(p))
    {
      // Tile buffers: v, Q' tile (Br x a), accumulator (Br x d), S^T (Bc x Br), m, l, alpha.
      std::vector<float> buf(a + Br * a + Br * d + Bc * Br + 3 * Br);
      float* vv = buf.data();
      float* qs = vv + a;
      float* acc = qs + Br * a;
      float* st = acc + Br * d;
      float* m = st + Bc * Br;
      float* l = m + Br;
      float* alpha = l + Br;
#pragma omp for schedule(dynamic, 1)
      for (std::int64_t t = 0; t < tasks; ++t) {
        const auto [qt, b, h] = qbh_task_of(p, t);
        const std::int64_t rows = q_tile_rows(p, qt), r0 = qt * Br, hkv = p.kv_head(h);
        load(vv, params_.v.data(), a, bytes_);
        load(qs, qp_.data() + ((b * p.H + h) * p.Nq + r0) * a, rows * a, bytes_);
        std::fill(m, m + rows, neg_inf);
        std::fill(l, l + rows, 0.0f);
        bool acc_written = false;
        const kv_tile_list_view walk = tiles_.view();
        for (std::int32_t n = 0; n < walk.count(h, qt); ++n) {
          const std::int64_t kt = walk.at(h, qt, n);
          const std::int64_t cols = kv_tile_cols(p, kt), c0 = kt * Bc;
          const float* ks = read_tile(kp_.data() + ((b * p.Hkv + hkv) * p.Nkv + c0) * a, cols * a, bytes_);
          const float* vs = read_tile(v_.data() + kv_offset(p, b, hkv, c0), cols * d, bytes_);
          for (std::int64_t j = 0; j < cols; ++j)  // S^T[j][r] = v^T tanh(q'_r + k'_j)
            for (std::int64_t r = 0; r < rows; ++r) st[j * Br + r] = score_(qs + r * a, ks + j * a, vv, a);
          exps_.add(rows * cols * a);
          if (!tile_fully_visible(p, {r0, r0 + rows}, c0, c0 + cols))
            for (std::int64_t r = 0; r < rows; ++r) mask_strided(p, h, r0 + r, c0, st + r, Br, cols, neg_inf);
          exps_.add(online_softmax_columns(st, cols, Br, rows, m, l, alpha));
          tile_gemm(rows, d, cols, 1.0f, {st, 1, Br}, vs, d, acc, d, {.accumulate = acc_written, .c_row_scale = alpha});
          acc_written = true;
        }
        for (std::int64_t r = 0; r < rows; ++r) {
          if (acc_written && l[r] > 0) {
            scale(acc + r * d, d, 1.0f / l[r]);
            l[r] = m[r] + std::log(l[r]);
          } else {  // no visible key: zeros, lse -inf
            std::fill(acc + r * d, acc + (r + 1) * d, 0.0f);
            l[r] = neg_inf;
          }
        }
        store(o_.data() + q_offset(p, b, h, r0), acc, rows * d, bytes_);
        store(lse_.data() + (b * p.H + h) * p.Nq + r0, l, rows, bytes_);
      }
    }
  }

  std::int64_t a_;  // attention width
  float (*score_)(const float*, const float*, const float*, std::int64_t);
  additive_params params_;
  std::vector<float> w_t_, u_t_;  // [d x a] fp32
  std::vector<float> qp_, kp_;    // Q' [B, H, Nq, a], K' [B, Hkv, Nkv, a] fp32 workspace
  kv_tile_list tiles_;
};

}  // namespace

std::unique_ptr<runner> make_additive_runner(const problem& p, bool writes_lse, planted_defect defect) {
  return std::make_unique<additive_runner>(p, writes_lse, defect);
}

}  // namespace attnbench::cpu

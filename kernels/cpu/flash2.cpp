// flash2 (CPU): FlashAttention-2's forward loop. Idea: one task per
// (query tile, batch, head) loads its Q tile once, walks the key tiles with
// an online softmax (running max m, running sum l, unnormalised accumulator
// in the tile buffers) and writes O and the log-sum-exp once. Changed from
// flash1: the loops are swapped (Q outer, KV inner), so O/l/m never leave
// the tile buffers and Q is read once instead of once per key tile; the
// rescale by 1/l happens once at the end. Only the causal bound limits the
// visited tiles (causal_bounded_kv_tiles, FA2's n_block_max); other masks
// are applied element-wise. GQA is native: query head h reads KV head
// h / (H / Hkv), no copy. Expected bottleneck: math (the two tile products
// and the exp of every visited score); traffic is Q + O once and K/V once per
// query tile, i.e. (Nq/Br) reads of K/V per head.
// Measured (2 Zen 4 cores, B=1 H=8 N=2048 d=64, 64x64 tiles, machine shared
// with builds): 0.45-0.55x the time of NumPy's unfused softmax(QK^T/sqrt d)V
// timed in the same run (scripts/cpu_vs_numpy.py). Profile: the two tile
// products ~55%, exp ~14%, K/V tile copies ~13%.
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/cpu/flash2_loop.hpp"

namespace attnbench::cpu {

void flash2_forward(const problem& p, const float* q, const float* k, const float* v, float* o,
                    float* lse, byte_counter& bytes, kv_tile_visit visit) {
  const std::int64_t d = p.d, Br = p.Br, Bc = p.Bc;
  const float scale_qk = 1.0f / std::sqrt(static_cast<float>(d));
  const float neg_inf = -std::numeric_limits<float>::infinity();
  const std::int64_t tasks = num_q_tiles(p) * p.B * p.H;
  blas_single_thread blas;
#pragma omp parallel if (worth_threads(p))
  {
    // Tile buffers ("on chip"): Q, accumulator, K, V, scores, m, l.
    std::vector<float> buf(2 * Br * d + 2 * Bc * d + Br * Bc + 2 * Br);
    float* qs = buf.data();
    float* acc = qs + Br * d;
    float* ks = acc + Br * d;
    float* vs = ks + Bc * d;
    float* s = vs + Bc * d;
    float* m = s + Br * Bc;
    float* l = m + Br;
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t t = 0; t < tasks; ++t) {
      const auto [qt, b, h] = qbh_task_of(p, t);
      const std::int64_t rows = q_tile_rows(p, qt), r0 = qt * Br, hkv = p.kv_head(h);
      load(qs, q + q_offset(p, b, h, r0), rows * d, bytes);
      std::fill(m, m + rows, neg_inf);
      std::fill(l, l + rows, 0.0f);
      std::fill(acc, acc + rows * d, 0.0f);
      const tile_spans spans = visit(p, qt);
      for (const span64 sp : {spans.first, spans.second}) {
        for (std::int64_t kt = sp.lo; kt < sp.hi; ++kt) {
          const std::int64_t cols = kv_tile_cols(p, kt), c0 = kt * Bc;
          load(ks, k + kv_offset(p, b, hkv, c0), cols * d, bytes);
          load(vs, v + kv_offset(p, b, hkv, c0), cols * d, bytes);
          gemm_nt(rows, cols, d, scale_qk, qs, d, ks, d, 0.0f, s, Bc);
          for (std::int64_t r = 0; r < rows; ++r) {
            float* sr = s + r * Bc;
            mask_row(p, r0 + r, c0, sr, cols, neg_inf);
            const float m_new = std::max(m[r], row_max(sr, cols));
            if (m_new == neg_inf) {  // nothing visible to this row yet
              std::fill(sr, sr + cols, 0.0f);
              continue;
            }
            const float alpha = m[r] == neg_inf ? 0.0f : std::exp(m[r] - m_new);
            const float row_sum = exp_sub_sum(sr, cols, m_new);
            l[r] = l[r] * alpha + row_sum;
            if (alpha != 1.0f) scale(acc + r * d, d, alpha);
            m[r] = m_new;
          }
          gemm_nn(rows, d, cols, 1.0f, s, Bc, vs, d, 1.0f, acc, d);
        }
      }
      for (std::int64_t r = 0; r < rows; ++r) {
        if (l[r] > 0) {  // m finite
          scale(acc + r * d, d, 1.0f / l[r]);
          l[r] = m[r] + std::log(l[r]);
        } else {  // no visible key: zeros, lse -inf
          std::fill(acc + r * d, acc + (r + 1) * d, 0.0f);
          l[r] = neg_inf;
        }
      }
      store(o + q_offset(p, b, h, r0), acc, rows * d, bytes);
      store(lse + (b * p.H + h) * p.Nq + r0, l, rows, bytes);
    }
  }
}

namespace {

tile_spans causal_bounded(const problem& p, std::int64_t qt) {
  const std::int64_t nt = num_kv_tiles(p);
  return {causal_bounded_kv_tiles(p, qt), {nt, nt}};
}

class flash2_runner final : public cpu_runner {
 public:
  flash2_runner(const problem& p, bool writes_lse) : cpu_runner(p, writes_lse) {}
  void run() override {
    bytes_.reset();
    flash2_forward(p_, q_.data(), k_.data(), v_.data(), o_.data(), lse_.data(), bytes_,
                   causal_bounded);
  }
};

}  // namespace

std::unique_ptr<runner> make_flash2_runner(const problem& p, bool writes_lse) {
  return std::make_unique<flash2_runner>(p, writes_lse);
}

}  // namespace attnbench::cpu

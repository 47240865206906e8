// flash1 (CPU): FlashAttention-1, Algorithm 1 of Dao et al. 2022. Idea: never
// materialise S or P; tile the keys and keep per-row softmax statistics
// (running max m, running sum l) so each (query tile, key tile) block updates
// the output in place. Loop order as in the paper: key tiles outside, query
// tiles inside. O, l and m live in global memory (O = 0, l = 0, m = -inf
// first); every visited block reads Q_i, O_i, l_i, m_i, K_j, V_j, computes
// S = Q_i K_j^T / sqrt(d), m~ = rowmax, P~ = exp(S - m~), l~ = rowsum, and
// writes back m_new = max(m, m~), l_new = e^(m - m_new) l + e^(m~ - m_new) l~,
// O_i = (l e^(m - m_new) O_i + e^(m~ - m_new) P~ V_j) / l_new. Changed from
// naive: fused, O(N) memory. Work inside one key tile runs in parallel over
// (query tile, batch, head); key tiles run one after another.
// Blocks visited: those of causal_bounded_kv_tiles(p, qt), the same blocks
// as flash2 (FA's causal skip: with a causal mask a block is skipped when
// every key of it lies after the last row's i'; other masks are masked
// element-wise). A row that saw no visible key keeps O = 0, l = 0, m = -inf.
// O is stored in the output dtype between blocks, as in the paper.
// Expected bottleneck: memory at small d: Q, O, l, m cross global memory
// once per visited block (traffic grows with Nkv / Bc), unlike flash2.
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/cpu/cpu_common.hpp"

namespace attnbench::cpu {

namespace {

class flash1_runner final : public cpu_runner {
 public:
  flash1_runner(const problem& p, bool writes_lse) : cpu_runner(p, writes_lse), l_(p.rows()), m_(p.rows()) {}

  void run() override {
    const problem& p = p_;
    const std::int64_t d = p.d, Br = p.Br, Bc = p.Bc;
    const float scale_qk = 1.0f / std::sqrt(static_cast<float>(d));
    const float neg_inf = -std::numeric_limits<float>::infinity();
    const std::int64_t nq = num_q_tiles(p), tasks = nq * p.B * p.H;
    bytes_.reset();
    blas_single_thread blas;
#pragma omp parallel if (worth_threads(p))
    {
      std::vector<float> buf(2 * Br * d + 2 * Bc * d + Br * Bc + 2 * Br);
      float* qs = buf.data();
      float* os = qs + Br * d;
      float* ks = os + Br * d;
      float* vs = ks + Bc * d;
      float* s = vs + Bc * d;
      float* ls = s + Br * Bc;
      float* ms = ls + Br;
      // O = 0, l = 0, m = -inf in global memory.
#pragma omp for schedule(static)
      for (std::int64_t t = 0; t < tasks; ++t) {
        const auto [qt, b, h] = qbh_task_of(p, t);
        const std::int64_t rows = q_tile_rows(p, qt), r0 = qt * Br;
        const std::int64_t row = (b * p.H + h) * p.Nq + r0;
        fill_store(o_.data() + q_offset(p, b, h, r0), 0.0f, rows * d, bytes_);
        fill_store(l_.data() + row, 0.0f, rows, bytes_);
        fill_store(m_.data() + row, neg_inf, rows, bytes_);
      }
      for (std::int64_t kt = 0; kt < num_kv_tiles(p); ++kt) {
        const std::int64_t cols = kv_tile_cols(p, kt), c0 = kt * Bc;
#pragma omp for schedule(dynamic, 1)
        for (std::int64_t t = 0; t < tasks; ++t) {
          const auto [qt, b, h] = qbh_task_of(p, t);
          if (!causal_bounded_kv_tiles(p, qt).contains(kt)) continue;
          const std::int64_t rows = q_tile_rows(p, qt), r0 = qt * Br, hkv = p.kv_head(h);
          const std::int64_t row = (b * p.H + h) * p.Nq + r0;
          load(ks, k_.data() + kv_offset(p, b, hkv, c0), cols * d, bytes_);
          load(vs, v_.data() + kv_offset(p, b, hkv, c0), cols * d, bytes_);
          load(qs, q_.data() + q_offset(p, b, h, r0), rows * d, bytes_);
          load(os, o_.data() + q_offset(p, b, h, r0), rows * d, bytes_);
          load(ls, l_.data() + row, rows, bytes_);
          load(ms, m_.data() + row, rows, bytes_);
          gemm_nt(rows, cols, d, scale_qk, qs, d, ks, d, 0.0f, s, Bc);
          for (std::int64_t r = 0; r < rows; ++r) {
            float* sr = s + r * Bc;
            mask_row(p, r0 + r, c0, sr, cols, neg_inf);
            const float m_blk = row_max(sr, cols);
            if (m_blk == neg_inf) {  // nothing visible in this block: O, l, m unchanged
              std::fill(sr, sr + cols, 0.0f);
              continue;
            }
            const float l_blk = exp_sub_sum(sr, cols, m_blk);
            const float m_new = std::max(ms[r], m_blk);
            const float a_old = ms[r] == neg_inf ? 0.0f : std::exp(ms[r] - m_new);
            const float a_blk = std::exp(m_blk - m_new);
            const float l_new = a_old * ls[r] + a_blk * l_blk;
            // O_i = (l a_old O_i + a_blk P~ V_j) / l_new: fold the factors into
            // O_i and P~ so one product finishes the update.
            scale(os + r * d, d, ls[r] * a_old / l_new);
            scale(sr, cols, a_blk / l_new);
            ls[r] = l_new;
            ms[r] = m_new;
          }
          gemm_nn(rows, d, cols, 1.0f, s, Bc, vs, d, 1.0f, os, d);
          store(o_.data() + q_offset(p, b, h, r0), os, rows * d, bytes_);
          store(l_.data() + row, ls, rows, bytes_);
          store(m_.data() + row, ms, rows, bytes_);
        }
      }
    }
  }

 private:
  std::vector<float> l_, m_;  // [B, H, Nq] running sum and max, fp32
};

}  // namespace

std::unique_ptr<runner> make_flash1_runner(const problem& p, bool writes_lse) {
  return std::make_unique<flash1_runner>(p, writes_lse);
}

}  // namespace attnbench::cpu

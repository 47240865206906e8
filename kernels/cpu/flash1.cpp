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
// CPU specifics (docs/cpu.md), as flash2: Q loaded transposed so S^T = K Q^T
// needs no NT product, K/V read in place, softmax statistics vectorised
// across query rows (block_softmax_columns), and the update of O_i folded
// into the P V product's epilogue (per-row scales of O_i and of P~ V_j).
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/cpu/cpu_common.hpp"
#include "kernels/cpu/tile_gemm.hpp"
#include "kernels/cpu/tile_softmax.hpp"

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
    reset_counters();
    blas_single_thread blas;
#pragma omp parallel if (worth_threads(p))
    {
      // Q^T (d x Br), O (Br x d), S^T (Bc x Br), l, m, block max and sum, the two row scales.
      std::vector<float> buf(2 * Br * d + Bc * Br + 6 * Br);
      float* qs = buf.data();
      float* os = qs + d * Br;
      float* st = os + Br * d;
      float* ls = st + Bc * Br;
      float* ms = ls + Br;
      float* m_blk = ms + Br;
      float* l_blk = m_blk + Br;
      float* o_scale = l_blk + Br;
      float* pv_scale = o_scale + Br;
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
          const float* ks = read_tile(k_.data() + kv_offset(p, b, hkv, c0), cols * d, bytes_);
          const float* vs = read_tile(v_.data() + kv_offset(p, b, hkv, c0), cols * d, bytes_);
          load_transposed(qs, Br, q_.data() + q_offset(p, b, h, r0), rows, d, bytes_);
          load(os, o_.data() + q_offset(p, b, h, r0), rows * d, bytes_);
          load(ls, l_.data() + row, rows, bytes_);
          load(ms, m_.data() + row, rows, bytes_);
          tile_gemm(cols, rows, d, scale_qk, {ks, d, 1}, qs, Br, st, Br, {});  // S^T = K Q^T
          if (!tile_fully_visible(p, {r0, r0 + rows}, c0, c0 + cols))
            for (std::int64_t r = 0; r < rows; ++r) mask_strided(p, h, r0 + r, c0, st + r, Br, cols, neg_inf);
          std::int64_t n_exp = block_softmax_columns(st, cols, Br, rows, m_blk, l_blk);
          for (std::int64_t r = 0; r < rows; ++r) {
            if (m_blk[r] == neg_inf) {  // nothing visible in this block: O, l, m unchanged
              o_scale[r] = 1.0f;
              pv_scale[r] = 0.0f;
              continue;
            }
            const float m_new = std::max(ms[r], m_blk[r]);
            const float a_old = ms[r] == neg_inf ? 0.0f : (++n_exp, std::exp(ms[r] - m_new));
            const float a_blk = (++n_exp, std::exp(m_blk[r] - m_new));
            const float l_new = a_old * ls[r] + a_blk * l_blk[r];
            // O_i = (l a_old O_i + a_blk P~ V_j) / l_new: both factors go to
            // the product's epilogue so one pass finishes the update.
            o_scale[r] = ls[r] * a_old / l_new;
            pv_scale[r] = a_blk / l_new;
            ls[r] = l_new;
            ms[r] = m_new;
          }
          exps_.add(n_exp);
          tile_gemm(rows, d, cols, 1.0f, {st, 1, Br}, vs, d, os, d,
                    {.accumulate = true, .c_row_scale = o_scale, .ab_row_scale = pv_scale});
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

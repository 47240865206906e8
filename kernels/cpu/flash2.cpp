// flash2 (CPU): FlashAttention-2's forward loop. Idea: one task per
// (query tile, batch, head) loads its Q tile once, walks the key tiles with
// an online softmax (running max m, running sum l, unnormalised accumulator
// in the tile buffers) and writes O and the log-sum-exp once. Changed from
// flash1: the loops are swapped (Q outer, KV inner), so O/l/m never leave
// the tile buffers and Q is read once instead of once per key tile; the
// rescale by 1/l happens once at the end. Only the causal bound limits the
// visited tiles (causal_bounded_kv_tiles, FA2's n_block_max, as a key-tile
// list); other masks, the sparse terms included, are applied element-wise. GQA is native: query head h reads KV head
// h / (H / Hkv), no copy. Expected bottleneck: math (the two tile products
// and the exp of every visited score); traffic is Q + O once and K/V once per
// query tile, i.e. (Nq/Br) reads of K/V per head.
// CPU specifics (docs/cpu.md): the Q tile is loaded transposed, so the scores
// come out transposed, S^T = K Q^T, from a product whose operands are both
// contiguous (no NT product, no packing); K and V tiles are read where they
// lie (their rows are contiguous), not copied; the softmax step is one fused
// pass vectorised across query rows (tile_softmax.hpp) and the rescale of
// the accumulator rides on the P V product's epilogue (tile_gemm.hpp).
// Measured: docs/cpu.md (benchmarks/cpu_vs_torch.py, against PyTorch's CPU
// flash attention).
// Dtypes (docs/cpu.md, "bf16 and fp8"): the arrays hold floats already rounded to p.type (e4m3:
// code x per-tensor scale); bytes are counted at dtype_bytes for Q, K, V and
// output_bytes for O. O is rounded to output_dtype (bf16 for bf16 and e4m3).
// e4m3 models FA3's fp8 kernel (the flash3_fp8 row): S in fp32, P computed
// with the max offset 8 (P = 2^8 exp(s - m)) and rounded to e4m3 before P V,
// l summed from the unrounded fp32 P; the offset cancels in O = (P V) / l and
// is taken out of the lse (docs/cpu.md).
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/cpu/flash2_loop.hpp"
#include "kernels/cpu/tile_gemm.hpp"
#include "kernels/cpu/tile_softmax.hpp"

namespace attnbench::cpu {

void flash2_forward(const problem& p, const float* q, const float* k, const float* v, float* o, float* lse,
                    byte_counter& bytes, exp_counter& exps, const kv_tile_list& tiles) {
  const std::int64_t d = p.d, Br = p.Br, Bc = p.Bc;
  const float scale_qk = 1.0f / std::sqrt(static_cast<float>(d));
  const float neg_inf = -std::numeric_limits<float>::infinity();
  const std::int64_t tasks = num_q_tiles(p) * p.B * p.H;
  const std::int64_t e_in = dtype_bytes(p.type), e_out = output_bytes(p.type);
  const bool fp8 = p.type == dtype::e4m3, bf16_out = output_dtype(p.type) == dtype::bf16;
  blas_single_thread blas;
#pragma omp parallel if (worth_threads(p))
  {
    // Tile buffers ("on chip"): Q^T (d x Br), accumulator (Br x d), S^T (Bc x Br), m, l, alpha.
    std::vector<float> buf(2 * Br * d + Bc * Br + 3 * Br);
    float* qt_buf = buf.data();
    float* acc = qt_buf + d * Br;
    float* st = acc + Br * d;
    float* m = st + Bc * Br;
    float* l = m + Br;
    float* alpha = l + Br;
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t t = 0; t < tasks; ++t) {
      const auto [qt, b, h] = qbh_task_of(p, t);
      const std::int64_t rows = q_tile_rows(p, qt), r0 = qt * Br, hkv = p.kv_head(h);
      load_transposed(qt_buf, Br, q + q_offset(p, b, h, r0), rows, d, bytes, e_in);
      std::fill(m, m + rows, neg_inf);
      std::fill(l, l + rows, 0.0f);
      bool acc_written = false;
      const kv_tile_list_view walk = tiles.view();
      for (std::int32_t n = 0; n < walk.count(h, qt); ++n) {
        const std::int64_t kt = walk.at(h, qt, n);
        const std::int64_t cols = kv_tile_cols(p, kt), c0 = kt * Bc;
        const float* ks = read_tile(k + kv_offset(p, b, hkv, c0), cols * d, bytes, e_in);
        const float* vs = read_tile(v + kv_offset(p, b, hkv, c0), cols * d, bytes, e_in);
        // S^T = scale K Q^T
        tile_gemm(cols, rows, d, scale_qk, {ks, d, 1}, qt_buf, Br, st, Br, {});
        if (!tile_fully_visible(p, {r0, r0 + rows}, c0, c0 + cols))
          for (std::int64_t r = 0; r < rows; ++r) mask_strided(p, h, r0 + r, c0, st + r, Br, cols, neg_inf);
        exps.add(online_softmax_columns(st, cols, Br, rows, m, l, alpha));
        // l took the unrounded P; P V takes e4m3(2^8 P), so acc carries the 2^8.
        if (fp8 && rows == Br)
          offset_round_e4m3(st, cols * Br);  // a full tile: one contiguous pass
        else if (fp8)
          for (std::int64_t j = 0; j < cols; ++j) offset_round_e4m3(st + j * Br, rows);
        // acc = diag(alpha) acc + P V, P = (S^T)^T
        tile_gemm(rows, d, cols, 1.0f, {st, 1, Br}, vs, d, acc, d, {.accumulate = acc_written, .c_row_scale = alpha});
        acc_written = true;
      }
      for (std::int64_t r = 0; r < rows; ++r) {
        if (acc_written && l[r] > 0) {  // m finite
          // fp8: FA3's row sum is that of the offset P, 2^8 l exactly (a power of two).
          const float l_sum = fp8 ? fp8_p_offset * l[r] : l[r];
          scale(acc + r * d, d, 1.0f / l_sum);
          l[r] = m[r] + std::log(l_sum) - (fp8 ? fp8_ln_offset : 0.0f);
        } else {  // no visible key: zeros, lse -inf
          std::fill(acc + r * d, acc + (r + 1) * d, 0.0f);
          l[r] = neg_inf;
        }
      }
      if (bf16_out) round_bf16(acc, rows * d);
      store(o + q_offset(p, b, h, r0), acc, rows * d, bytes, e_out);
      store(lse + (b * p.H + h) * p.Nq + r0, l, rows, bytes);
    }
  }
}

namespace {

class flash2_loop_runner final : public cpu_runner {
 public:
  flash2_loop_runner(const problem& p, bool writes_lse, tile_walk walk)
      : cpu_runner(p, writes_lse), tiles_(make_kv_tile_list(p, walk)) {}
  void run() override {
    reset_counters();
    flash2_forward(p_, q_.data(), k_.data(), v_.data(), o_.data(), lse_.data(), bytes_, exps_, tiles_);
  }

 private:
  kv_tile_list tiles_;
};

}  // namespace

std::unique_ptr<runner> make_flash2_loop_runner(const problem& p, bool writes_lse, tile_walk walk) {
  return std::make_unique<flash2_loop_runner>(p, writes_lse, walk);
}

std::unique_ptr<runner> make_flash2_runner(const problem& p, bool writes_lse) {
  return make_flash2_loop_runner(p, writes_lse, tile_walk::causal_bound);
}

}  // namespace attnbench::cpu

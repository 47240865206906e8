// FlashAttention-1: O, l, m through memory between key blocks (docs/models.md).
// Sums run in 64-bit integers and are converted to double once, so they stay exact.
#include "kernels/models/models.hpp"

#include <algorithm>

#include "kernels/models/model_terms.hpp"

namespace attnbench {

using namespace model_terms;

double model_flops_executed_flash1(const problem& p) { return model_flops_executed_flash2(p); }

namespace {

// Per row of one head: the merge factors of Algorithm 1 (one exp in the first block
// holding a visible key of the row, m being -inf before it; two in every later one)
// plus `keys(row, tiles)`, summed. The blocks holding a visible key of row i are the key
// tiles its visible keys lie in (interval masks: the global prefix's and the window's,
// kv_tiles_for_queries(i, i + 1, visible)); they lie within the causal bound flash1 walks.
template <class Keys>
std::int64_t flash1_row_exps_per_head(const problem& p, Keys keys) {
  std::int64_t n = 0;
  for (std::int64_t i = 0; i < p.Nq; ++i) {
    const tile_spans t = kv_tiles_for_queries(p, i, i + 1, tile_walk::visible);
    const std::int64_t blocks = t.count();
    n += 2 * blocks - (blocks > 0 ? 1 : 0) + keys(i, t);
  }
  return n;
}

}  // namespace

double model_exps_flash1(const problem& p) {
  // Every score of a visited block (block_softmax_columns exponentiates the whole tile).
  std::int64_t scores = 0;
  for (std::int64_t qt = 0; qt < num_q_tiles(p); ++qt)
    scores += q_tile_rows(p, qt) * keys_in_tiles(p, causal_bounded_kv_tiles(p, qt));
  const std::int64_t rows = flash1_row_exps_per_head(p, [](std::int64_t, const tile_spans&) { return 0; });
  return static_cast<double>(p.B * p.H * (scores + rows));
}

double model_exps_flash1_cuda(const problem& p) {
  // flash1.cu: a warp per row exponentiates the block's scores only when the row has a
  // visible key in the block (its max is finite).
  const std::int64_t n = flash1_row_exps_per_head(
      p, [&](std::int64_t, const tile_spans& t) { return keys_in_tiles(p, t.first) + keys_in_tiles(p, t.second); });
  return static_cast<double>(p.B * p.H * n);
}

double model_bytes_flash1(const problem& p) {
  const std::int64_t e = es(p), o = eo(p);
  std::int64_t per_head = p.Nq * (p.d * o + 2 * f32);  // O = 0, l = 0, m = -inf
  for (std::int64_t qt = 0; qt < num_q_tiles(p); ++qt) {
    const span64 s = causal_bounded_kv_tiles(p, qt);
    // per visited block and row: Q read, O read and written, l and m read and written
    per_head += 2 * p.d * e * keys_in_tiles(p, s) + s.size() * q_tile_rows(p, qt) * (p.d * e + 2 * p.d * o + 4 * f32);
  }
  return static_cast<double>(p.B * p.H * per_head);
}

double model_bytes_flash1_cuda(const problem& p) {
  const std::int64_t e = es(p);
  const std::int64_t state_row = f32 * (p.d + 2);  // O_i (fp32), l_i, m_i per row
  std::int64_t per_head = 0;
  for (std::int64_t qt = 0; qt < num_q_tiles(p); ++qt) {
    const std::int64_t r = std::min(p.Br, p.Nq - qt * p.Br);
    const span64 s = causal_bounded_kv_tiles(p, qt);
    const std::int64_t keys = s.empty() ? 0 : std::min(s.hi * p.Bc, p.Nkv) - s.lo * p.Bc;
    // Q_i once (a tile that visits no key tile returns before reading it), K_j and V_j
    per_head += (s.empty() ? 0 : r * p.d * e) + 2 * keys * p.d * e;
    if (s.size() > 1) per_head += 2 * (s.size() - 1) * r * state_row;  // state written + read back
    per_head += r * p.d * eo(p) + f32 * r;                             // O and lse written by the last block
  }
  return static_cast<double>(p.B * p.H * per_head);
}

std::int64_t memory_bytes_flash1_cuda(const problem& p) {
  return io_bytes(p) + f32 * p.rows() + f32 * p.rows() * (p.d + 2);
}

std::int64_t flash1_smem_bytes(const problem& p) {
  // Tile rows padded by 4 bytes so row strides are an odd number of words.
  return (p.Br + 2 * p.Bc) * (p.d * es(p) + 4) + p.Br * p.Bc * f32 + 2 * p.Br * f32;
}

}  // namespace attnbench

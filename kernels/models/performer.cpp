// Performer FAVOR+ (docs/models.md, docs/approximations.md): the keys' stabiliser pass,
// the state pass and the output pass of kernels/cpu/performer.cpp.
// Sums run in 64-bit integers and are converted to double once, so they stay exact.
#include <algorithm>

#include "kernels/models/model_terms.hpp"
#include "kernels/models/models.hpp"
#include "kernels/reference/approx_params.hpp"

namespace attnbench {

using namespace model_terms;

model_figures model_performer(const problem& p) {
  const bool causal = p.mask.kind == mask_kind::causal;
  const std::int64_t d = p.d, m = performer_features(p), nc = num_kv_tiles(p), c0 = linear_first_chunk(p);
  const std::int64_t state = (m * d + m) * f32, omega = d * m * f32, kv_heads = p.B * p.Hkv, heads = p.B * p.H;
  const double feature = 2.0 * d * m;      // one row's log-features, x omega~^T
  const double apply = 2.0 * m * (d + 1);  // one row's state update or read ([v, 1] against phi)
  std::int64_t rows = 0;                   // query rows that see a key
  for (std::int64_t i = 0; i < p.Nq; ++i) rows += visible_keys(p, i) > 0;
  const double useful = (feature + apply) * static_cast<double>(kv_heads * p.Nkv + heads * rows);
  // Per (batch, KV head): omega~ read, K read by the stabiliser pass (every key), K and V by
  // the state pass (every key; causal: chunks 0 .. nc-2).
  const std::int64_t state_keys = causal ? (nc - 1) * p.Bc : p.Nkv;
  std::int64_t bytes =
      kv_heads * (omega + p.Nkv * d * f32 + 2 * state_keys * d * f32 + (causal ? (nc - c0) * state + f32 : state));
  double executed = static_cast<double>(kv_heads) * (feature * double(p.Nkv + state_keys) + apply * double(state_keys));
  std::int64_t exps = kv_heads * state_keys * m;
  if (!causal) {
    bytes += heads * (num_q_tiles(p) * (state + omega) + 2 * p.Nq * d * f32);
    executed += static_cast<double>(heads * p.Nq) * (feature + apply);
    exps += heads * p.Nq * m;
    return {useful, executed, static_cast<double>(bytes), static_cast<double>(exps)};
  }
  // Causal output pass per (batch, head): rows with i' < 0 written as zeros; per chunk c the
  // stabiliser, state and omega~ read, Q rows, K_c and V_c read, O rows written; phi of the
  // rows and keys, the state read per row, the rows x keys block (2 m a score, 2 (d + 1) applied).
  std::int64_t out = std::max<std::int64_t>(0, p.Nq - p.Nkv) * d * f32, mapped = 0, block = 0, chunk_rows = 0;
  for (std::int64_t c = c0; c < nc; ++c) {
    const std::int64_t r = linear_chunk_rows(p, c).size(), k = kv_tile_cols(p, c);
    out += f32 + state + omega + 2 * r * d * f32 + 2 * k * d * f32;
    mapped += r + k;
    chunk_rows += r;
    block += r * k;
  }
  bytes += heads * out;
  executed += static_cast<double>(heads) *
              (feature * double(mapped) + apply * double(chunk_rows) + (2.0 * m + 2.0 * (d + 1)) * double(block));
  exps += heads * mapped * m;
  return {useful, executed, static_cast<double>(bytes), static_cast<double>(exps)};
}

}  // namespace attnbench

namespace attnbench {

model_figures model_performer_cuda(const problem& p) {
  const bool causal = p.mask.kind == mask_kind::causal;
  const std::int64_t d = p.d, m = performer_features(p), nc = num_kv_tiles(p), c0 = linear_first_chunk(p);
  const std::int64_t state = (m * d + m) * f32, omega = d * m * f32, kv_heads = p.B * p.Hkv, heads = p.B * p.H;
  const std::int64_t kparts = ceil_div(p.Nkv, cuda_performer_rows), qparts = ceil_div(p.Nq, cuda_performer_rows);
  const std::int64_t state_keys = causal ? (nc - 1) * p.Bc : p.Nkv, blocks = m / cuda_performer_state_rows;
  const double feature = 2.0 * d * m, apply = 2.0 * m * (d + 1);
  // Feature pass (keys, then queries), stabiliser reduction, state pass.
  std::int64_t bytes =
      kv_heads * (kparts * (omega + f32) + p.Nkv * (d + m) * f32) + heads * (qparts * omega + p.Nq * (d + m) * f32) +
      kv_heads * (kparts + 1) * f32 +
      kv_heads * (state_keys * m * f32 + blocks * (state_keys * d * f32 + f32) + (causal ? nc - c0 : 1) * state);
  double executed = feature * double(kv_heads * p.Nkv + heads * p.Nq) + apply * double(kv_heads * state_keys);
  std::int64_t exps = (heads * p.Nq + kv_heads * state_keys) * m;
  if (!causal) {
    bytes += heads * (ceil_div(p.Nq, cuda_linear_rows) * state + p.Nq * (m + d) * f32);
    executed += apply * double(heads * p.Nq);
  } else {
    // Per 16 aligned positions: the state, s, phi(Q) rows read, u and V of the chunk's keys up
    // to the tile's last position read, O rows written; rows with i' < 0 as zeros.
    const std::int64_t t = cuda_linear_rows, shift = p.Nkv - p.Nq;
    std::int64_t out = std::max<std::int64_t>(0, p.Nq - p.Nkv) * d * f32, rows = 0, keys = 0, pairs = 0;
    for (std::int64_t lo = 0; lo < p.Nkv; lo += t) {
      const std::int64_t hi = std::min(lo + t, p.Nkv), r = hi - std::max(lo, shift), k = hi - lo / p.Bc * p.Bc;
      if (r <= 0) continue;
      out += state + f32 + r * (m + d) * f32 + k * (m + d) * f32;
      rows += r;
      keys += k;
      pairs += r * k;
    }
    bytes += heads * out;
    executed += double(heads) * (apply * double(rows) + (2.0 * m + 2.0 * (d + 1)) * double(pairs));
    exps += heads * keys * m;
  }
  return {model_performer(p).flops, executed, static_cast<double>(bytes), static_cast<double>(exps)};
}

}  // namespace attnbench

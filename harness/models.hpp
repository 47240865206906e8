// Analytical FLOP and byte models, one function per variant
// (docs/models.md derives each formula). Element size of Q, K, V and O
// follows p.type (dtype_bytes); the score/probability matrices S and P, the
// log-sum-exp, FlashAttention-1's l and m and linear attention's state are
// fp32 (4 bytes) on every backend. Every model is exact for ragged lengths:
// a partial tile counts its real rows and columns. The CPU kernels count the
// same bytes while they run (runner::counted_bytes); tests compare the two.
#pragma once

#include <algorithm>
#include <cstdint>

#include "harness/mask.hpp"
#include "harness/problem.hpp"

namespace attnbench {

// ---- tile geometry shared by kernels and models ------------------------------
// Real query rows of query tile qt and real keys of key tile kt (host and device).
ATTN_HD inline std::int64_t q_tile_rows(const problem& p, std::int64_t qt) {
  return std::min(p.Br, p.Nq - qt * p.Br);
}
ATTN_HD inline std::int64_t kv_tile_cols(const problem& p, std::int64_t kt) {
  return std::min(p.Bc, p.Nkv - kt * p.Bc);
}
// Real keys covered by the key tiles [s.lo, s.hi).
ATTN_HD inline std::int64_t keys_in_tiles(const problem& p, span64 s) {
  if (s.empty()) return 0;
  return std::min(s.hi * p.Bc, p.Nkv) - s.lo * p.Bc;
}

// ---- FLOPs -------------------------------------------------------------------
// Useful FLOPs: 4 * d per visible (query, key) pair (QK^T and PV, one FMA = 2
// FLOPs), times B * H. exp, max, scaling and division are not counted.
double model_flops_softmax(const problem& p);
// Linear attention (phi = elu + 1) in its recurrent form, V augmented with a
// ones column for the normaliser: 2d(d+1) per key and KV head (state update)
// plus 2d(d+1) per query row that sees a key (state read). phi not counted.
double model_flops_linear(const problem& p);

// FLOPs the algorithms perform, masked work included (whole tiles).
double model_flops_executed_naive(const problem& p);   // every (query, key) pair
double model_flops_executed_flash1(const problem& p);  // blocks within the causal bound
double model_flops_executed_flash2(const problem& p);  // tiles in causal_bounded_kv_tiles
double model_flops_executed_sparse(const problem& p);  // tiles in visible_kv_tiles
double model_flops_executed_linear(const problem& p);  // chunked form when causal

// ---- bytes -------------------------------------------------------------------
// Minimum traffic: read Q, K, V once (Hkv heads of K/V), write O once.
double model_bytes_min(const problem& p);
// S = QK^T written, read by softmax, P written, read by PV; K and V re-read
// once per query tile.
double model_bytes_naive(const problem& p);
// Copy K and V to H heads (read + write per query head), then naive with Hkv = H.
double model_bytes_naive_gqa_expand(const problem& p);
// FlashAttention-1 Algorithm 1: O, l, m initialised; per visited block read
// K_j, V_j, Q_i, O_i, l_i, m_i and write O_i, l_i, m_i.
double model_bytes_flash1(const problem& p);
// Per query tile: Q read and O + lse written once, K/V tiles of
// causal_bounded_kv_tiles read once each.
double model_bytes_flash2(const problem& p);
// flash2 restricted to visible_kv_tiles.
double model_bytes_sparse(const problem& p);
// Non-causal: state pass (K, V read, per-KV-head state written) then output
// pass (state read per query tile). Causal: prefix states per key chunk
// (chunk = Bc), then per chunk: state, Q rows, K/V chunk read, O written.
double model_bytes_linear(const problem& p);

// Causal linear attention groups query rows by key chunk (chunk = Bc): rows
// [lo, hi) whose aligned position i' = i + Nkv - Nq falls in key chunk c
// (keys [c*Bc, (c+1)*Bc)). Rows with i' < 0 belong to no chunk (zeros).
span64 linear_chunk_rows(const problem& p, std::int64_t c);
// First key chunk that holds the aligned position of some query row.
std::int64_t linear_first_chunk(const problem& p);

}  // namespace attnbench

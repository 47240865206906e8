// Tile geometry: which key tiles a tile of query rows visits, and the real
// rows and keys of partial tiles. One definition, host and device, used by
// every CPU and CUDA kernel, the models and the tests.
//
// For a row, the visible keys are one window interval plus the global prefix
// [0, G); for a range of rows the union of their windows is again one
// interval (windows slide by one key per row), so the key tiles a range of
// rows must visit are the union of at most two tile intervals.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/mask.hpp"

namespace attnbench {

ATTN_HD inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
ATTN_HD inline std::int64_t num_q_tiles(const problem& p) { return ceil_div(p.Nq, p.Br); }
ATTN_HD inline std::int64_t num_kv_tiles(const problem& p) { return ceil_div(p.Nkv, p.Bc); }

// Real query rows of query tile qt and real keys of key tile kt.
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

// Key tiles [first.lo, first.hi) then [second.lo, second.hi), disjoint and
// ascending (first is the global-key prefix, second the window).
struct tile_spans {
  span64 first, second;
  ATTN_HD std::int64_t count() const { return first.size() + second.size(); }
};

// How a loop chooses its key tiles:
//   causal_bound  FA2's n_block_max: every tile up to the last one holding a
//                 key j <= i' of the range's last row (all tiles for other
//                 masks); the global-key tiles stay reachable;
//   visible       exactly the tiles holding a visible pair.
enum class tile_walk { causal_bound, visible };

// The one tile-visiting function: key tiles (of width p.Bc) that query rows
// [q0, q1) visit. Ranges need not be aligned to Br (packed GQA tiles).
ATTN_HD inline tile_spans kv_tiles_for_queries(const problem& p, std::int64_t q0, std::int64_t q1,
                                               tile_walk walk) {
  const std::int64_t nt = num_kv_tiles(p);
  const span64 none{nt, nt};
  const std::int64_t g_hi = std::min(nt, ceil_div(std::min(p.mask.global, p.Nkv), p.Bc));
  if (walk == tile_walk::causal_bound) {
    if (p.mask.kind != mask_kind::causal || q0 < p.mask.global) return {{0, nt}, none};
    const std::int64_t last_key = (q1 - 1) + p.Nkv - p.Nq;  // may be < 0
    const std::int64_t hi = std::clamp<std::int64_t>(ceil_div(last_key + 1, p.Bc), 0, nt);
    return {{0, std::max(hi, g_hi)}, none};
  }
  if (q0 < p.mask.global) return {{0, nt}, none};
  const span64 w = window_keys(p, q0, q1);
  const span64 win = w.empty() ? none : span64{w.lo / p.Bc, ceil_div(w.hi, p.Bc)};
  const span64 glob{0, g_hi};
  if (glob.empty()) return {win, none};
  if (win.empty()) return {glob, none};
  if (win.lo <= glob.hi) return {{0, std::max(glob.hi, win.hi)}, none};
  return {glob, win};
}

// The same for query tile qt (rows [qt Br, min(Nq, (qt + 1) Br))).
ATTN_HD inline tile_spans kv_tiles(const problem& p, std::int64_t qt, tile_walk walk) {
  return kv_tiles_for_queries(p, qt * p.Br, std::min(p.Nq, (qt + 1) * p.Br), walk);
}
ATTN_HD inline tile_spans visible_kv_tiles(const problem& p, std::int64_t qt) {
  return kv_tiles(p, qt, tile_walk::visible);
}
ATTN_HD inline span64 causal_bounded_kv_tiles(const problem& p, std::int64_t qt) {
  return kv_tiles(p, qt, tile_walk::causal_bound).first;
}

// Visibility as a tiled kernel evaluates it (same rules as is_visible, checked
// exhaustively in tests/cpu/test_mask.cpp): key j is visible to query i iff
// j < min(G, Nkv) or j is in row_window(p, i) (all keys for a global row i < G).
ATTN_HD inline span64 row_window(const problem& p, std::int64_t i) {
  return i < p.mask.global ? span64{0, p.Nkv} : window_keys(p, i, i + 1);
}

// True when every pair of queries [q.lo, q.hi) x keys [k0, k1) is visible, so
// a kernel skips the element-wise mask. A window [lo(i), hi(i)) has lo and hi
// non-decreasing in i, so the rows share [lo(q.hi - 1), hi(q.lo)); global rows
// and keys only add visibility.
ATTN_HD inline bool tile_fully_visible(const problem& p, span64 q, std::int64_t k0, std::int64_t k1) {
  if (p.mask.kind == mask_kind::none) return true;
  if (q.hi - 1 < p.mask.global || k1 <= p.mask.global) return true;
  const span64 first = window_keys(p, q.lo, q.lo + 1), last = window_keys(p, q.hi - 1, q.hi);
  return last.lo <= k0 && k1 <= first.hi;
}

}  // namespace attnbench

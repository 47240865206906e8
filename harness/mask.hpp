// Visibility of (query, key) pairs and of (query tile, key tile) blocks.
//
// One definition shared by the fp64 reference, every CPU and CUDA kernel, the
// FLOP/byte models and the tests. Rules (docs/masks.md):
//   i' = i + Nkv - Nq                        (queries aligned to the end of the keys)
//   none:       every key visible
//   causal:     j <= i'
//   local:L,R:  i' - L <= j <= i' + R
//   global:G:   additionally, keys j < G are visible to every query, and
//               queries i < G see every key.
// For a row, the visible keys are the union of one window interval and the
// global prefix [0, G); for a tile of rows the union of their windows is again
// one interval (windows slide by one key per row), so a tile's visible key
// tiles are the union of at most two tile intervals.
#pragma once

#include <algorithm>
#include <cstdint>

#include "harness/problem.hpp"

namespace attnbench {

// Half-open interval [lo, hi); empty when lo >= hi.
struct span64 {
  std::int64_t lo = 0, hi = 0;
  ATTN_HD bool empty() const { return lo >= hi; }
  ATTN_HD std::int64_t size() const { return empty() ? 0 : hi - lo; }
  ATTN_HD bool contains(std::int64_t x) const { return lo <= x && x < hi; }
};

// Window keys of query rows [r0, r1) (global ignored), clamped to [0, Nkv).
ATTN_HD inline span64 window_keys(const problem& p, std::int64_t r0, std::int64_t r1) {
  const std::int64_t shift = p.Nkv - p.Nq;
  std::int64_t lo = 0, hi = p.Nkv;
  switch (p.mask.kind) {
    case mask_kind::none: break;
    case mask_kind::causal: hi = (r1 - 1) + shift + 1; break;
    case mask_kind::local:
      lo = r0 + shift - p.mask.left;
      hi = (r1 - 1) + shift + p.mask.right + 1;
      break;
  }
  lo = std::max<std::int64_t>(lo, 0);
  hi = std::min<std::int64_t>(hi, p.Nkv);
  if (hi < lo) hi = lo;
  return {lo, hi};
}

ATTN_HD inline bool is_visible(const problem& p, std::int64_t i, std::int64_t j) {
  if (i < p.mask.global || j < p.mask.global) return true;
  return window_keys(p, i, i + 1).contains(j);
}

// Number of visible keys of query row i.
ATTN_HD inline std::int64_t visible_keys(const problem& p, std::int64_t i) {
  if (i < p.mask.global) return p.Nkv;
  const span64 w = window_keys(p, i, i + 1);
  const std::int64_t g = std::min(p.mask.global, p.Nkv);
  // |w ∪ [0, g)|
  const std::int64_t overlap = std::max<std::int64_t>(0, std::min(w.hi, g) - w.lo);
  return w.size() + g - (w.empty() ? 0 : overlap);
}

// Visible (query, key) pairs of one (batch, head): exact for every mask.
ATTN_HD inline std::int64_t visible_pairs_per_head(const problem& p) {
  std::int64_t n = 0;
  for (std::int64_t i = 0; i < p.Nq; ++i) n += visible_keys(p, i);
  return n;
}

ATTN_HD inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
ATTN_HD inline std::int64_t num_q_tiles(const problem& p) { return ceil_div(p.Nq, p.Br); }
ATTN_HD inline std::int64_t num_kv_tiles(const problem& p) { return ceil_div(p.Nkv, p.Bc); }

// Key tiles that query tile `qt` must visit because some pair in them is
// visible: tiles [first.lo, first.hi) then [second.lo, second.hi), disjoint
// and ascending (first is the global-key prefix, second the window).
struct tile_spans {
  span64 first, second;
  ATTN_HD std::int64_t count() const { return first.size() + second.size(); }
};

ATTN_HD inline tile_spans visible_kv_tiles(const problem& p, std::int64_t qt) {
  const std::int64_t r0 = qt * p.Br, r1 = std::min(p.Nq, r0 + p.Br);
  const std::int64_t nt = num_kv_tiles(p);
  if (r0 < p.mask.global) return {{0, nt}, {nt, nt}};
  const span64 w = window_keys(p, r0, r1);
  span64 win = w.empty() ? span64{nt, nt} : span64{w.lo / p.Bc, ceil_div(w.hi, p.Bc)};
  span64 glob{0, std::min(nt, ceil_div(std::min(p.mask.global, p.Nkv), p.Bc))};
  if (glob.empty()) return {win, {nt, nt}};
  if (win.empty()) return {glob, {nt, nt}};
  if (win.lo <= glob.hi) return {{0, std::max(glob.hi, win.hi)}, {nt, nt}};
  return {glob, win};
}

// Key tiles visited by a FlashAttention-2-style loop that only honours the
// causal bound (FA2's n_block_max): all tiles up to the last one holding a
// key j <= i' of the tile's last row; every tile for other masks.
ATTN_HD inline span64 causal_bounded_kv_tiles(const problem& p, std::int64_t qt) {
  const std::int64_t nt = num_kv_tiles(p);
  if (p.mask.kind != mask_kind::causal || qt * p.Br < p.mask.global) return {0, nt};
  const std::int64_t r1 = std::min(p.Nq, (qt + 1) * p.Br);
  const std::int64_t last_key = (r1 - 1) + p.Nkv - p.Nq;  // may be < 0
  const std::int64_t hi = std::clamp<std::int64_t>(ceil_div(last_key + 1, p.Bc), 0, nt);
  // Global keys stay reachable even when the window is empty.
  const std::int64_t g_hi = std::min(nt, ceil_div(std::min(p.mask.global, p.Nkv), p.Bc));
  return {0, std::max(hi, g_hi)};
}

}  // namespace attnbench

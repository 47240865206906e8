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
// global prefix [0, G). Which key tiles a tile of rows visits: core/tiles.hpp.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/problem.hpp"

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

}  // namespace attnbench

// Tile geometry: which key tiles a tile of query rows visits, and the real
// rows and keys of partial tiles. One definition, host and device, used by
// every CPU and CUDA kernel, the models and the tests.
//
// For a row, the visible keys are one window interval plus the global prefix
// [0, G); for a range of rows the union of their windows is again one
// interval (windows slide by one key per row), so the key tiles a range of
// rows must visit are the union of at most two tile intervals. Masks with
// sparse terms (strided, random, layout) are not intervals: their exact walk
// is a list of key tiles per query tile (kv_tile_list, FlexAttention's
// kv_num_blocks / kv_indices), built from kv_tile_visible; for them the
// interval walkers return a covering (all tiles up to the causal bound).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/mask.hpp"

namespace attnbench {

ATTN_HD inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
ATTN_HD inline std::int64_t num_q_tiles(const problem& p) { return ceil_div(p.Nq, p.Br); }
ATTN_HD inline std::int64_t num_kv_tiles(const problem& p) { return ceil_div(p.Nkv, p.Bc); }

// Real query rows of query tile qt and real keys of key tile kt.
ATTN_HD inline std::int64_t q_tile_rows(const problem& p, std::int64_t qt) { return std::min(p.Br, p.Nq - qt * p.Br); }
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
ATTN_HD inline tile_spans kv_tiles_for_queries(const problem& p, std::int64_t q0, std::int64_t q1, tile_walk walk) {
  const std::int64_t nt = num_kv_tiles(p);
  const span64 none{nt, nt};
  const std::int64_t g_hi = std::min(nt, ceil_div(std::min(p.mask.global, p.Nkv), p.Bc));
  if (walk == tile_walk::causal_bound || p.mask.has_sparse()) {
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
// With sparse terms it is conservative (only the global and window terms are
// looked at): false sends a block to the element-wise mask, never wrong.
ATTN_HD inline bool tile_fully_visible(const problem& p, span64 q, std::int64_t k0, std::int64_t k1) {
  if (p.mask.kind == mask_kind::none && !p.mask.has_sparse()) return true;
  if (q.hi - 1 < p.mask.global || k1 <= p.mask.global) return true;
#if !defined(__CUDA_ARCH__)
  // A rectangle inside one visible random/layout block (below the diagonal
  // under causal) is fully visible: without this the CPU masked every key of
  // a random:64,1 tile element-wise (7.9 ms vs 14.3 ms dense at Nq = Nkv = 1024,
  // 1/16 of the pairs). Host only: on the device it would cost flash2 registers.
  if (p.mask.has_random() || p.mask.has_layout()) {
    const std::int64_t b = block_term_size(p), qb = q.lo / b, kb = k0 / b;
    if ((q.hi - 1) / b == qb && (k1 - 1) / b == kb && (!sparse_clipped(p) || k1 - 1 <= q.lo + p.Nkv - p.Nq) &&
        !p.mask.per_head() && block_term_visible(p, 0, qb, kb))
      return true;
  }
#endif
  if (p.mask.kind != mask_kind::local) return false;  // sparse terms with base none/causal
  const span64 first = window_keys(p, q.lo, q.lo + 1), last = window_keys(p, q.hi - 1, q.hi);
  return last.lo <= k0 && k1 <= first.hi;
}

// True when some pair of query rows [q0, q1) (query head h) x keys [k0, k1)
// is visible: exact for every mask (tests/cpu/test_tiles.cpp against
// is_visible). Each term's pairs over a rectangle reduce to one interval test,
// the stride to a multiple of S in an interval of differences i' - j, and the
// block terms to the (query block, key block) pairs the rectangle meets.
ATTN_HD inline bool kv_tile_visible(const problem& p, std::int64_t h, std::int64_t q0, std::int64_t q1, std::int64_t k0,
                                    std::int64_t k1) {
  k1 = std::min(k1, p.Nkv);
  q1 = std::min(q1, p.Nq);
  if (q0 >= q1 || k0 >= k1) return false;
  const mask_spec& m = p.mask;
  if (q0 < m.global || k0 < m.global) return true;
  const span64 w = window_keys(p, q0, q1);
  if (!w.empty() && w.lo < k1 && k0 < w.hi) return true;
  if (!m.has_sparse()) return false;
  const std::int64_t shift = p.Nkv - p.Nq;
  if (m.has_strided()) {
    const std::int64_t lo = std::max<std::int64_t>(0, q0 + shift - (k1 - 1)), hi = (q1 - 1) + shift - k0;
    if (lo <= hi && (lo <= m.sparse->stride_band || ceil_div(lo, m.sparse->stride) * m.sparse->stride <= hi))
      return true;
  }
  if (m.has_random() || m.has_layout()) {
    const std::int64_t b = block_term_size(p);
    for (std::int64_t qb = q0 / b; qb <= (q1 - 1) / b; ++qb) {
      const std::int64_t last_row = std::min(q1, (qb + 1) * b) - 1;
      for (std::int64_t kb = k0 / b; kb <= (k1 - 1) / b; ++kb) {
        if (sparse_clipped(p) && std::max(k0, kb * b) > last_row + shift) break;  // later kb only later keys
        if (block_term_visible(p, h, qb, kb)) return true;
      }
    }
  }
  return false;
}

// A tile walk as lists: per (head, outer tile) the ascending inner tiles to visit. heads is 1
// unless the mask has a per-head layout. On a device a kernel reads the same arrays through
// the view. Two kinds (distinct types on the host, one view):
//   kv_tile_list  outer: query tiles, inner: key tiles (the forward's walk; FlexAttention's
//                 kv_num_blocks and kv_indices)
//   q_tile_list   outer: key tiles, inner: query tiles (the backward's walk, KV outer: a
//                 kv_tile_list transposed)
struct tile_list_view {
  const std::int32_t* num = nullptr;      // [heads, outer]
  const std::int32_t* indices = nullptr;  // [heads, outer, inner]
  std::int64_t heads = 1, outer = 0, inner = 0;
  ATTN_HD std::int64_t slot(std::int64_t h, std::int64_t o) const { return (heads > 1 ? h : 0) * outer + o; }
  ATTN_HD std::int32_t count(std::int64_t h, std::int64_t o) const { return num[slot(h, o)]; }
  ATTN_HD std::int32_t at(std::int64_t h, std::int64_t o, std::int64_t n) const {
    return indices[slot(h, o) * inner + n];
  }
};
using kv_tile_list_view = tile_list_view;
using q_tile_list_view = tile_list_view;

struct tile_list {
  std::int64_t heads = 1, outer = 0, inner = 0;
  std::vector<std::int32_t> num, indices;
  tile_list_view view() const { return {num.data(), indices.data(), heads, outer, inner}; }
  std::int64_t total() const {
    std::int64_t n = 0;
    for (auto c : num) n += c;
    return n;
  }
  void resize(std::int64_t h, std::int64_t o, std::int64_t i) {
    heads = h;
    outer = o;
    inner = i;
    num.assign(h * o, 0);
    indices.assign(h * o * i, 0);
  }
};
// Device bytes of a tile_list of these dimensions (counts and indices, int32), for admission
// before the list is built.
inline std::int64_t tile_list_bytes(std::int64_t heads, std::int64_t outer, std::int64_t inner) {
  return static_cast<std::int64_t>(sizeof(std::int32_t)) * heads * outer * (1 + inner);
}
struct kv_tile_list : tile_list {};  // outer: query tiles, inner: key tiles
struct q_tile_list : tile_list {};   // outer: key tiles, inner: query tiles

// Query tiles of p.Br rows, key tiles of p.Bc keys; `visible` lists exactly
// the tiles with a visible pair, `causal_bound` the interval walk's tiles.
inline kv_tile_list make_kv_tile_list(const problem& p, tile_walk walk) {
  kv_tile_list l;
  l.resize(p.mask.per_head() ? p.H : 1, num_q_tiles(p), num_kv_tiles(p));
  for (std::int64_t h = 0; h < l.heads; ++h)
    for (std::int64_t qt = 0; qt < l.outer; ++qt) {
      const std::int64_t q0 = qt * p.Br, q1 = std::min(p.Nq, q0 + p.Br), slot = h * l.outer + qt;
      std::int32_t n = 0;
      const tile_spans cover = kv_tiles_for_queries(p, q0, q1, walk);
      for (std::int64_t kt = 0; kt < l.inner; ++kt) {
        const bool take = walk == tile_walk::visible ? kv_tile_visible(p, h, q0, q1, kt * p.Bc, (kt + 1) * p.Bc)
                                                     : cover.first.contains(kt) || cover.second.contains(kt);
        if (take) l.indices[slot * l.inner + n++] = static_cast<std::int32_t>(kt);
      }
      l.num[slot] = n;
    }
  return l;
}

// The backward's walk: per (head, key tile) the query tiles whose list holds the key tile.
inline q_tile_list transpose_tile_list(const kv_tile_list& l) {
  q_tile_list t;
  t.resize(l.heads, l.inner, l.outer);
  const tile_list_view v = l.view();
  for (std::int64_t h = 0; h < l.heads; ++h)
    for (std::int64_t qt = 0; qt < l.outer; ++qt)  // ascending qt: each key tile's list ascends
      for (std::int32_t n = 0; n < v.count(h, qt); ++n) {
        const std::int64_t slot = h * t.outer + v.at(h, qt, n);
        t.indices[slot * t.inner + t.num[slot]++] = static_cast<std::int32_t>(qt);
      }
  return t;
}

}  // namespace attnbench

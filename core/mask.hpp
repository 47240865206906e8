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
// Sparse terms (strided:L,S, random:b,r[,seed], layout:b:PATH) are united with
// the window and the global terms; with base causal they are intersected with
// j <= i' (and the base adds no window); with no base, only they and global
// tokens are visible:
//   visible = global  OR  window  OR  (strided OR random OR layout) AND clip.
// For a row without sparse terms, the visible keys are the union of one window
// interval and the global prefix [0, G). Which key tiles a tile of rows visits:
// core/tiles.hpp. Random and layout blocks are per query block i / b and key
// block j / b (the layout's own grid); a per-head layout takes the query head h
// (the functions without h use head 0: rows that pass no head refuse per-head
// layouts through the mask feature `layout_heads`).
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

// Window keys of query rows [r0, r1) (global and sparse terms ignored),
// clamped to [0, Nkv). With sparse terms and base none or causal the window
// term is empty.
ATTN_HD inline span64 window_keys(const problem& p, std::int64_t r0, std::int64_t r1) {
  const std::int64_t shift = p.Nkv - p.Nq;
  std::int64_t lo = 0, hi = p.Nkv;
  switch (p.mask.kind) {
    case mask_kind::none:
      if (p.mask.has_sparse()) return {0, 0};
      break;
    case mask_kind::causal:
      if (p.mask.has_sparse()) return {0, 0};
      hi = (r1 - 1) + shift + 1;
      break;
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

// Sparse terms are clipped to j <= i' when the base is causal.
ATTN_HD inline bool sparse_clipped(const problem& p) { return p.mask.kind == mask_kind::causal; }

// The random blocks: splitmix64's finaliser makes eight keys from (seed,
// query block); they drive a bijection of [0, 2^k) (2^k >= nkb; four rounds
// of add a key, multiply by an odd key, xor-shift), walked until it lands below nkb
// (cycle walking keeps it a bijection of [0, nkb)). The r blocks of query
// block qb are perm(0), ..., perm(r - 1): distinct with no list to check, and
// the same on every backend, run and shard, since nothing else enters.
ATTN_HD inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

struct block_permutation {
  static constexpr int rounds = 4;
  std::uint64_t mask = 0, n = 1, mul[rounds] = {}, add[rounds] = {};
  int shift = 1;
  ATTN_HD block_permutation(std::uint64_t seed, std::int64_t qb, std::int64_t nkb)
      : n(static_cast<std::uint64_t>(nkb)) {
    int bits = 1;
    while ((std::uint64_t{1} << bits) < n) ++bits;
    mask = (std::uint64_t{1} << bits) - 1;
    shift = bits > 1 ? (bits + 1) / 2 : 1;
    const std::uint64_t key = mix64(mix64(seed) ^ static_cast<std::uint64_t>(qb));
    for (int r = 0; r < rounds; ++r) {
      mul[r] = (mix64(key + 2 * r) | 1u) & mask;
      add[r] = mix64(key + 2 * r + 1) & mask;
    }
  }
  ATTN_HD std::int64_t operator()(std::int64_t t) const {
    std::uint64_t x = static_cast<std::uint64_t>(t);
    do {
      for (int r = 0; r < rounds; ++r) {
        x = ((x + add[r]) & mask) * (mul[r] | 1u) & mask;
        x ^= x >> shift;
      }
    } while (x >= n);
    return static_cast<std::int64_t>(x);
  }
};

// The random key blocks of query block qb (of nkb key blocks) in draw order:
// min(r, nkb) distinct blocks into out; returns how many.
ATTN_HD inline int random_key_blocks(const mask_spec& m, std::int64_t nkb, std::int64_t qb,
                                     std::int64_t out[max_random_blocks]) {
  if (m.sparse->random_count >= nkb) {
    for (std::int64_t kb = 0; kb < nkb; ++kb) out[kb] = kb;
    return static_cast<int>(nkb);
  }
  const block_permutation perm(m.sparse->random_seed, qb, nkb);
  for (std::int64_t t = 0; t < m.sparse->random_count; ++t) out[t] = perm(t);
  return static_cast<int>(m.sparse->random_count);
}

ATTN_HD inline bool random_block_visible(const problem& p, std::int64_t qb, std::int64_t kb) {
  const std::int64_t nkb = (p.Nkv + p.mask.sparse->random_block - 1) / p.mask.sparse->random_block;
  if (p.mask.sparse->random_count >= nkb) return true;
  const block_permutation perm(p.mask.sparse->random_seed, qb, nkb);
  for (std::int64_t t = 0; t < p.mask.sparse->random_count; ++t)
    if (perm(t) == kb) return true;
  return false;
}

ATTN_HD inline bool layout_block_visible(const problem& p, std::int64_t h, std::int64_t qb, std::int64_t kb) {
  const mask_spec& m = p.mask;
  const std::int64_t head = m.sparse->layout_heads > 1 ? h : 0;
  return m.sparse->layout[(head * m.sparse->layout_rows + qb) * m.sparse->layout_cols + kb] != 0;
}

// Block (qb, kb) of the random and layout terms (b of whichever is set; both
// set means the same b, checked by parse_mask).
ATTN_HD inline bool block_term_visible(const problem& p, std::int64_t h, std::int64_t qb, std::int64_t kb) {
  return (p.mask.has_random() && random_block_visible(p, qb, kb)) ||
         (p.mask.has_layout() && layout_block_visible(p, h, qb, kb));
}
ATTN_HD inline std::int64_t block_term_size(const problem& p) {
  return p.mask.has_layout() ? p.mask.sparse->layout_block : p.mask.sparse->random_block;
}

// The strided term for key j of the row whose bottom-right diagonal key is ip (i + Nkv - Nq).
ATTN_HD inline bool strided_term_visible(const problem& p, std::int64_t ip, std::int64_t j) {
  const std::int64_t back = ip - j;
  return back >= 0 && (back <= p.mask.sparse->stride_band || back % p.mask.sparse->stride == 0);
}

// The sparse terms alone for pair (i, j) of query head h, clip included.
ATTN_HD inline bool sparse_visible_inline(const problem& p, std::int64_t h, std::int64_t i, std::int64_t j) {
  const std::int64_t ip = i + p.Nkv - p.Nq;
  if (sparse_clipped(p) && j > ip) return false;
  if (p.mask.has_strided() && strided_term_visible(p, ip, j)) return true;
  if (p.mask.has_random() || p.mask.has_layout()) {
    const std::int64_t b = block_term_size(p);
    if (block_term_visible(p, h, i / b, j / b)) return true;
  }
  return false;
}

#if defined(__CUDA_ARCH__)
// On the device the sparse terms are one out-of-line call: inlined into every
// is_visible they cost the interval-only kernels registers (flash1: 40 bytes
// of spills, the CUDA reference 4). A kernel that claims sparse terms calls
// sparse_visible_inline where it has the registers (flash2: before S = QK^T).
__device__ __noinline__ inline bool sparse_visible_call(mask_spec m, std::int64_t nq, std::int64_t nkv, std::int64_t h,
                                                        std::int64_t i, std::int64_t j) {
  problem p;
  p.Nq = nq;
  p.Nkv = nkv;
  p.mask = m;
  return sparse_visible_inline(p, h, i, j);
}
#endif
ATTN_HD inline bool sparse_visible(const problem& p, std::int64_t h, std::int64_t i, std::int64_t j) {
#if defined(__CUDA_ARCH__)
  return sparse_visible_call(p.mask, p.Nq, p.Nkv, h, i, j);
#else
  return sparse_visible_inline(p, h, i, j);
#endif
}

ATTN_HD inline bool is_visible(const problem& p, std::int64_t h, std::int64_t i, std::int64_t j) {
  if (i < p.mask.global || j < p.mask.global) return true;
  if (window_keys(p, i, i + 1).contains(j)) return true;
  return p.mask.has_sparse() && sparse_visible(p, h, i, j);
}
ATTN_HD inline bool is_visible(const problem& p, std::int64_t i, std::int64_t j) { return is_visible(p, 0, i, j); }

namespace mask_detail {

// |union of intervals iv[0..n) ∪ {x in [lo, hi) : x ≡ phase mod step, x <= top}|
// within [lo, hi) (step 0: no progression). n <= 4.
ATTN_HD inline std::int64_t count_union(span64* iv, int n, std::int64_t lo, std::int64_t hi, std::int64_t step,
                                        std::int64_t phase, std::int64_t top) {
  for (int a = 0; a < n; ++a) {
    iv[a].lo = std::max(iv[a].lo, lo);
    iv[a].hi = std::min(iv[a].hi, hi);
  }
  for (int a = 1; a < n; ++a)  // insertion sort by lo
    for (int b = a; b > 0 && iv[b].lo < iv[b - 1].lo; --b) {
      const span64 t = iv[b];
      iv[b] = iv[b - 1];
      iv[b - 1] = t;
    }
  // Progression points x ≡ phase (mod step) in [a, c) with x <= top.
  auto points = [&](std::int64_t a, std::int64_t c) -> std::int64_t {
    c = std::min(c, top + 1);
    if (step <= 0 || a >= c) return 0;
    auto below = [&](std::int64_t x) {  // points in (-inf, x) relative to phase: floor((x - 1 - phase) / step)
      const std::int64_t y = x - 1 - phase;
      return y >= 0 ? y / step : -((-y + step - 1) / step);
    };
    return below(c) - below(a);
  };
  std::int64_t count = 0, at = lo;
  for (int a = 0; a < n; ++a) {
    if (iv[a].empty()) continue;
    if (iv[a].lo > at) count += points(at, iv[a].lo);
    const std::int64_t s = std::max(at, iv[a].lo);
    if (iv[a].hi > s) count += iv[a].hi - s;
    at = std::max(at, iv[a].hi);
  }
  if (hi > at) count += points(at, hi);
  return count;
}

}  // namespace mask_detail

// Number of visible keys of query row i of query head h: exact for every mask,
// O(1) without block terms, O(Nkv / b) with them.
ATTN_HD inline std::int64_t visible_keys(const problem& p, std::int64_t h, std::int64_t i) {
  if (i < p.mask.global) return p.Nkv;
  const span64 w = window_keys(p, i, i + 1);
  const std::int64_t g = std::min(p.mask.global, p.Nkv);
  if (!p.mask.has_sparse()) {
    // |w ∪ [0, g)|
    const std::int64_t overlap = std::max<std::int64_t>(0, std::min(w.hi, g) - w.lo);
    return w.size() + g - (w.empty() ? 0 : overlap);
  }
  const std::int64_t ip = i + p.Nkv - p.Nq;
  const std::int64_t top = sparse_clipped(p) || p.mask.has_strided() ? ip : p.Nkv;  // the stride is causal
  const bool clip = sparse_clipped(p);
  const std::int64_t step = p.mask.has_strided() ? p.mask.sparse->stride : 0;
  const std::int64_t phase = step > 0 ? ((ip % step) + step) % step : 0;
  const span64 band = p.mask.has_strided() ? span64{ip - p.mask.sparse->stride_band, ip + 1} : span64{0, 0};
  const bool blocks = p.mask.has_random() || p.mask.has_layout();
  const std::int64_t b = blocks ? block_term_size(p) : p.Nkv;
  std::int64_t count = 0;
  for (std::int64_t k0 = 0; k0 < p.Nkv; k0 += b) {
    const std::int64_t k1 = std::min(p.Nkv, k0 + b);
    span64 iv[4] = {{0, g}, w, band, {0, 0}};
    if (blocks && block_term_visible(p, h, i / b, k0 / b)) iv[3] = {k0, clip ? std::min(k1, ip + 1) : k1};
    count += mask_detail::count_union(iv, 4, k0, k1, step, phase, top);
  }
  return count;
}
ATTN_HD inline std::int64_t visible_keys(const problem& p, std::int64_t i) { return visible_keys(p, 0, i); }

// Visible (query, key) pairs of one (batch, head 0): exact for every mask.
ATTN_HD inline std::int64_t visible_pairs_per_head(const problem& p) {
  std::int64_t n = 0;
  for (std::int64_t i = 0; i < p.Nq; ++i) n += visible_keys(p, i);
  return n;
}
// Visible pairs of one batch over all H query heads (per-head layouts differ).
inline std::int64_t visible_pairs_per_batch(const problem& p) {
  if (!p.mask.per_head()) return visible_pairs_per_head(p) * p.H;
  std::int64_t n = 0;
  for (std::int64_t h = 0; h < p.H; ++h)
    for (std::int64_t i = 0; i < p.Nq; ++i) n += visible_keys(p, h, i);
  return n;
}

}  // namespace attnbench

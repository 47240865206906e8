// Parameters shared by the host side (rows, runners, models; plain C++) and
// the device side (flash2_kernel.cuh) of the flash2 family: flash2, sparse,
// flash2_gqa_packed and flash2_splitkv all run the same kernel template with
// different runtime settings (see docs/flash2.md):
//
//   flash2             pack = 1, visit = causal bound,   splits = 1
//   sparse             pack = 1, visit = visible tiles,  splits = 1
//   flash2_gqa_packed  pack = G, visit = causal bound,   splits = 1
//   flash2_splitkv     pack = G, visit = visible tiles,  splits from SM count
//
// "Packing" puts the rows of all G query heads of one KV group into the M
// dimension of a CTA's tile, query-major: packed row r is query i = r / pack
// of head base + r % pack. A tile of rows therefore covers a contiguous query
// range [q0, q1) of every head of the group, and each K/V tile it loads
// serves all of them.
#pragma once

#include <cstdint>

#include "harness/mask.hpp"
#include "harness/problem.hpp"

namespace attnbench::cuda {

struct flash2_params {
  problem p;  // p.Br / p.Bc are the kernel's tile (the runner sets them)
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* o = nullptr;         // [B, H, Nq, d] in p.type (splits == 1)
  float* lse = nullptr;      // [B, H, Nq] (splits == 1)
  float* o_part = nullptr;   // [splits, B*H*Nq, d] fp32 (splits > 1)
  float* lse_part = nullptr; // [splits, B*H*Nq] (splits > 1)
  int pack = 1;              // query heads per CTA (1 or G = H / Hkv)
  int splits = 1;            // CTAs sharing one row tile's key tiles
  bool sparse = false;       // visible_kv_tiles (true) or causal_bounded_kv_tiles
  float scale = 0;           // 1 / sqrt(d)
  float scale_log2 = 0;      // scale * log2(e): exp(scale * x) = exp2(scale_log2 * x)
};

// Packed rows per CTA group and row tiles per (batch, head or KV group).
ATTN_HD inline std::int64_t packed_rows(const problem& p, int pack) { return p.Nq * pack; }
ATTN_HD inline std::int64_t row_tiles(const problem& p, int pack, int bm) {
  return ceil_div(packed_rows(p, pack), bm);
}

// Query range [q0, q1) covered by packed rows [r0, r1) (r1 clamped to the
// real rows by the caller).
ATTN_HD inline span64 packed_query_range(std::int64_t r0, std::int64_t r1, int pack) {
  return {r0 / pack, (r1 - 1) / pack + 1};
}

// Key tiles (of width p.Bc) that query rows [q0, q1) visit. For q0 = qt * Br,
// q1 = min(Nq, q0 + Br) this equals causal_bounded_kv_tiles(p, qt) (sparse =
// false; as the first span) and visible_kv_tiles(p, qt) (sparse = true) — the
// GPU tests check that for many problems. It exists because a packed tile's
// query range is not aligned to Br; it is written with the same helpers
// (window_keys) so visibility keeps one definition.
ATTN_HD inline tile_spans kv_tiles_for_queries(const problem& p, std::int64_t q0, std::int64_t q1,
                                               bool sparse) {
  const std::int64_t nt = num_kv_tiles(p);
  const span64 none{nt, nt};
  const std::int64_t g_hi = std::min(nt, ceil_div(std::min(p.mask.global, p.Nkv), p.Bc));
  if (!sparse) {
    if (p.mask.kind != mask_kind::causal || q0 < p.mask.global) return {{0, nt}, none};
    const std::int64_t last_key = (q1 - 1) + p.Nkv - p.Nq;
    std::int64_t hi = ceil_div(last_key + 1, p.Bc);
    hi = hi < 0 ? 0 : (hi > nt ? nt : hi);
    return {{0, hi > g_hi ? hi : g_hi}, none};
  }
  if (q0 < p.mask.global) return {{0, nt}, none};
  const span64 w = window_keys(p, q0, q1);
  const span64 win = w.empty() ? none : span64{w.lo / p.Bc, ceil_div(w.hi, p.Bc)};
  const span64 glob{0, g_hi};
  if (glob.empty()) return {win, none};
  if (win.empty()) return {glob, none};
  if (win.lo <= glob.hi) return {{0, glob.hi > win.hi ? glob.hi : win.hi}, none};
  return {glob, win};
}

// Visibility as the kernel evaluates it (same rules as is_visible; the GPU
// test file checks the equivalence exhaustively on small problems):
// key j is visible to query i iff j < min(G, Nkv) or j is in row_window(p, i)
// (the row's window, all keys for a global row i < G).
ATTN_HD inline span64 row_window(const problem& p, std::int64_t i) {
  return i < p.mask.global ? span64{0, p.Nkv} : window_keys(p, i, i + 1);
}

// True when every (query, key) pair of queries [q.lo, q.hi) x keys [k0, k1)
// is visible, so the kernel skips the element-wise mask. A window [lo(i),
// hi(i)) has lo and hi non-decreasing in i, so the rows share
// [lo(q.hi - 1), hi(q.lo)); global rows and keys only add visibility.
ATTN_HD inline bool tile_fully_visible(const problem& p, span64 q, std::int64_t k0, std::int64_t k1) {
  if (p.mask.kind == mask_kind::none) return true;
  if (q.hi - 1 < p.mask.global || k1 <= p.mask.global) return true;
  const span64 first = window_keys(p, q.lo, q.lo + 1), last = window_keys(p, q.hi - 1, q.hi);
  return last.lo <= k0 && k1 <= first.hi;
}

// Key-tile ordinals [lo, hi) of split s when `count` visited tiles are shared
// by `splits` CTAs as evenly as possible (some are empty when count < splits).
ATTN_HD inline span64 split_ordinals(std::int64_t count, int splits, int s) {
  return {count * s / splits, count * (s + 1) / splits};
}

// ---- host interface (defined in the .cu/.cpp files of kernels/cuda/flash2) --

// One kernel instantiation: head dim, dtype, tile, and its launcher.
using flash2_launch_fn = void (*)(const flash2_params&, void* stream);
struct flash2_config {
  int d;
  dtype type;
  int bm, bn;     // row tile (Br) and key tile (Bc)
  int warps;      // warps per CTA
  bool decode;    // the split-KV/decode instantiation (16-row tiles, warps split keys)
  int smem;       // dynamic shared memory bytes per CTA
  flash2_launch_fn launch;
  const char* name;
};
// Every instantiation (flash2_instances.cpp).
const flash2_config* flash2_configs(int* count);
// Main-loop instantiation for (d, dtype, Br, Bc), or nullptr.
const flash2_config* find_flash2_config(int d, dtype t, std::int64_t br, std::int64_t bc);
// The decode instantiation for (d, dtype), or nullptr.
const flash2_config* find_flash2_decode_config(int d, dtype t);
// The tile used when a sweep does not choose one (Br, Bc) per head dim.
void flash2_default_tile(int d, std::int64_t* br, std::int64_t* bc);

// Merges split partials into O and lse (flash2_splitkv_merge.cu).
void launch_splitkv_merge(const flash2_params& prm, void* stream);

// Multiprocessors of the current device (cudaDeviceGetAttribute); 132 (one
// H200) when no device is usable, so models stay defined on CPU machines.
int flash2_sm_count();
// Splits the decode runner uses on `sms` multiprocessors.
int splitkv_num_splits(const problem& p, int sms);

}  // namespace attnbench::cuda

// Parameters shared by the host side (rows, runners, models; plain C++) and
// the device side (flash2_kernel.cuh) of the flash2 family: flash2, sparse,
// flash2_gqa_packed and flash2_splitkv all run the same kernel template with
// different runtime settings (flash2_plan, see docs/flash2.md):
//
//   flash2             pack = 1, walk = causal_bound,  splits = 1
//   sparse             pack = 1, walk = visible,       splits = 1
//   flash2_gqa_packed  pack = G, walk = causal_bound,  splits = 1
//   flash2_splitkv     pack = G, walk = visible,       splits from SM count
//
// "Packing" puts the rows of all G query heads of one KV group into the M
// dimension of a CTA's tile, query-major: packed row r is query i = r / pack
// of head base + r % pack. A tile of rows therefore covers a contiguous query
// range [q0, q1) of every head of the group, and each K/V tile it loads
// serves all of them.
#pragma once

#include <cstdint>

#include "core/tiles.hpp"

namespace attnbench::cuda {

struct flash2_params {
  problem p;  // p.Br / p.Bc are the kernel's tile (the runner sets them)
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* o = nullptr;                         // [B, H, Nq, d] in p.type (splits == 1)
  float* lse = nullptr;                      // [B, H, Nq] (splits == 1)
  float* o_part = nullptr;                   // [splits, B*H*Nq, d] fp32 (splits > 1)
  float* lse_part = nullptr;                 // [splits, B*H*Nq] (splits > 1)
  int pack = 1;                              // query heads per CTA (1 or G = H / Hkv)
  int splits = 1;                            // CTAs sharing one row tile's key tiles
  tile_walk walk = tile_walk::causal_bound;  // which key tiles a row tile visits
  // Masks with sparse terms on the `sparse` row (pack 1): the runner's
  // per-query-tile key-tile lists in global memory (core/tiles.hpp
  // make_kv_tile_list); num == nullptr: the interval walk of `walk`. A block
  // layout's bits are in global memory too: p.mask.sparse is the runner's device copy.
  kv_tile_list_view tiles{};
  float scale = 0;       // 1 / sqrt(d)
  float scale_log2 = 0;  // scale * log2(e): exp(scale * x) = exp2(scale_log2 * x)
};

// Packed rows per CTA group and row tiles per (batch, head or KV group).
ATTN_HD inline std::int64_t packed_rows(const problem& p, int pack) { return p.Nq * pack; }
ATTN_HD inline std::int64_t row_tiles(const problem& p, int pack, int bm) { return ceil_div(packed_rows(p, pack), bm); }

// Query range [q0, q1) covered by packed rows [r0, r1) (r1 clamped to the
// real rows by the caller).
ATTN_HD inline span64 packed_query_range(std::int64_t r0, std::int64_t r1, int pack) {
  return {r0 / pack, (r1 - 1) / pack + 1};
}

// Key-tile ordinals [lo, hi) of split s when `count` visited tiles are shared
// by `splits` CTAs as evenly as possible (some are empty when count < splits).
ATTN_HD inline span64 split_ordinals(std::int64_t count, int splits, int s) {
  return {count * s / splits, count * (s + 1) / splits};
}

// How one row runs the kernel: the tile walk the models and the runner share
// (flash2_plan.cpp chooses it per row and problem).
struct flash2_plan {
  problem geometry;  // p with the kernel's tile in Br / Bc
  int pack = 1;      // query heads per CTA
  tile_walk walk = tile_walk::causal_bound;
  int splits = 1;  // CTAs sharing one row tile's key tiles
};

// ---- host interface (defined in the .cu/.cpp files of kernels/cuda/flash2) --

// One kernel instantiation: head dim, dtype, tile, and its launcher.
using flash2_launch_fn = void (*)(const flash2_params&, void* stream);
struct flash2_config {
  int d;
  dtype type;
  int bm, bn;   // row tile (Br) and key tile (Bc)
  int warps;    // warps per CTA
  bool decode;  // the split-KV/decode instantiation (16-row tiles, warps split keys)
  int smem;     // dynamic shared memory bytes per CTA
  flash2_launch_fn launch;
  const char* name;
};
// Every instantiation (flash2_instances.cpp).
const flash2_config* flash2_configs(int* count);
// Main-loop instantiation for (d, dtype, Br, Bc), or nullptr.
const flash2_config* find_flash2_config(int d, dtype t, std::int64_t br, std::int64_t bc);
// The decode instantiation for (d, dtype), or nullptr.
const flash2_config* find_flash2_decode_config(int d, dtype t);

// Merges split partials into O and lse (flash2_splitkv_merge.cu).
void launch_splitkv_merge(const flash2_params& prm, void* stream);

}  // namespace attnbench::cuda

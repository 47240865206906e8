// Parameters of the flash2 backward (docs/backward.md "The CUDA flash2
// backward"), shared by the host side (row, runner, model; plain C++) and the
// device side (flash2_bwd_kernel.cuh, flash2_bwd_prepost.cu): three kernels
// per backward, in this order on one stream:
//   preprocess  D = rowsum(dO * O) [B, H, Nq] fp32, and the fp32 dQ
//               accumulator [B, H, Nq, d] cleared (FA2's dot_do_o kernel)
//   main        one CTA per (key tile, batch, KV head): dK, dV of the tile
//               over every query tile of every query head of the group that
//               visits it; dQ += dS K by fp32 atomicAdd into the accumulator
//   convert     dQ = accumulator rounded to p.type
// The deterministic mode has no atomics: the main kernel runs in waves of S key tiles (one
// launch each), the CTA of the wave's s-th key tile storing its dQ rows to slice s of dq_part
// (plain stores), and after each wave the sum kernel (launch_flash2_bwd_sum_dq) adds the
// wave's visited slices in ascending key-tile order to the fp32 dQ accumulator (the last wave
// writes dQ instead; one wave: no accumulator). Its preprocess clears nothing.
#pragma once

#include <cstdint>

#include "core/tiles.hpp"

namespace attnbench::cuda {

// The backward's tiles: 64 query rows x Bc keys, Bc / 16 warps of 16 keys each
// (docs/backward.md "Tiles"). 64 x 128 halves the visits per key, and with them the dQ
// atomics and the Q, dO re-reads, at 8 warps and 1 CTA per SM. At d = 128 its kernel takes a
// visit's queries in two halves (flash2_bwd_traits::QH): with all 64 at once it spilled 16-44
// bytes on sm_90 beside 255 registers in every arrangement tried (CUDA 13.0).
inline constexpr std::int64_t kBwdBr = 64;
inline constexpr std::int64_t kBwdBcs[] = {64, 128};
constexpr bool is_bwd_tile(std::int64_t br, std::int64_t bc) {
  return br == kBwdBr && (bc == kBwdBcs[0] || bc == kBwdBcs[1]);
}
// Dynamic shared memory of the main kernel: Q, dO tiles of 64 rows and K, V tiles of bc rows,
// each row d + 8 elements; dS 64 x (bc + 8) (2 bytes each); lse and D (64 floats each).
constexpr int flash2_bwd_smem_bytes(int d, int bc) {
  return 2 * ((2 * static_cast<int>(kBwdBr) + 2 * bc) * (d + 8) + static_cast<int>(kBwdBr) * (bc + 8)) +
         4 * 2 * static_cast<int>(kBwdBr);
}

// Whether the main kernel evaluates the sparse terms (strided, random, block layout) at head
// dim d and key tile bc: everywhere but d = 128 at 64 x 128, where their one more word per visit
// spilled 8 bytes on sm_90 beside 255 registers (CUDA 13.0; bits per half visit: 44-124).
// (Before the d = 128 kernel took its queries in halves, the word spilled 12-16 bytes there at
// 64 x 64 too, on every mask, and the calls 128 more.)
constexpr bool flash2_bwd_sparse_terms(std::int64_t d, std::int64_t bc) { return d <= 64 || bc == 64; }

struct flash2_bwd_params {
  problem p;  // p.Br x p.Bc: a backward tile (is_bwd_tile)
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  const void* o = nullptr;     // the forward's O [B, H, Nq, d]
  const void* d_o = nullptr;   // [B, H, Nq, d]
  const float* lse = nullptr;  // the forward's natural log-sum-exp [B, H, Nq]
  float* delta = nullptr;      // D [B, H, Nq]
  float* dq_acc = nullptr;     // fp32 [B, H, Nq, d] (atomic mode)
  // Deterministic mode (the flash2_bwd_deterministic row): fp32 [dq_slices][B, H, Nq, d], the
  // slices of one wave of dq_slices key tiles starting at kt_offset; dq_acc is then the
  // accumulator across waves (null when one wave covers every key tile).
  float* dq_part = nullptr;
  int dq_slices = 0;
  std::int64_t kt_offset = 0;
  // The sparse row: per (head, key tile) the query tiles to visit, its forward's key-tile lists
  // transposed (core/tiles.hpp q_tile_list); num == nullptr: the causal-bound walk (bwd_visits).
  q_tile_list_view q_tiles{};
  // GQA groups split over CTAs (bwd_head_splits): head_splits CTAs per (key tile, batch, KV
  // head), the s-th walking the s-th part of the group's query heads and storing its dK, dV in
  // fp32 to part s of dkv_part [head_splits][2][B, Hkv, Nkv, d] (dK then dV), summed in order
  // by the reduce kernel. One split: dK and dV written in p.type by the main kernel.
  int head_splits = 1;
  float* dkv_part = nullptr;
  void* dq = nullptr;  // [B, H, Nq, d] in p.type
  void* dk = nullptr;  // [B, Hkv, Nkv, d]
  void* dv = nullptr;
  float scale = 0;       // 1 / sqrt(d)
  float scale_log2 = 0;  // scale * log2(e)
};

// Query tiles of the backward grid and key tiles (one CTA each per batch, KV head), at p's
// tile.
ATTN_HD inline std::int64_t bwd_q_tiles(const problem& p) { return ceil_div(p.Nq, p.Br); }
ATTN_HD inline std::int64_t bwd_kv_tiles(const problem& p) { return ceil_div(p.Nkv, p.Bc); }

// The deterministic mode's wave width S: enough CTAs (S per batch, KV head and head split) for
// two per SM, at most one per key tile. Bounds its memory at (S + 1) x dQ in fp32 whatever Nkv
// is (a slice per key tile needed 1 KB per dQ element at 16k keys); counting the head splits'
// CTAs divides it by the splits (FA2 sizes its deterministic dQ splits by query-head CTAs the
// same way): B 1, H 16, Hkv 1, N 32k, d 128 took 264 slices (71 GB), with 4 splits 66 (18 GB).
inline std::int64_t bwd_dq_slices(const problem& p, int sm_count, int head_splits) {
  const std::int64_t want = ceil_div(2 * static_cast<std::int64_t>(sm_count), p.B * p.Hkv * head_splits);
  return want < 1 ? 1 : (want < bwd_kv_tiles(p) ? want : bwd_kv_tiles(p));
}

// Parts a GQA group's query heads are split into, one CTA each (atomic mode): the smallest
// divisor of the group that gives at least 4 CTAs per CTA slot (two 64 x 64 CTAs per SM, one
// 64 x 128), the whole group at most. A CTA walks its heads one after another, so at Hkv 2,
// causal, N 8k (256 CTAs for 264 slots) the CTA of the first key tile made 8x the visits of
// Hkv 16's and the causal backward took 1.74x its time (docs/backward.md "GQA and causal").
inline int bwd_head_splits(const problem& p, int sm_count) {
  const std::int64_t group = p.group(), ctas = bwd_kv_tiles(p) * p.B * p.Hkv;
  const std::int64_t want = 4 * static_cast<std::int64_t>(sm_count) * (p.Bc == 64 ? 2 : 1);
  std::int64_t s = 1;
  while (s < group && (group % s != 0 || ctas * s < want)) ++s;
  return static_cast<int>(s);
}

// True when query tile qt visits key tile kt: the forward's causal-bound walk
// (kv_tiles, causal_bound) transposed, as the CPU flash2 backward walks it.
ATTN_HD inline bool bwd_visits(const problem& p, std::int64_t qt, std::int64_t kt) {
  const span64 s = kv_tiles(p, qt, tile_walk::causal_bound).first;
  return s.lo <= kt && kt < s.hi;
}

// ---- host interface (kernels/cuda/flash2/flash2_bwd_*.cu) --------------------
using flash2_bwd_launch_fn = void (*)(const flash2_bwd_params&, void* stream);
// The main kernel's instantiation for (d, key tile bc, dtype), or nullptr. sparse: the visits
// come from the sparse row's lists or the mask has sparse terms; without them d = 128 at
// 64 x 64 runs an instantiation with neither compiled in (flash2_bwd_traits::sparse).
flash2_bwd_launch_fn find_flash2_bwd_kernel(int d, int bc, dtype t, bool sparse);
void launch_flash2_bwd_preprocess(const flash2_bwd_params& prm, void* stream);
void launch_flash2_bwd_convert_dq(const flash2_bwd_params& prm, void* stream);
void launch_flash2_bwd_sum_dq(const flash2_bwd_params& prm, void* stream);
void launch_flash2_bwd_sum_dkv(const flash2_bwd_params& prm, void* stream);

}  // namespace attnbench::cuda

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
// The deterministic mode replaces the accumulator by per-key-tile partial dQ slices
// (dq_part, plain stores) and the conversion by a sum of the visited slices in a fixed
// order (launch_flash2_bwd_sum_dq); its preprocess clears nothing.
#pragma once

#include <cstdint>

#include "core/tiles.hpp"

namespace attnbench::cuda {

// The backward's fixed tile: 64 query rows x 64 keys, 4 warps of 16 keys each.
inline constexpr std::int64_t kBwdBr = 64, kBwdBc = 64;

struct flash2_bwd_params {
  problem p;  // p.Br / p.Bc = kBwdBr / kBwdBc
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  const void* o = nullptr;     // the forward's O [B, H, Nq, d]
  const void* d_o = nullptr;   // [B, H, Nq, d]
  const float* lse = nullptr;  // the forward's natural log-sum-exp [B, H, Nq]
  float* delta = nullptr;      // D [B, H, Nq]
  float* dq_acc = nullptr;     // fp32 [B, H, Nq, d] (atomic mode)
  // Deterministic mode (the flash2_bwd_deterministic row): fp32 [kv_tiles][B, H, Nq, d], the
  // slice of key tile kt written by its CTA with plain stores (no atomics); the sum kernel
  // adds the slices of the key tiles each query tile visits in ascending order. dq_acc null.
  float* dq_part = nullptr;  // fp32 [B, H, Nq, d]
  void* dq = nullptr;        // [B, H, Nq, d] in p.type
  void* dk = nullptr;        // [B, Hkv, Nkv, d]
  void* dv = nullptr;
  float scale = 0;       // 1 / sqrt(d)
  float scale_log2 = 0;  // scale * log2(e)
};

// Query tiles of the backward grid and key tiles (one CTA each per batch, KV head).
ATTN_HD inline std::int64_t bwd_q_tiles(const problem& p) { return ceil_div(p.Nq, kBwdBr); }
ATTN_HD inline std::int64_t bwd_kv_tiles(const problem& p) { return ceil_div(p.Nkv, kBwdBc); }

// True when query tile qt visits key tile kt: the forward's causal-bound walk
// (kv_tiles, causal_bound) transposed, as the CPU flash2 backward walks it.
ATTN_HD inline bool bwd_visits(const problem& p, std::int64_t qt, std::int64_t kt) {
  const span64 s = kv_tiles(p, qt, tile_walk::causal_bound).first;
  return s.lo <= kt && kt < s.hi;
}

// ---- host interface (kernels/cuda/flash2/flash2_bwd_*.cu) --------------------
using flash2_bwd_launch_fn = void (*)(const flash2_bwd_params&, void* stream);
// The main kernel's instantiation for (d, dtype), or nullptr.
flash2_bwd_launch_fn find_flash2_bwd_kernel(int d, dtype t);
// Dynamic shared memory of the main kernel at head dim d (fp16/bf16).
int flash2_bwd_smem_bytes(int d);
void launch_flash2_bwd_preprocess(const flash2_bwd_params& prm, void* stream);
void launch_flash2_bwd_convert_dq(const flash2_bwd_params& prm, void* stream);
void launch_flash2_bwd_sum_dq(const flash2_bwd_params& prm, void* stream);

}  // namespace attnbench::cuda

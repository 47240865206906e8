// Compile-time shape of one flash3 instantiation: head dim D, CTA row tile
// BM = 128 (two consumer warpgroups of 64 rows: wgmma's M), key tile BN, K/V
// ring depth, element type, and the shared-memory layout all of them imply.
//
// Every tile in shared memory is stored as TMA writes it with 128-byte
// swizzle: "panels" of 64 columns (128 bytes of a row, the widest box row the
// 128B swizzle allows), each panel rows x 128 bytes, 16-byte chunk c of row r
// at chunk c ^ (r % 8). Panels and tiles start on 1024-byte boundaries (one
// swizzle atom = 8 rows x 128 B), so the swizzle the descriptors name matches
// the one TMA applied (base offset 0).
#pragma once

#include <cstdint>

namespace attnbench::cuda {

template <int D_, int BN_, int STAGES_, class T_>
struct flash3_traits {
  using T = T_;
  static constexpr int D = D_, BM = 128, BN = BN_, stages = STAGES_;
  static constexpr int consumer_wgs = 2, wg_rows = 64;
  static constexpr int threads = 128 * (1 + consumer_wgs);
  // setmaxnreg: 24 x 128 + 240 x 256 = 64512 = what 384 threads x 168 (the
  // launch bound's share of 64K) hold at launch; the producer only issues TMA.
  static constexpr int producer_regs = 24, consumer_regs = 240;

  static constexpr int panel_cols = 64;          // elements per 128-byte row
  static constexpr int panels = D / panel_cols;  // 1 (d = 64) or 2 (d = 128)
  static constexpr int q_panel_bytes = BM * 128;
  static constexpr int kv_panel_bytes = BN * 128;
  static constexpr int q_bytes = panels * q_panel_bytes;
  static constexpr int kv_tile_bytes = panels * kv_panel_bytes;
  // [Q][K stage 0..S-1][V stage 0..S-1][mbarriers]
  static constexpr int off_k = q_bytes;
  static constexpr int off_v = off_k + stages * kv_tile_bytes;
  static constexpr int off_bar = off_v + stages * kv_tile_bytes;
  static constexpr int barriers = 1 + 4 * stages;  // Q full; K/V full and empty per stage
  static constexpr int smem_used = off_bar + 8 * barriers;
  static constexpr int smem_bytes = smem_used + 1024;  // the runtime aligns the base to 1024

  static_assert(D % panel_cols == 0, "head dim must be whole 64-column panels");
  static_assert(BN % 16 == 0 && BN <= 256, "wgmma N (keys) must be a multiple of 16, at most 256");
  static_assert(D <= 256, "wgmma N (head dim) at most 256");
  static_assert(smem_bytes <= 227 * 1024, "tile does not fit sm_90 shared memory");
};

}  // namespace attnbench::cuda

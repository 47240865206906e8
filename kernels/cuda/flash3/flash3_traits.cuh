// Compile-time shape of one flash3 instantiation: head dim D, CTA row tile
// BM = 128 (two consumer warpgroups of 64 rows: wgmma's M), key tile BN, K/V
// ring depth, element type, and the shared-memory layout all of them imply.
//
// Every Q/K/V tile in shared memory is stored as TMA writes it with the
// widest swizzle its rows allow: "panels" of one swizzle row each (128 bytes
// of a row: 64 16-bit or 128 fp8 elements; 64 bytes for fp8 at d = 64),
// panel p holding columns [p * panel_cols, (p + 1) * panel_cols) of every
// row, 16-byte chunk c of row r at chunk c XOR the row's phase (Swizzle<B,4,3>
// on the address). Panels and tiles start on 1024-byte boundaries (one 128B
// swizzle atom = 8 rows x 128 B), so the swizzle the descriptors name matches
// the one TMA applied (base offset 0).
//
// FP8 (e4m3) adds two regions: V^T per stage (D rows x BN keys, K-major for
// the P V wgmma, which has no transpose for 8-bit types; written by the
// producer warpgroup's transposer warps), and an O staging tile in bf16 (Q's
// tile is half the size O needs).
#pragma once

#include <cstdint>

namespace attnbench::cuda {

namespace f3 {
// The e4m3 element of the flash3_fp8 instantiations (one byte of codes; the
// host side converts with core/fp8.hpp, the kernel with cvt.rn.satfinite).
struct e4m3 {
  std::uint8_t bits;
};
}  // namespace f3

// Shared-memory layout and launch constants; the host table
// (flash3_instances.cpp) reads these without the element types.
template <int D_, int BN_, int STAGES_, int ELEM_BYTES_>
struct flash3_layout {
  static constexpr int D = D_, BM = 128, BN = BN_, stages = STAGES_, elem_bytes = ELEM_BYTES_;
  static constexpr bool fp8 = ELEM_BYTES_ == 1;
  static constexpr int consumer_wgs = 2, wg_rows = 64;
  static constexpr int threads = 128 * (1 + consumer_wgs);
  // setmaxnreg: 24 x 128 + 240 x 256 = 64512 = what 384 threads x 168 (the
  // launch bound's share of 64K) hold at launch. With fp8 the producer's
  // warps 1-3 also transpose V; ptxas fits that in R0-R21 (SASS after
  // USETMAXREG.DEALLOC 0x18). 40/232 instead spilled 28 bytes of the
  // consumers at fp8 d = 256 (O alone is 128 registers there).
  static constexpr int producer_regs = 24, consumer_regs = 240;

  static constexpr int row_bytes = D * elem_bytes < 128 ? D * elem_bytes : 128;  // the swizzle span
  static constexpr int panel_cols = row_bytes / elem_bytes;
  static constexpr int panels = D / panel_cols;
  static constexpr int q_panel_bytes = BM * row_bytes;
  static constexpr int kv_panel_bytes = BN * row_bytes;
  static constexpr int q_bytes = panels * q_panel_bytes;
  static constexpr int kv_tile_bytes = panels * kv_panel_bytes;
  // wgmma's K is 32 bytes of a row for every type (k16 x 2 B, k32 x 1 B).
  static constexpr int k_steps_per_row = row_bytes / 32;

  // fp8 only: V^T tiles (D rows of BN keys) and the bf16 O staging tile.
  static constexpr int vt_row_bytes = fp8 ? (BN < 128 ? BN : 128) : 0;
  static constexpr int vt_panel_bytes = D * vt_row_bytes;
  static constexpr int vt_tile_bytes = fp8 ? D * BN : 0;
  static constexpr int o_panel_bytes = BM * 128;  // O in 16 bits: 64 columns per 128-byte row
  static constexpr int o_bytes = fp8 ? BM * D * 2 : 0;

  // [Q][K stage 0..S-1][V stage 0..S-1][V^T stage 0..S-1][O staging][mbarriers]
  static constexpr int off_k = q_bytes;
  static constexpr int off_v = off_k + stages * kv_tile_bytes;
  static constexpr int off_vt = off_v + stages * kv_tile_bytes;
  static constexpr int off_o = off_vt + stages * vt_tile_bytes;
  static constexpr int off_bar = off_o + o_bytes;
  // Q full; K/V full and empty per stage; fp8: V^T full and empty per stage.
  static constexpr int barriers = 1 + (fp8 ? 6 : 4) * stages;
  static constexpr int smem_used = off_bar + 8 * barriers;
  static constexpr int smem_bytes = smem_used + 1024;  // the runtime aligns the base to 1024
  // fp8: the transposer is the producer warpgroup's warps 1-3.
  static constexpr int transposer_threads = fp8 ? 96 : 0;

  static_assert(D % panel_cols == 0, "head dim must be whole panels");
  static_assert(row_bytes == 128 || row_bytes == 64, "rows must fill a 64B or 128B swizzle span");
  static_assert(BN % 16 == 0 && BN <= 256, "wgmma N (keys) must be a multiple of 16, at most 256");
  static_assert(!fp8 || (BN % 32 == 0 && (vt_row_bytes == 128 || vt_row_bytes == 64)),
                "fp8: P V steps are k32; V^T rows fill a 64B or 128B swizzle span");
  static_assert(D <= 256, "wgmma N (head dim) at most 256");
  static_assert(smem_bytes <= 227 * 1024, "tile does not fit sm_90 shared memory");
};

template <int D_, int BN_, int STAGES_, class T_>
struct flash3_traits : flash3_layout<D_, BN_, STAGES_, static_cast<int>(sizeof(T_))> {
  using T = T_;  // Q, K, V: __half, __nv_bfloat16 or f3::e4m3
};

}  // namespace attnbench::cuda

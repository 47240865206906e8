// Compile-time shape of one flash2 kernel instantiation: head dim, row tile
// (BM = Br), key tile (BN = Bc), warp grid, element type, and the shared
// memory they need. Rows are split over WM warps (each owns MT = BM / (16 WM)
// m16 tiles); keys of a tile over WN warps (WN > 1 only in the decode
// instantiation, where 16 rows leave one warp row and the warps share the
// key tile instead, merging their softmax states at the end).
#pragma once

#include <cstdint>

namespace attnbench::cuda {

template <int D_, int BM_, int BN_, int WM_, int WN_, class T_, int MIN_CTAS_ = 1, bool Q_REGS_ = true>
struct flash2_traits {
  using T = T_;
  static constexpr int D = D_, BM = BM_, BN = BN_, WM = WM_, WN = WN_;
  // CTAs per SM the register allocation must allow (__launch_bounds__).
  static constexpr int min_ctas = MIN_CTAS_;
  static constexpr int warps = WM * WN, threads = 32 * warps;
  static constexpr int MT = BM / (16 * WM);  // m16 row tiles per warp
  static constexpr int WKEYS = BN / WN;      // keys of a tile per warp
  static constexpr int NT = WKEYS / 8;       // n8 tiles of S per warp
  static constexpr int DT = D / 8;           // n8 tiles of O per warp
  static constexpr int KS = D / 16;          // k16 steps of Q K^T
  static constexpr int PS = WKEYS / 16;      // k16 steps of P V
  static constexpr int CH = D / 8;           // 16-byte chunks per row of Q, K, V
  // Q fragments stay in registers when a warp owns one m16 tile (KS * 4 regs:
  // 32 for d = 128); with two the 128 O + 64 S accumulators leave no room, so
  // Q is re-read from shared memory per key tile as FA2 does.
  static constexpr bool q_in_regs = MT == 1 && Q_REGS_;

  // Main loop: Q tile + two stages of K and V tiles, rows padded to LD
  // elements (16 bytes more than D) against bank conflicts.
  static constexpr int LD = D + 8;
  static constexpr int smem_main = 2 * (BM + 4 * BN) * LD;
  // Epilogue (reuses the same memory): m and l per (warp column, row), and the
  // fp32 O tile per warp column with rows padded by 8 floats (32 bytes), which
  // makes the float2 stores of a half-warp (4 rows x 4 threads) hit 32
  // distinct banks.
  static constexpr int o_stride = D + 8;
  static constexpr int smem_epilogue = 4 * (2 * WN * BM + WN * BM * o_stride);
  static constexpr int smem_bytes = smem_main > smem_epilogue ? smem_main : smem_epilogue;

  static_assert(D % 16 == 0, "head dim must be whole k16 steps");
  static_assert(BM % (16 * WM) == 0 && MT >= 1, "rows must split into m16 tiles per warp");
  static_assert(WKEYS % 16 == 0, "each warp needs whole k16 steps of keys");
  static_assert(BM * CH % threads == 0 && BN * CH % threads == 0, "copies must split evenly");
  // sm_90 allows 227 KB of dynamic shared memory per block (sm_80: 163 KB; the
  // runner checks the device's limit before launching).
  static_assert(smem_bytes <= 227 * 1024, "tile does not fit sm_90 shared memory");
};

}  // namespace attnbench::cuda

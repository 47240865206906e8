// attnbench's masks as cuDNN SDPA's diagonal band (plain C++, no cuDNN: the
// host tests check the translation without the library).
//
// cuDNN with DiagonalAlignment_t::BOTTOM_RIGHT keeps score (i, j) iff
//   j <= i + (Nkv - Nq) + right_bound          (right bound set)
//   j >  i + (Nkv - Nq) - left_bound           (left bound set, left_bound >=
//   1)
// (cudnn-frontend 1.32, utils/attn_score_modifiers.h: CMP_GE on the right,
// CMP_GT on the left). attnbench's local:L,R keeps i' - L <= j <= i' + R with
// i' = i + Nkv - Nq (core/mask.hpp), so right_bound = R and left_bound = L + 1;
// causal is right_bound = 0. A bound that removes no pair of the problem is
// left unset, so wide windows cost cuDNN nothing and meet none of its limits.
// Global tokens are no band: cuDNN cannot express them.
// The alignment: BOTTOM_RIGHT only where the diagonals differ (Nq != Nkv); at Nq = Nkv the
// band is the same pairs under TOP_LEFT, the frontend's plain causal mask
// (set_causal_mask), which builds no sequence-length tensors into the mask. Measured at
// 20cfac8 (H200, bf16, B 1, H 16, N 8k, d 128) with BOTTOM_RIGHT, cuDNN's causal backward
// took 2.44 ms against 2.46 ms unmasked: it skipped no masked tile (its forward did).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>

#include "core/problem.hpp"

namespace attnbench::cuda {

struct cudnn_band {
  std::optional<std::int64_t> left;   // cuDNN left_bound (>= 1) when set
  std::optional<std::int64_t> right;  // cuDNN right_bound (>= 0) when set
  bool bottom_right = false;          // DiagonalAlignment_t::BOTTOM_RIGHT, else TOP_LEFT
};

// The band of p's window (p.mask.global is not looked at: callers refuse it).
inline cudnn_band cudnn_band_for(const problem& p) {
  const std::int64_t shift = p.Nkv - p.Nq;  // i' of row 0
  cudnn_band b;
  std::int64_t left = -1, right = -1;  // attnbench's L and R; -1: unbounded
  switch (p.mask.kind) {
    case mask_kind::none: break;
    case mask_kind::causal: right = 0; break;
    case mask_kind::local:
      left = p.mask.left;
      right = p.mask.right;
      break;
  }
  // Right bound removes a pair iff the first row's window ends before the last
  // key: shift + R < Nkv - 1. Left bound iff the last row's window starts after
  // key 0: (Nq - 1) + shift - L > 0.
  if (right >= 0 && shift + right < p.Nkv - 1) b.right = right;
  if (left >= 0 && (p.Nq - 1) + shift - left > 0) b.left = left + 1;
  b.bottom_right = (b.left || b.right) && shift != 0;
  return b;
}

// The visibility cuDNN computes for band b (for tests: compare with
// is_visible).
inline bool cudnn_band_keeps(const problem& p, const cudnn_band& b, std::int64_t i, std::int64_t j) {
  const std::int64_t ip = b.bottom_right ? i + p.Nkv - p.Nq : i;
  if (b.right && !(j <= ip + *b.right)) return false;
  if (b.left && !(j > ip - *b.left)) return false;
  return true;
}

}  // namespace attnbench::cuda

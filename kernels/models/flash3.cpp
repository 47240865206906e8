// flash3 (CUDA, Hopper): the flash2 family's per-row-tile walk (flash2.cpp)
// with flash3's plan: 128-key tiles, the tile walk `visible`, GQA heads
// packed into row tiles of pack * floor(128 / pack) rows. TMA moves the same
// bytes flash2's copies do: a box's out-of-bounds rows (past Nq or Nkv) are
// zero-filled on chip, not read, so each CTA reads Q's real rows once, the
// real keys of each visited K/V tile once, and writes O and lse once
// (docs/models.md, docs/flash3.md). Exponentials: one exp2 per score of the
// visited tiles, one rescale per row and tile on each of the row's 4 threads.
#include "kernels/cuda/flash2/flash2_params.hpp"
#include "kernels/models/models.hpp"

namespace attnbench {

model_figures model_flash3_cuda(const problem& p, const problem& geometry, int pack, tile_walk walk) {
  cuda::flash2_plan walk_plan;
  walk_plan.geometry = geometry;
  walk_plan.pack = pack;
  walk_plan.walk = walk;
  walk_plan.splits = 1;
  // flash3_kernel.cuh: the 4 threads of a quad hold a row and each computes its rescale
  // factor per tile; the epilogue scales by 1 / l (a reciprocal, not an exp).
  return model_tile_walk_cuda(p, walk_plan, {.rescale_per_row = 4, .final_per_row = 0});
}

}  // namespace attnbench

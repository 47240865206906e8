// core/tiles.hpp's one tile-visiting function and a tiled kernel's mask
// shortcuts against is_visible, pair by pair: on query ranges aligned to Br
// and on packed GQA ranges that are not (flash2_gqa_packed, split-KV decode).
#include <gtest/gtest.h>

#include <algorithm>

#include "core/tiles.hpp"
#include "kernels/cuda/flash2/flash2_params.hpp"

namespace attnbench {
namespace {

problem tile_problem(std::int64_t nq, std::int64_t nkv, const char* mask, std::int64_t br, std::int64_t bc) {
  return make_problem(1, 1, 1, nq, nkv, 64, dtype::bf16, mask, br, bc);
}

// Aligned ranges: the visible walk is exactly the tiles holding a visible
// pair; the causal-bound walk is FA2's n_block_max prefix.
TEST(Tiles, KvTilesForQueriesAreExactlyTheVisibleTiles) {
  const char* masks[] = {
      "none",      "causal", "local:0,0", "local:37,5", "local:200,300", "causal+global:3", "local:10,0+global:70",
      "global:130"};
  for (const char* m : masks)
    for (auto [nq, nkv] : {std::pair{1, 1}, {100, 333}, {333, 100}, {256, 256}, {77, 1000}})
      for (std::int64_t br : {16, 64, 128})
        for (std::int64_t bc : {64, 128}) {
          const problem p = tile_problem(nq, nkv, m, br, bc);
          for (std::int64_t qt = 0; qt < num_q_tiles(p); ++qt) {
            const std::int64_t q0 = qt * br, q1 = std::min(p.Nq, q0 + br);
            const tile_spans vis = kv_tiles_for_queries(p, q0, q1, tile_walk::visible);
            const tile_spans bnd = kv_tiles_for_queries(p, q0, q1, tile_walk::causal_bound);
            EXPECT_TRUE(bnd.second.empty());
            std::int64_t last_visible = -1;
            for (std::int64_t kt = 0; kt < num_kv_tiles(p); ++kt) {
              bool any = false;
              for (std::int64_t i = q0; i < q1 && !any; ++i)
                for (std::int64_t j = kt * bc; j < std::min(p.Nkv, (kt + 1) * bc) && !any; ++j)
                  any = is_visible(p, i, j);
              if (any) last_visible = kt;
              ASSERT_EQ(vis.first.contains(kt) || vis.second.contains(kt), any)
                  << m << " Nq " << nq << " Nkv " << nkv << " qt " << qt << " kt " << kt;
            }
            if (p.mask.kind == mask_kind::causal && q0 >= p.mask.global)
              EXPECT_EQ(bnd.first.hi, last_visible + 1) << m << " qt " << qt;
            else
              EXPECT_EQ(bnd.first.hi, num_kv_tiles(p)) << m << " qt " << qt;
            EXPECT_EQ(bnd.first.lo, 0);
          }
        }
}

// The per-row rule, the "tile needs no mask" test, and that the visited
// tiles of any (also packed, unaligned) query range hold every visible pair.
TEST(Tiles, KernelVisibilityRulesMatchIsVisible) {
  const char* masks[] = {
      "none",      "causal", "local:0,0", "local:37,5", "local:3,90", "causal+global:3", "local:10,0+global:70",
      "global:130"};
  for (const char* m : masks)
    for (auto [nq, nkv] : {std::pair{1, 1}, {100, 333}, {333, 100}, {200, 200}})
      for (std::int64_t bc : {64, 128}) {
        const problem p = tile_problem(nq, nkv, m, 64, bc);
        const std::int64_t gk = std::min(p.mask.global, p.Nkv);
        for (std::int64_t i = 0; i < p.Nq; ++i) {
          const span64 w = row_window(p, i);
          for (std::int64_t j = 0; j < p.Nkv; ++j)
            ASSERT_EQ(j < gk || w.contains(j), is_visible(p, i, j)) << m << " i " << i << " j " << j;
        }
        for (int pack : {1, 3, 8})
          for (std::int64_t bm : {16, 64}) {
            const std::int64_t rows = p.Nq * pack;
            for (std::int64_t r0 = 0; r0 < rows; r0 += bm) {
              const span64 q = cuda::packed_query_range(r0, std::min(rows, r0 + bm), pack);
              const tile_spans vis = kv_tiles_for_queries(p, q.lo, q.hi, tile_walk::visible);
              const tile_spans bnd = kv_tiles_for_queries(p, q.lo, q.hi, tile_walk::causal_bound);
              for (std::int64_t kt = 0; kt < num_kv_tiles(p); ++kt) {
                const std::int64_t k0 = kt * bc, k1 = std::min(p.Nkv, k0 + bc);
                bool all = true, any = false;
                for (std::int64_t i = q.lo; i < q.hi; ++i)
                  for (std::int64_t j = k0; j < k1; ++j) {
                    all = all && is_visible(p, i, j);
                    any = any || is_visible(p, i, j);
                  }
                if (tile_fully_visible(p, q, k0, k1))
                  ASSERT_TRUE(all) << m << " rows " << q.lo << ".." << q.hi << " tile " << kt;
                if (any) {
                  ASSERT_TRUE(vis.first.contains(kt) || vis.second.contains(kt)) << m << " tile " << kt;
                  ASSERT_TRUE(bnd.first.contains(kt)) << m << " tile " << kt;
                }
              }
            }
          }
      }
}

}  // namespace
}  // namespace attnbench

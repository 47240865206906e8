// core/mask.hpp against brute force over many shapes: Nq < Nkv, Nq > Nkv,
// every mask kind, global tokens, ragged tiles.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/tiles.hpp"

using namespace attnbench;

namespace {

std::vector<problem> shapes() {
  std::vector<problem> out;
  for (const char* mask :
       {"none", "causal", "local:0,0", "local:5,0", "local:0,7", "local:3,3", "local:40,2", "global:1",
        "causal+global:3", "local:2,0+global:5", "local:0,0+global:30", "local:1,1+global:200"})
    for (auto [nq, nkv] :
         {std::pair{1, 1}, {1, 50}, {50, 1}, {31, 31}, {16, 48}, {48, 16}, {33, 100}, {100, 33}, {64, 64}})
      for (auto [br, bc] : {std::pair{16, 16}, {16, 32}, {32, 16}}) {
        problem p;
        p.Nq = nq;
        p.Nkv = nkv;
        p.Br = br;
        p.Bc = bc;
        p.mask = parse_mask(mask);
        out.push_back(p);
      }
  return out;
}

bool tile_has_visible_pair(const problem& p, std::int64_t qt, std::int64_t kt) {
  for (std::int64_t i = qt * p.Br; i < std::min(p.Nq, (qt + 1) * p.Br); ++i)
    for (std::int64_t j = kt * p.Bc; j < std::min(p.Nkv, (kt + 1) * p.Bc); ++j)
      if (is_visible(p, i, j)) return true;
  return false;
}

// The rules of docs/masks.md written out once more, independently.
bool visible_by_rule(const problem& p, std::int64_t i, std::int64_t j) {
  const std::int64_t ip = i + p.Nkv - p.Nq;
  if (i < p.mask.global || j < p.mask.global) return true;
  switch (p.mask.kind) {
    case mask_kind::none: return true;
    case mask_kind::causal: return j <= ip;
    case mask_kind::local: return ip - p.mask.left <= j && j <= ip + p.mask.right;
  }
  return false;
}

TEST(mask, is_visible_follows_the_rules) {
  for (const problem& p : shapes())
    for (std::int64_t i = 0; i < p.Nq; ++i)
      for (std::int64_t j = 0; j < p.Nkv; ++j)
        ASSERT_EQ(is_visible(p, i, j), visible_by_rule(p, i, j))
            << to_string(p.mask) << " Nq " << p.Nq << " Nkv " << p.Nkv << " i " << i << " j " << j;
}

TEST(mask, visible_keys_is_brute_count) {
  for (const problem& p : shapes()) {
    std::int64_t pairs = 0;
    for (std::int64_t i = 0; i < p.Nq; ++i) {
      std::int64_t n = 0;
      for (std::int64_t j = 0; j < p.Nkv; ++j) n += is_visible(p, i, j);
      ASSERT_EQ(visible_keys(p, i), n) << to_string(p.mask) << " i " << i;
      pairs += n;
    }
    EXPECT_EQ(visible_pairs_per_head(p), pairs);
  }
}

TEST(mask, visible_kv_tiles_are_exactly_the_tiles_with_a_visible_pair) {
  for (const problem& p : shapes())
    for (std::int64_t qt = 0; qt < num_q_tiles(p); ++qt) {
      const tile_spans t = visible_kv_tiles(p, qt);
      std::int64_t brute = 0;
      for (std::int64_t kt = 0; kt < num_kv_tiles(p); ++kt) {
        const bool has = tile_has_visible_pair(p, qt, kt);
        brute += has;
        ASSERT_EQ(has, t.first.contains(kt) || t.second.contains(kt))
            << to_string(p.mask) << " Nq " << p.Nq << " Nkv " << p.Nkv << " qt " << qt << " kt " << kt;
      }
      ASSERT_EQ(t.count(), brute);
      // Disjoint and ascending.
      if (!t.first.empty() && !t.second.empty()) EXPECT_LE(t.first.hi, t.second.lo);
    }
}

TEST(mask, causal_bound_covers_every_visible_tile) {
  for (const problem& p : shapes())
    for (std::int64_t qt = 0; qt < num_q_tiles(p); ++qt) {
      const span64 s = causal_bounded_kv_tiles(p, qt);
      EXPECT_EQ(s.lo, 0);
      for (std::int64_t kt = 0; kt < num_kv_tiles(p); ++kt)
        if (tile_has_visible_pair(p, qt, kt)) ASSERT_TRUE(s.contains(kt)) << to_string(p.mask);
      if (p.mask.kind != mask_kind::causal) {
        EXPECT_EQ(s.hi, num_kv_tiles(p));
      } else if (qt * p.Br >= p.mask.global && s.hi > 0) {
        // Tight under causal: the last tile of the bound holds a visible pair.
        EXPECT_TRUE(tile_has_visible_pair(p, qt, s.hi - 1)) << to_string(p.mask) << " qt " << qt;
      }
    }
}

TEST(mask, worked_examples_of_docs) {
  // docs/masks.md: Nq = 3, Nkv = 5, causal -> i' = i + 2, rows see 3, 4, 5 keys.
  problem p;
  p.Nq = 3;
  p.Nkv = 5;
  p.mask = parse_mask("causal");
  EXPECT_EQ(visible_keys(p, 0), 3);
  EXPECT_EQ(visible_keys(p, 2), 5);
  // Nq = 5, Nkv = 3, causal -> i' = i - 2: rows 0 and 1 see nothing.
  std::swap(p.Nq, p.Nkv);
  EXPECT_EQ(visible_keys(p, 0), 0);
  EXPECT_EQ(visible_keys(p, 1), 0);
  EXPECT_EQ(visible_keys(p, 2), 1);
  // local:1,0+global:1 on 4x4: row 0 all keys, row 3 sees keys 0, 2, 3.
  p.Nq = p.Nkv = 4;
  p.mask = parse_mask("local:1,0+global:1");
  EXPECT_EQ(visible_keys(p, 0), 4);
  EXPECT_TRUE(is_visible(p, 3, 0));
  EXPECT_FALSE(is_visible(p, 3, 1));
  EXPECT_EQ(visible_keys(p, 3), 3);
}

}  // namespace

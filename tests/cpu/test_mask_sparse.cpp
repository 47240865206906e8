// The sparse mask terms (strided, random blocks, block layouts;
// docs/masks.md) against brute force: is_visible against the rules written
// out independently, visible_keys / visible_pairs against pair counts,
// kv_tile_visible and make_kv_tile_list against per-pair scans of every tile
// and of packed (unaligned) row ranges, tile_fully_visible never wrong; the
// random picks' determinism and distinctness; parsing, canonical names and
// the bad-input errors; the fp64 reference on masks equal to known ones; the
// FLOP model equal to visible pairs x 4d. Each checker has a negative control.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <functional>
#include <set>
#include <unistd.h>

#include "core/block_layout.hpp"
#include "core/tiles.hpp"
#include "core/variant.hpp"
#include "harness/axis_values.hpp"
#include "harness/cli/commands.hpp"
#include "harness/npy.hpp"
#include "kernels/cpu/cpu_common.hpp"
#include "kernels/models/models.hpp"
#include "kernels/reference/attention_reference.hpp"

using namespace attnbench;

namespace {

std::string temp_path(const std::string& name) {
  // Per process: ctest runs the tests of this file in parallel processes.
  return (std::filesystem::path(testing::TempDir()) /
          ("attnbench_mask_sparse_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f << bytes;
}

// A 0/1 layout with a fixed pseudo-random pattern (about 40% ones) and its path.
std::string layout_file(const std::string& name, std::vector<std::int64_t> shape, unsigned salt) {
  std::int64_t n = 1;
  for (auto v : shape) n *= v;
  std::vector<std::uint8_t> bits(n);
  for (std::int64_t e = 0; e < n; ++e) bits[e] = ((e * 2654435761u + salt * 40503u) >> 7) % 5 < 2;
  const std::string path = temp_path(name);
  write_file(path, block_layout_npy(shape, bits));
  return path;
}

std::int64_t cdiv(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

struct shape {
  std::int64_t nq, nkv;
};
constexpr shape shapes_list[] = {{1, 1}, {1, 50}, {50, 1}, {31, 31}, {16, 48}, {48, 16}, {33, 100}, {100, 33}};

// Every (mask, shape, tile) case; layouts are written for each shape's block grid.
std::vector<problem> cases() {
  std::vector<problem> out;
  for (auto [nq, nkv] : shapes_list) {
    std::vector<std::string> masks = {"strided:0,1",           "strided:3,4",           "causal+strided:2,5",
                                      "local:1,1+strided:0,3", "strided:2,7+global:3",  "random:8,2",
                                      "random:16,1,7",         "causal+random:8,3,1",   "local:2,0+random:5,2,9",
                                      "random:4,16+global:2",  "strided:1,6+random:8,1"};
    for (std::int64_t b : {8, 13}) {
      const std::string f = layout_file(fmt::format("l_{}_{}_{}.npy", nq, nkv, b), {cdiv(nq, b), cdiv(nkv, b)},
                                        static_cast<unsigned>(nq * 7 + nkv + b));
      masks.push_back(fmt::format("layout:{}:{}", b, f));
      masks.push_back(fmt::format("causal+layout:{}:{}", b, f));
      masks.push_back(fmt::format("local:3,3+global:1+layout:{}:{}", b, f));
      masks.push_back(fmt::format("strided:2,4+random:{},1,3+layout:{}:{}", b, b, f));
    }
    const std::string fh = layout_file(fmt::format("h_{}_{}.npy", nq, nkv), {3, cdiv(nq, 8), cdiv(nkv, 8)},
                                       static_cast<unsigned>(nq + 3 * nkv));
    masks.push_back("causal+layout:8:" + fh);
    for (const auto& m : masks)
      for (auto [br, bc] : {std::pair{16, 16}, {16, 32}, {32, 16}}) {
        problem p;
        p.Nq = nq;
        p.Nkv = nkv;
        p.Br = br;
        p.Bc = bc;
        p.mask = parse_mask(m);
        if (p.mask.per_head()) p.H = p.Hkv = 3;
        validate(p);
        out.push_back(p);
      }
  }
  return out;
}

const std::vector<problem>& all_cases() {
  static const std::vector<problem> c = cases();
  return c;
}

// The rules of docs/masks.md once more, independently of core/mask.hpp's
// structure (random picks come from random_key_blocks, whose own properties
// are tested below).
bool visible_by_rule(const problem& p, std::int64_t h, std::int64_t i, std::int64_t j) {
  const mask_spec& m = p.mask;
  const std::int64_t ip = i + p.Nkv - p.Nq;
  if (i < m.global || j < m.global) return true;
  if (m.kind == mask_kind::local && ip - m.left <= j && j <= ip + m.right) return true;
  if (m.kind == mask_kind::causal && j > ip) return false;
  if (m.has_strided() && j <= ip && (ip - j <= m.sparse->stride_band || (ip - j) % m.sparse->stride == 0)) return true;
  if (m.has_random()) {
    std::int64_t picks[max_random_blocks];
    const int n = random_key_blocks(m, cdiv(p.Nkv, m.sparse->random_block), i / m.sparse->random_block, picks);
    for (int t = 0; t < n; ++t)
      if (picks[t] == j / m.sparse->random_block) return true;
  }
  if (m.has_layout()) {
    const block_layout& l = block_layout_by_id(m.sparse->layout_id);
    const std::int64_t hh = l.heads > 1 ? h : 0;
    if (l.bits[(hh * l.rows + i / m.sparse->layout_block) * l.cols + j / m.sparse->layout_block]) return true;
  }
  return false;
}

using rule = std::function<bool(const problem&, std::int64_t, std::int64_t, std::int64_t)>;

// Pairs where is_visible differs from `r`, over every case and head.
std::int64_t rule_mismatches(const rule& r) {
  std::int64_t bad = 0;
  for (const problem& p : all_cases())
    for (std::int64_t h = 0; h < p.H; ++h)
      for (std::int64_t i = 0; i < p.Nq; ++i)
        for (std::int64_t j = 0; j < p.Nkv; ++j) bad += is_visible(p, h, i, j) != r(p, h, i, j);
  return bad;
}

TEST(mask_sparse, is_visible_follows_the_rules) { EXPECT_EQ(rule_mismatches(visible_by_rule), 0); }

// The CPU kernels' row mask (one block-term lookup per key block) against is_visible, on tiles
// of 16 and 64 keys at every alignment the tile loops use, for every query head.
TEST(mask_sparse, cpu_row_mask_follows_is_visible) {
  std::int64_t masked = 0;
  for (const problem& p : all_cases())
    for (const std::int64_t n : {16, 64})
      for (std::int64_t h = 0; h < p.H; ++h)
        for (std::int64_t i = 0; i < p.Nq; ++i)
          for (std::int64_t c0 = 0; c0 < p.Nkv; c0 += n) {
            const std::int64_t cols = std::min(n, p.Nkv - c0);
            std::vector<float> row(2 * cols, 1.0f);  // stride 2, as a transposed tile's column
            cpu::mask_strided(p, h, i, c0, row.data(), 2, cols, -1.0f);
            for (std::int64_t j = 0; j < cols; ++j) {
              ASSERT_EQ(row[2 * j] == 1.0f, is_visible(p, h, i, c0 + j))
                  << to_string(p.mask) << " h " << h << " i " << i << " key " << c0 + j;
              ASSERT_EQ(row[2 * j + 1], 1.0f);
              masked += row[2 * j] != 1.0f;
            }
          }
  EXPECT_GT(masked, 0);
}

TEST(mask_sparse, negative_control_rule_checker_catches_an_off_by_one_stride) {
  const rule wrong = [](const problem& p, std::int64_t h, std::int64_t i, std::int64_t j) {
    if (p.mask.has_strided() && !(i < p.mask.global || j < p.mask.global)) {
      const std::int64_t back = i + p.Nkv - p.Nq - j;
      if (back > p.mask.sparse->stride_band && back > 0 && back % p.mask.sparse->stride == 1) return true;  // planted
    }
    return visible_by_rule(p, h, i, j);
  };
  EXPECT_GT(rule_mismatches(wrong), 0);
}

TEST(mask_sparse, visible_keys_and_pairs_are_brute_counts) {
  for (const problem& p : all_cases()) {
    std::int64_t pairs = 0;
    for (std::int64_t h = 0; h < p.H; ++h)
      for (std::int64_t i = 0; i < p.Nq; ++i) {
        std::int64_t n = 0;
        for (std::int64_t j = 0; j < p.Nkv; ++j) n += is_visible(p, h, i, j);
        ASSERT_EQ(visible_keys(p, h, i), n)
            << to_string(p.mask) << " Nq " << p.Nq << " Nkv " << p.Nkv << " h " << h << " i " << i;
        pairs += n;
      }
    ASSERT_EQ(visible_pairs_per_batch(p), pairs) << to_string(p.mask);
    // The FLOP model: 4 d per visible pair, every batch.
    problem q = p;
    q.B = 2;
    EXPECT_EQ(model_flops_softmax(q), 4.0 * q.d * pairs * 2) << to_string(p.mask);
  }
}

TEST(mask_sparse, negative_control_count_checker_sees_one_pair_more) {
  // The comparison above with one extra pair counted must fail somewhere.
  const problem& p = all_cases()[3 * 5];  // strided:3,4 on 1x50 with some tile
  std::int64_t n = 0;
  for (std::int64_t j = 0; j < p.Nkv; ++j) n += is_visible(p, 0, 0, j);
  EXPECT_NE(visible_keys(p, 0, 0), n + 1);
  EXPECT_EQ(visible_keys(p, 0, 0), n);
}

bool brute_rect(const problem& p, std::int64_t h, std::int64_t q0, std::int64_t q1, std::int64_t k0, std::int64_t k1) {
  for (std::int64_t i = q0; i < std::min(q1, p.Nq); ++i)
    for (std::int64_t j = k0; j < std::min(k1, p.Nkv); ++j)
      if (is_visible(p, h, i, j)) return true;
  return false;
}

TEST(mask_sparse, kv_tile_visible_is_exact_on_tiles_and_packed_ranges) {
  for (const problem& p : all_cases())
    for (std::int64_t h = 0; h < p.H; ++h) {
      // Unaligned row ranges (packed GQA tiles) and key ranges too.
      for (std::int64_t q0 = 0; q0 < p.Nq; q0 += 5)
        for (std::int64_t q1 : {q0 + 1, q0 + 7, q0 + 16})
          for (std::int64_t k0 = 0; k0 < p.Nkv; k0 += 6)
            for (std::int64_t k1 : {k0 + 1, k0 + 9, k0 + 16})
              ASSERT_EQ(kv_tile_visible(p, h, q0, q1, k0, k1), brute_rect(p, h, q0, q1, k0, k1))
                  << to_string(p.mask) << " Nq " << p.Nq << " Nkv " << p.Nkv << " rows " << q0 << ".." << q1 << " keys "
                  << k0 << ".." << k1;
    }
}

TEST(mask_sparse, tile_lists_are_the_tiles_with_a_visible_pair) {
  for (const problem& p : all_cases()) {
    const kv_tile_list l = make_kv_tile_list(p, tile_walk::visible);
    const kv_tile_list c = make_kv_tile_list(p, tile_walk::causal_bound);
    ASSERT_EQ(l.heads, p.mask.per_head() ? p.H : 1);
    for (std::int64_t h = 0; h < l.heads; ++h)
      for (std::int64_t qt = 0; qt < num_q_tiles(p); ++qt) {
        std::vector<std::int32_t> brute;
        for (std::int64_t kt = 0; kt < num_kv_tiles(p); ++kt)
          if (brute_rect(p, h, qt * p.Br, (qt + 1) * p.Br, kt * p.Bc, (kt + 1) * p.Bc))
            brute.push_back(static_cast<std::int32_t>(kt));
        const auto v = l.view();
        ASSERT_EQ(v.count(h, qt), static_cast<std::int32_t>(brute.size())) << to_string(p.mask);
        for (std::size_t n = 0; n < brute.size(); ++n) ASSERT_EQ(v.at(h, qt, n), brute[n]);
        // The interval walk covers them (the causal bound for causal bases).
        std::set<std::int32_t> cover;
        for (std::int32_t n = 0; n < c.view().count(0, qt); ++n) cover.insert(c.view().at(0, qt, n));
        for (auto kt : brute) ASSERT_TRUE(cover.count(kt)) << to_string(p.mask);
        const tile_spans s = visible_kv_tiles(p, qt);
        for (auto kt : brute) ASSERT_TRUE(s.first.contains(kt) || s.second.contains(kt)) << to_string(p.mask);
      }
  }
}

// The backward's walk: per (head, key tile) exactly the query tiles with a visible pair there,
// ascending (the lists transposed).
TEST(mask_sparse, transposed_lists_are_the_query_tiles_with_a_visible_pair) {
  for (const problem& p : all_cases()) {
    const q_tile_list t = transpose_tile_list(make_kv_tile_list(p, tile_walk::visible));
    ASSERT_EQ(t.heads, p.mask.per_head() ? p.H : 1);
    for (std::int64_t h = 0; h < t.heads; ++h)
      for (std::int64_t kt = 0; kt < num_kv_tiles(p); ++kt) {
        std::vector<std::int32_t> brute;
        for (std::int64_t qt = 0; qt < num_q_tiles(p); ++qt)
          if (brute_rect(p, h, qt * p.Br, (qt + 1) * p.Br, kt * p.Bc, (kt + 1) * p.Bc))
            brute.push_back(static_cast<std::int32_t>(qt));
        ASSERT_EQ(t.view().count(h, kt), static_cast<std::int32_t>(brute.size())) << to_string(p.mask);
        for (std::size_t n = 0; n < brute.size(); ++n) ASSERT_EQ(t.view().at(h, kt, n), brute[n]) << to_string(p.mask);
      }
  }
}

TEST(mask_sparse, tile_fully_visible_is_never_wrong) {
  std::int64_t claimed = 0;
  for (const problem& p : all_cases())
    for (std::int64_t q0 = 0; q0 < p.Nq; q0 += 4)
      for (std::int64_t k0 = 0; k0 < p.Nkv; k0 += 4) {
        const span64 q{q0, std::min(p.Nq, q0 + 8)};
        const std::int64_t k1 = std::min(p.Nkv, k0 + 8);
        if (!tile_fully_visible(p, q, k0, k1)) continue;
        ++claimed;
        for (std::int64_t h = 0; h < p.H; ++h)
          for (std::int64_t i = q.lo; i < q.hi; ++i)
            for (std::int64_t j = k0; j < k1; ++j) ASSERT_TRUE(is_visible(p, h, i, j)) << to_string(p.mask);
      }
  EXPECT_GT(claimed, 0);  // global, window and whole random/layout blocks are claimed
  // A tile inside one chosen block is claimed (the CPU skips its element mask).
  problem p;
  p.Nq = p.Nkv = 256;
  p.mask = parse_mask("random:64,2");
  std::int64_t picks[max_random_blocks];
  random_key_blocks(*&p.mask, 4, 1, picks);
  EXPECT_TRUE(tile_fully_visible(p, {64, 128}, picks[0] * 64, picks[0] * 64 + 64));
}

TEST(mask_sparse, random_blocks_are_distinct_deterministic_and_seeded) {
  const mask_spec m = parse_mask("random:64,5,11");
  std::int64_t a[max_random_blocks], b[max_random_blocks], c[max_random_blocks];
  std::int64_t differ = 0;
  for (std::int64_t qb = 0; qb < 64; ++qb) {
    ASSERT_EQ(random_key_blocks(m, 40, qb, a), 5);
    std::set<std::int64_t> seen(a, a + 5);
    ASSERT_EQ(seen.size(), 5u);
    for (auto kb : seen) ASSERT_TRUE(0 <= kb && kb < 40);
    random_key_blocks(m, 40, qb, b);
    for (int t = 0; t < 5; ++t) ASSERT_EQ(a[t], b[t]);
    const mask_spec other = parse_mask("random:64,5,12");
    random_key_blocks(other, 40, qb, c);
    differ += !std::equal(a, a + 5, c);
  }
  EXPECT_GT(differ, 50);  // another seed, other blocks
  // Fewer key blocks than r: every block.
  EXPECT_EQ(random_key_blocks(m, 3, 0, a), 3);
  // Fixed values: the picks are part of the mask's definition (docs/masks.md's
  // example); a change of the hash must be a deliberate change of this test.
  problem p;
  p.Nq = p.Nkv = 1024;
  p.mask = parse_mask("random:64,3");
  std::int64_t picks[max_random_blocks];
  random_key_blocks(p.mask, 16, 0, picks);
  std::set<std::int64_t> got(picks, picks + 3);
  EXPECT_EQ(visible_keys(p, 0), 3 * 64);
  for (std::int64_t kb = 0; kb < 16; ++kb) EXPECT_EQ(is_visible(p, 0, 0, kb * 64), got.count(kb) == 1);
}

TEST(mask_sparse, parse_and_canonical_names_round_trip) {
  const std::string f = layout_file("rt.npy", {4, 4}, 1);
  for (std::string s : {"strided:3,4", "causal+strided:8,8", "local:2,2+global:4+random:64,3", "random:64,3,99",
                        "causal+global:1+strided:1,2+random:16,2"}) {
    EXPECT_EQ(to_string(parse_mask(s)), s);
  }
  const std::string l = "causal+layout:16:" + f;
  EXPECT_EQ(to_string(parse_mask(l)), l);
  EXPECT_EQ(parse_mask(l), parse_mask(l));  // loaded once, same bits
  // Order of terms is free; the name is canonical.
  EXPECT_EQ(to_string(parse_mask("random:8,1+global:2")), "global:2+random:8,1");
  // A path with '+' and ':' in it (layout is the last term).
  const std::string odd = temp_path("a+b:c.npy");
  write_file(odd, block_layout_npy({2, 2}, {1, 0, 0, 1}));
  EXPECT_EQ(to_string(parse_mask("layout:8:" + odd)), "layout:8:" + odd);
  // Features: sparse terms are asked for explicitly.
  EXPECT_EQ(mask_features_of(parse_mask("causal+random:8,1")), unsigned{mask_causal | mask_random});
  EXPECT_EQ(mask_features_of(parse_mask("strided:1,2")), unsigned{mask_strided});
  EXPECT_EQ(mask_all & mask_sparse_terms, 0u);
}

void expect_error(const std::string& mask, const std::string& needle) {
  try {
    parse_mask(mask);
    ADD_FAILURE() << "no error for '" << mask << "'";
  } catch (const input_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(needle), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

TEST(mask_sparse, malformed_masks_name_the_value) {
  expect_error("strided:4", "strided:4");
  expect_error("strided:4,0", "strided:4,0");
  expect_error("strided:x,4", "'x'");
  expect_error("random:64", "random:64");
  expect_error("random:64,0", "random:64,0");
  expect_error("random:64,17", "random:64,17");
  expect_error("random:64,2,-1", "seed");
  expect_error("none+random:64,2", "none+random:64,2");
  expect_error("causal+causal", "causal");
  expect_error("strided:1,2+strided:1,2", "twice");
  expect_error("layout:64", "layout:64");
  expect_error("layout:0:x.npy", "layout block size");
  expect_error("layout:8:/nonexistent/x.npy", "/nonexistent/x.npy");
  expect_error("causal+wobble:3", "wobble:3");
  const std::string f = layout_file("mismatch.npy", {2, 2}, 3);
  expect_error("random:16,1+layout:8:" + f, "differs");
}

TEST(mask_sparse, bad_layout_files_name_the_file_and_the_problem) {
  auto npy_with = [](const std::string& descr, const std::string& shape, std::size_t n, char fill) {
    std::string h = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
    while ((10 + h.size() + 1) % 64) h += ' ';
    h += '\n';
    std::string out = "\x93NUMPY\x01";
    out += '\0';
    out += static_cast<char>(h.size());
    out += '\0';
    return out + h + std::string(n, fill);
  };
  const std::string f32 = temp_path("f32.npy"), rank1 = temp_path("rank1.npy"), two = temp_path("two.npy"),
                    junk = temp_path("junk.npy"), short_ = temp_path("short.npy");
  write_file(f32, npy_with("<f4", "(2, 2)", 16, 0));
  write_file(rank1, npy_with("|u1", "(4,)", 4, 1));
  write_file(two, npy_with("|u1", "(2, 2)", 4, 2));
  write_file(junk, "hello, not numpy");
  write_file(short_, npy_with("|u1", "(2, 2)", 3, 1));
  expect_error("layout:8:" + f32, "'<f4'");
  expect_error("layout:8:" + rank1, "(4,)");
  expect_error("layout:8:" + two, "value 2");
  expect_error("layout:8:" + junk, "not a .npy");
  expect_error("layout:8:" + short_, "3 data bytes");
  // Shape vs Nq, Nkv, b and H: at validate.
  const std::string f = layout_file("shape.npy", {4, 8}, 5);
  EXPECT_NO_THROW(make_problem(1, 1, 1, 64, 128, 64, dtype::fp32, "layout:16:" + f));
  EXPECT_NO_THROW(make_problem(1, 1, 1, 50, 120, 64, dtype::fp32, "layout:16:" + f));  // ragged last blocks
  for (auto [nq, nkv, b] : {std::tuple{64, 128, 32}, {64, 129, 16}, {65, 128, 16}}) {
    try {
      make_problem(1, 1, 1, nq, nkv, 64, dtype::fp32, fmt::format("layout:{}:{}", b, f));
      ADD_FAILURE() << "no error for shape mismatch";
    } catch (const input_error& e) {
      EXPECT_NE(std::string(e.what()).find("has 4 x 8 blocks"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(fmt::format("b={}", b)), std::string::npos) << e.what();
    }
  }
  const std::string fh = layout_file("heads.npy", {2, 4, 8}, 5);
  EXPECT_NO_THROW(make_problem(1, 2, 1, 64, 128, 64, dtype::fp32, "layout:16:" + fh));
  EXPECT_THROW(make_problem(1, 3, 1, 64, 128, 64, dtype::fp32, "layout:16:" + fh), input_error);
}

// ---- the fp64 reference on sparse masks equal to known masks ----

host_inputs random_inputs(problem p) {
  host_inputs in{p, std::vector<float>(p.q_elems()), std::vector<float>(p.kv_elems()),
                 std::vector<float>(p.kv_elems())};
  std::uint64_t s = 1;
  auto next = [&] {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<float>((s >> 40) % 2001) / 1000.f - 1.f;
  };
  for (auto* v : {&in.q, &in.k, &in.v})
    for (float& x : *v) x = next();
  return in;
}

double max_diff(const reference_rows& a, const reference_rows& b) {
  double m = 0;
  for (std::size_t e = 0; e < a.o.size(); ++e) m = std::max(m, std::abs(a.o[e] - b.o[e]));
  for (std::size_t e = 0; e < a.lse.size(); ++e)
    if (!(std::isinf(a.lse[e]) && std::isinf(b.lse[e]))) m = std::max(m, std::abs(a.lse[e] - b.lse[e]));
  return m;
}

reference_rows run_reference(const problem& p, const problem& values_of) {
  host_inputs in = random_inputs(values_of);
  in.p = p;
  std::vector<std::int64_t> rows(p.rows());
  for (std::int64_t r = 0; r < p.rows(); ++r) rows[r] = r;
  return reference_softmax(in, rows);
}

TEST(mask_sparse, reference_on_equivalent_masks) {
  const std::int64_t nq = 40, nkv = 72, b = 8;
  auto make = [&](const std::string& m, std::int64_t H = 2) {
    return make_problem(1, H, 1, nq, nkv, 16, dtype::fp32, m);
  };
  // A lower block-triangular layout (in i' terms) under causal == causal.
  std::vector<std::uint8_t> tri(cdiv(nq, b) * cdiv(nkv, b)), ones(tri.size(), 1);
  for (std::int64_t qb = 0; qb < cdiv(nq, b); ++qb)
    for (std::int64_t kb = 0; kb < cdiv(nkv, b); ++kb)
      tri[qb * cdiv(nkv, b) + kb] = kb * b <= qb * b + b - 1 + nkv - nq;
  const std::string ftri = temp_path("tri.npy"), fones = temp_path("ones.npy");
  write_file(ftri, block_layout_npy({cdiv(nq, b), cdiv(nkv, b)}, tri));
  write_file(fones, block_layout_npy({cdiv(nq, b), cdiv(nkv, b)}, ones));
  const problem causal = make("causal");
  EXPECT_EQ(max_diff(run_reference(make("causal+layout:8:" + ftri), causal), run_reference(causal, causal)), 0);
  EXPECT_EQ(max_diff(run_reference(make("causal+strided:0,1"), causal), run_reference(causal, causal)), 0);
  const problem none = make("none");
  EXPECT_EQ(max_diff(run_reference(make("layout:8:" + fones), none), run_reference(none, none)), 0);
  EXPECT_EQ(max_diff(run_reference(make("random:8,16"), none), run_reference(none, none)), 0);  // r >= blocks
  // Negative control: a layout missing one block is not causal.
  tri[0] = 0;
  const std::string fcut = temp_path("tri_cut.npy");
  write_file(fcut, block_layout_npy({cdiv(nq, b), cdiv(nkv, b)}, tri));
  EXPECT_GT(max_diff(run_reference(make("causal+layout:8:" + fcut), causal), run_reference(causal, causal)), 1e-3);
  // Per-head layout: head h reads its own plane (head 1 all ones == none on head 1 rows).
  std::vector<std::uint8_t> planes(2 * tri.size(), 0);
  std::fill(planes.begin() + tri.size(), planes.end(), 1);
  const std::string fh = temp_path("planes.npy");
  write_file(fh, block_layout_npy({2, cdiv(nq, b), cdiv(nkv, b)}, planes));
  const reference_rows ph = run_reference(make("layout:8:" + fh), none), all = run_reference(none, none);
  for (std::int64_t i = 0; i < nq; ++i) {
    EXPECT_TRUE(std::isinf(ph.lse[i])) << "head 0 sees nothing";
    EXPECT_NEAR(ph.lse[nq + i], all.lse[nq + i], 1e-12);
  }
}

TEST(mask_sparse, executed_model_of_sparse_walks_the_list) {
  const std::string f = layout_file("model.npy", {4, 8}, 9);
  const problem p = make_problem(2, 2, 1, 64, 128, 16, dtype::fp32, "causal+layout:16:" + f, 16, 32);
  const kv_tile_list l = make_kv_tile_list(p, tile_walk::visible);
  std::int64_t pairs = 0;
  for (std::int64_t qt = 0; qt < num_q_tiles(p); ++qt)
    for (std::int32_t n = 0; n < l.view().count(0, qt); ++n)
      pairs += q_tile_rows(p, qt) * kv_tile_cols(p, l.view().at(0, qt, n));
  EXPECT_EQ(model_flops_executed_sparse(p), 4.0 * 16 * pairs * 4);
  EXPECT_LT(model_flops_executed_sparse(p), model_flops_executed_flash2(p));
  EXPECT_LE(model_flops_softmax(p), model_flops_executed_sparse(p));
}

TEST(mask_sparse, worked_examples_of_docs) {
  problem p;
  p.Nq = p.Nkv = 8;
  p.mask = parse_mask("strided:1,3");
  EXPECT_EQ(visible_keys(p, 7), 4);
  for (std::int64_t j : {1, 4, 6, 7}) EXPECT_TRUE(is_visible(p, 7, j)) << j;
  EXPECT_EQ(visible_keys(p, 2), 2);
  EXPECT_TRUE(is_visible(p, 3, 0));
  p.Nq = p.Nkv = 4;
  const std::string f = temp_path("docs_L.npy");
  write_file(f, block_layout_npy({2, 2}, {1, 0, 1, 1}));
  p.mask = parse_mask("causal+layout:2:" + f);
  validate(p);
  EXPECT_EQ(visible_pairs_per_head(p), 10);
  EXPECT_EQ(visible_keys(p, 0), 1);
  EXPECT_EQ(visible_keys(p, 2), 3);
}

TEST(mask_sparse, mask_lists_keep_the_commas_of_sparse_terms) {
  const auto l = parse_mask_list("none,random:64,3,random:64,3,7,causal+strided:4,8,local:2,2+random:8,1");
  ASSERT_EQ(l.size(), 5u);
  EXPECT_EQ(to_string(l[1]), "random:64,3");
  EXPECT_EQ(to_string(l[2]), "random:64,3,7");
  EXPECT_EQ(to_string(l[3]), "causal+strided:4,8");
  EXPECT_EQ(to_string(l[4]), "local:2,2+random:8,1");
  EXPECT_THROW(parse_mask_list("none,strided:4"), input_error);  // the band without a stride
}

// Largest relative deviation of the per-key-block pick counts from uniform,
// over 20000 query blocks (deterministic: the picks are a function of qb).
double pick_imbalance(const std::function<void(std::int64_t, std::int64_t*)>& picks, std::int64_t nkb, int r) {
  std::vector<double> n(nkb);
  std::int64_t out[max_random_blocks];
  const int qbs = 20000;
  for (std::int64_t qb = 0; qb < qbs; ++qb) {
    picks(qb, out);
    for (int t = 0; t < r; ++t) n[out[t]] += 1;
  }
  const double expect = double(qbs) * r / nkb;
  double worst = 0;
  for (double c : n) worst = std::max(worst, std::abs(c - expect) / expect);
  return worst;
}

TEST(mask_sparse, random_blocks_are_spread_evenly) {
  for (std::int64_t nkb : {16, 17, 100}) {
    const mask_spec m = parse_mask("random:64,3,5");
    // 5 standard deviations of a uniform draw's count (sqrt(expect) / expect).
    const double bound = 5.0 / std::sqrt(20000.0 * 3 / nkb);
    EXPECT_LT(pick_imbalance([&](std::int64_t qb, std::int64_t* o) { random_key_blocks(m, nkb, qb, o); }, nkb, 3),
              bound)
        << nkb;
  }
  // Negative control: a draw that favours low blocks fails the same bound.
  EXPECT_GT(pick_imbalance(
                [](std::int64_t qb, std::int64_t* o) {
                  for (int t = 0; t < 3; ++t) o[t] = (qb * 7 + t) % (t == 0 ? 8 : 16);
                },
                16, 3),
            5.0 / std::sqrt(20000.0 * 3 / 16));
}

}  // namespace

// `attnbench mask` (scripts/peers.py's source for the masks it cannot build): uint8
// [heads, Nq, Nkv] equal to is_visible, heads = H for a per-head layout, else 1.
TEST(mask_sparse, mask_command_writes_is_visible) {
  int checked = 0;
  for (const problem& p : all_cases()) {
    if (p.Br != 16 || p.Bc != 16) continue;
    const std::string out = temp_path("vis.npy");
    ASSERT_EQ(cli::cmd_mask({"--mask", to_string(p.mask), "--nq", std::to_string(p.Nq), "--nkv", std::to_string(p.Nkv),
                             "--heads", std::to_string(p.H), "--out", out}),
              exit_ok);
    const npy_array a = read_npy(out);
    const std::int64_t heads = p.mask.per_head() ? p.H : 1;
    ASSERT_EQ(a.type, npy_dtype::uint8);
    ASSERT_EQ(a.shape, (std::vector<std::int64_t>{heads, p.Nq, p.Nkv})) << to_string(p.mask);
    for (std::int64_t h = 0; h < heads; ++h)
      for (std::int64_t i = 0; i < p.Nq; ++i)
        for (std::int64_t j = 0; j < p.Nkv; ++j)
          ASSERT_EQ(a.bytes[(h * p.Nq + i) * p.Nkv + j], is_visible(p, h, i, j) ? 1 : 0)
              << to_string(p.mask) << " h " << h << " i " << i << " j " << j;
    ++checked;
  }
  EXPECT_GT(checked, 100);
  EXPECT_THROW(cli::cmd_mask({"--mask", "random:0,1", "--nq", "8", "--nkv", "8", "--out", temp_path("x.npy")}),
               input_error);
  EXPECT_THROW(cli::cmd_mask({"--mask", "causal", "--nq", "8", "--nkv", "8"}), input_error);  // no --out
}

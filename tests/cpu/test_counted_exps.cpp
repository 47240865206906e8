// Exponentials the CPU kernels count while they run (runner::counted_exps: in the row
// operations and the tile softmax, where the exps are computed) equal each row's model
// (model_figures::exps, kernels/models/) exactly, over ragged shapes, Nq != Nkv both ways,
// every interval mask, GQA and several tile shapes. Negative controls: a count
// that left out the per-row rescales, or a kernel walking other tiles than its model, is
// caught by the same comparison.
#include <gtest/gtest.h>

#include <set>

#include "harness/json_output.hpp"
#include "harness/tensors.hpp"
#include "kernels/models/models.hpp"
#include "kernels/registry.hpp"

using namespace attnbench;

namespace {

std::vector<std::string> cpu_variant_names() {
  std::vector<std::string> names;
  for (const variant& v : registry())  // the scans: tests/cpu/test_scan_rows.cpp
    if (v.backend == backend_kind::cpu && !is_scan(v.math)) names.push_back(v.name);
  return names;
}

problem shape(std::int64_t h, std::int64_t hkv, std::int64_t nq, std::int64_t nkv, std::int64_t br, std::int64_t bc,
              const char* mask, dtype t = dtype::fp32) {
  problem p;
  p.B = 2;
  p.H = h;
  p.Hkv = hkv;
  p.Nq = nq;
  p.Nkv = nkv;
  p.d = 8;
  p.Br = br;
  p.Bc = bc;
  p.mask = parse_mask(mask);
  p.type = t;
  return p;
}

std::int64_t counted(const variant& v, const problem& p) {
  auto r = v.make(p);
  r->set_inputs(make_inputs(p, 5));
  r->run();
  r->run();  // counters restart with every run
  return r->counted_exps();
}

class counted_exps : public ::testing::TestWithParam<std::string> {};

TEST_P(counted_exps, equal_the_model) {
  const variant& v = *find_variant(GetParam(), backend_kind::cpu);
  int checked = 0;
  std::set<std::string> masks;
  for (const char* mask : {"none", "causal", "local:5,0", "local:2,40", "global:4", "causal+global:20",
                           "local:0,0+global:1", "strided:3,4", "causal+random:16,2"})
    for (auto [nq, nkv] : {std::pair{33, 33}, {16, 64}, {100, 17}, {5, 130}})
      for (auto [br, bc] : {std::pair{16, 16}, {32, 16}})
        for (auto [h, hkv] : {std::pair{2, 2}, {4, 1}}) {
          const problem p = shape(h, hkv, nq, nkv, br, bc, mask);
          if (!v.supports(p).ok) continue;
          const double model = v.model(p).exps;
          ASSERT_GT(model, 0) << v.benchmark_name(p);
          ASSERT_EQ(counted(v, p), static_cast<std::int64_t>(model)) << v.benchmark_name(p);
          ++checked;
          masks.insert(mask);
        }
  // A row that takes no mask runs the 16 unmasked shapes only.
  const bool unmasked_only = v.caps.masks == mask_none;
  EXPECT_GE(checked, unmasked_only ? 16 : 20) << v.name;
  EXPECT_GE(masks.size(), unmasked_only ? 1u : 2u) << v.name;
}

INSTANTIATE_TEST_SUITE_P(registry, counted_exps, ::testing::ValuesIn(cpu_variant_names()),
                         [](const auto& info) { return info.param; });

// flash2 at bf16 and e4m3 runs the same softmax: the same exps as at fp32.
TEST(counted_exps_model, flash2_dtypes_execute_the_same_exps) {
  const variant& v = *find_variant("flash2", backend_kind::cpu);
  for (dtype t : {dtype::fp32, dtype::bf16, dtype::e4m3}) {
    const problem p = shape(2, 1, 40, 70, 16, 32, "causal", t);
    EXPECT_EQ(counted(v, p), static_cast<std::int64_t>(v.model(p).exps)) << to_string(t);
  }
}

// One tile by hand: causal 40 x 40, d 8, 16 x 16 tiles (docs/models.md's worked example).
// flash2 visits 1, 2, 3 key tiles from its three query tiles (16, 32, 40 keys):
// 16 (16 + 1) + 16 (32 + 2) + 8 (40 + 3) = 272 + 544 + 344 = 1160 exps; one per visible
// pair would be 820; naive exponentiates every row whole: 40 x 40 = 1600.
TEST(counted_exps_model, worked_example_by_hand) {
  const problem p = shape(1, 1, 40, 40, 16, 16, "causal");
  problem one = p;
  one.B = 1;
  EXPECT_EQ(model_exps_flash2(one), 1160);
  EXPECT_EQ(model_exps_min(one), 820);
  EXPECT_EQ(model_exps_naive(one), 1600);
  // flash1: scores of visited blocks as flash2 (16*16 + 16*32 + 8*40 = 1088), plus per row
  // 2 n - 1 for the n blocks holding a visible key: rows 0-15: 1 block (1 each), rows
  // 16-31: 2 (3 each), rows 32-39: 3 (5 each): 16 + 48 + 40 = 104; 1192 in all.
  EXPECT_EQ(model_exps_flash1(one), 1192);
  EXPECT_EQ(counted(*find_variant("flash1", backend_kind::cpu), one), 1192);
  EXPECT_EQ(counted(*find_variant("flash2", backend_kind::cpu), one), 1160);
}

// Negative controls: the comparison above is not vacuous. (1) A model without the per-row
// rescale exps (one per computed score only) differs from what flash2 counts by one exp per
// row per visited tile. (2) The sparse kernel, which walks only the tiles with a visible
// pair, counts fewer exps than flash2's model of the same local-window problem, so a kernel
// walking other tiles than its model is caught.
TEST(counted_exps_model, negative_controls_are_caught) {
  const variant& f2 = *find_variant("flash2", backend_kind::cpu);
  const problem p = shape(2, 2, 100, 130, 16, 16, "local:5,0");
  const std::int64_t c = counted(f2, p);
  const double scores_only = model_flops_executed_flash2(p) / (4.0 * p.d);
  std::int64_t row_tiles = 0;
  for (std::int64_t qt = 0; qt < num_q_tiles(p); ++qt)
    row_tiles += q_tile_rows(p, qt) * causal_bounded_kv_tiles(p, qt).size();
  EXPECT_NE(c, static_cast<std::int64_t>(scores_only));
  EXPECT_EQ(c - static_cast<std::int64_t>(scores_only), row_tiles * p.B * p.H);
  const variant& sp = *find_variant("sparse", backend_kind::cpu);
  ASSERT_TRUE(sp.supports(p).ok);
  EXPECT_LT(counted(sp, p), static_cast<std::int64_t>(f2.model(p).exps));
  EXPECT_EQ(counted(sp, p), static_cast<std::int64_t>(sp.model(p).exps));
}

// The linear rows: elu + 1 on every feature element they map, d per key and per row.
TEST(counted_exps_model, linear_counts_one_exp_per_feature_element) {
  const variant& v = *find_variant("linear", backend_kind::cpu);
  const problem p = shape(2, 1, 33, 33, 16, 16, "none");
  // state pass: B * Hkv * Nkv * d; output pass: B * H * Nq * d.
  EXPECT_EQ(counted(v, p), 2 * 1 * 33 * 8 + 2 * 2 * 33 * 8);
}

}  // namespace

namespace {

// docs/models.md's worked shape: flash3, bf16, B 1, H 16, N 8192, 128 x 128 tiles: N^2 scores
// and 4 rescales per row per key tile, 1.107e9 exps at either head dim; at the H200's
// 3.865e12 exp/s and 989.4 TFLOP/s the exp bound (0.2865 ms) exceeds the compute bound at
// d = 64 (0.2778 ms) and is 0.52 of it at d = 128.
TEST(counted_exps_model, worked_shape_hd64_and_hd128_on_an_h200) {
  for (std::int64_t d : {64, 128}) {
    problem p;
    p.B = 1;
    p.H = p.Hkv = 16;
    p.Nq = p.Nkv = 8192;
    p.d = d;
    p.type = dtype::bf16;
    problem g = p;
    g.Br = g.Bc = 128;
    const model_figures f = model_flash3_cuda(p, g, 1, tile_walk::visible);
    EXPECT_EQ(f.exps, 16.0 * (8192.0 * 8192 + 4.0 * 8192 * 64)) << d;
    const double exp_ms = f.exps / (132 * 16 * 1.83e9) * 1e3, compute_ms = f.flops / 989.4e12 * 1e3;
    EXPECT_NEAR(exp_ms, 0.2865, 0.0005) << d;
    EXPECT_NEAR(compute_ms, d == 64 ? 0.2778 : 0.5556, 0.0005) << d;
  }
}

}  // namespace

namespace {

// The JSON entry carries the model's exps (and null-free for every status: a skipped entry too).
TEST(counted_exps_model, entries_carry_the_models_exps) {
  const variant& v = *find_variant("flash2", backend_kind::cpu);
  configuration c;
  c.row = &v;
  c.p = shape(2, 1, 40, 70, 16, 32, "causal");
  c.group = "t";
  c.name = v.benchmark_name(c.p);
  c.sup = v.supports(c.p);
  measurement m;
  m.status = "skipped";
  m.message = "not run";
  const nlohmann::json e = make_entry(c, m);
  ASSERT_TRUE(e.contains("exps"));
  EXPECT_DOUBLE_EQ(e["exps"].get<double>(), v.model(c.p).exps);
  EXPECT_GT(e["exps"].get<double>(), 0);
}

}  // namespace

// The CPU flash2_splitkv row (kernels/cpu/flash2_splitkv.cpp): fp64 reference on decode
// shapes (Nq 1..16, ragged Nkv, every mask it claims, GQA ratios, head dims that are and
// are not multiples of 16, both tile layouts: fewer than 16 packed rows and 16 or more),
// the split merge against a single-split run, rows without a visible key, bf16, counted
// bytes and exps against the model at forced split counts, K/V read once per group.
// Negative controls: a merge that ignores the lse weights and a kernel reading the next
// group's K/V must fail the fp64 check; a model that left out the partials, or counted
// K/V per query head, must differ from the counted bytes.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "core/mask.hpp"
#include "harness/sweep.hpp"
#include "harness/tensors.hpp"
#include "kernels/cpu/flash2_splitkv.hpp"
#include "kernels/cpu/round_dtype.hpp"
#include "kernels/cpu/tile_gemm.hpp"
#include "kernels/models/models.hpp"
#include "kernels/reference/attention_reference.hpp"
#include "kernels/registry.hpp"

using namespace attnbench;
using cpu::splitkv_fault;

namespace {

struct run_result {
  host_outputs out;
  std::int64_t bytes = 0, exps = 0;
};

run_result run_splitkv(const host_inputs& in, int splits = 0, splitkv_fault fault = splitkv_fault::none) {
  auto r = cpu::make_flash2_splitkv_runner(in.p, true, splits, fault);
  r->set_inputs(in);
  r->poison_outputs();
  r->run();
  return {r->get_outputs(), r->counted_bytes(), r->counted_exps()};
}

error_report check(const host_inputs& in, const host_outputs& out) {
  const auto rows = all_rows(in.p);
  const reference_rows ref = reference_softmax(in, rows);
  return compare_rows(in.p, out.o, out.lse, rows, ref.o, ref.lse);
}

// Decode shapes cycling through Nq 1..16, masks, head layouts, lengths, head dims and
// split counts (0: the plan's own).
struct decode_case {
  problem p;
  int splits;
};
std::vector<decode_case> decode_cases() {
  const std::vector<const char*> masks = {"none",     "causal",          "local:5,0",          "local:3,9",
                                          "global:3", "causal+global:5", "local:4,0+global:2", "local:0,0"};
  const std::vector<std::pair<int, int>> heads = {{1, 1}, {4, 1}, {8, 2}, {6, 3}, {8, 8}, {16, 1}};
  const std::vector<std::int64_t> lengths = {1, 63, 130, 515};
  const std::vector<std::int64_t> dims = {8, 24, 64, 128};
  const std::vector<int> splits = {0, 1, 3, 7};
  std::vector<decode_case> out;
  for (int c = 0; c < 112; ++c) {
    const auto [h, hkv] = heads[(c / 2) % heads.size()];
    const std::int64_t nq = 1 + c % 16, nkv = lengths[(c / 3) % lengths.size()], d = dims[(c / 5) % dims.size()];
    out.push_back({make_problem(1 + c % 2, h, hkv, nq, nkv, d, dtype::fp32, masks[(c / 7) % masks.size()]),
                   splits[(c / 11) % splits.size()]});
  }
  return out;
}

TEST(flash2_splitkv, matches_fp64_over_decode_shapes) {
  std::set<std::int64_t> nqs, groups, dims;
  std::set<std::string> masks;
  std::set<int> split_counts;
  bool few_rows = false, many_rows = false;
  for (const auto& [p, splits] : decode_cases()) {
    const host_inputs in = make_inputs(p, 11 + p.Nq);
    const run_result r = run_splitkv(in, splits);
    const error_report e = check(in, r.out);
    const cuda::flash2_plan plan = cpu::splitkv_plan(p, splits);
    const std::string name = benchmark_name("flash2_splitkv", "cpu", p) + " splits " + std::to_string(plan.splits);
    EXPECT_TRUE(e.ok(1e-5)) << name << ": rel_l2 " << e.rel_l2 << ", nonfinite " << e.nonfinite;
    EXPECT_LT(e.lse_max_abs, 1e-4) << name;
    nqs.insert(p.Nq);
    groups.insert(p.group());
    dims.insert(p.d);
    masks.insert(to_string(p.mask));
    split_counts.insert(plan.splits);
    (p.group() * p.Nq < 16 ? few_rows : many_rows) = true;
  }
  EXPECT_EQ(nqs.size(), 16u);
  EXPECT_GE(groups.size(), 4u);
  EXPECT_EQ(dims.size(), 4u);
  EXPECT_EQ(masks.size(), 8u);
  EXPECT_GE(split_counts.size(), 4u);
  EXPECT_TRUE(few_rows && many_rows);
}

// More packed rows than the largest tile (256): G * Nq = 512 and 1024 rows in 2 and 4 row tiles,
// each covering a query range of every head of the group.
TEST(flash2_splitkv, matches_fp64_with_several_row_tiles_per_group) {
  for (const char* mask : {"causal", "local:3,9", "none"})
    for (auto [h, nq] : {std::pair{32, 16}, {64, 16}, {48, 11}})
      for (int splits : {0, 3}) {
        const problem p = make_problem(1, h, 1, nq, 100, 8, dtype::fp32, mask);
        const cuda::flash2_plan plan = cpu::splitkv_plan(p, splits);
        ASSERT_EQ(plan.geometry.Br, 256);
        const host_inputs in = make_inputs(p, 17);
        const run_result r = run_splitkv(in, splits);
        const error_report e = check(in, r.out);
        EXPECT_TRUE(e.ok(1e-5)) << benchmark_name("flash2_splitkv", "cpu", p) << ": rel_l2 " << e.rel_l2;
        EXPECT_EQ(r.bytes, static_cast<std::int64_t>(model_flash2_splitkv_cpu(p, plan).bytes));
      }
}

// Without AVX-512 (or with the tile products forced to cblas) the scalar scores and
// tile_gemm's cblas path run instead.
TEST(flash2_splitkv, matches_fp64_on_the_scalar_path) {
  cpu::tile_gemm_force_blas(true);
  for (const auto& [p, splits] : decode_cases()) {
    if (p.Nq % 5 != 0) continue;
    const host_inputs in = make_inputs(p, 3);
    const error_report e = check(in, run_splitkv(in, splits).out);
    EXPECT_TRUE(e.ok(1e-5)) << benchmark_name("flash2_splitkv", "cpu", p) << ": rel_l2 " << e.rel_l2;
  }
  cpu::tile_gemm_force_blas(false);
}

// The merge against one split of the same inputs: equal up to float rounding, including
// splits past the visited tiles (empty splits write lse -inf and O = 0).
TEST(flash2_splitkv, split_merge_matches_a_single_split_run) {
  for (const char* mask : {"causal", "local:70,0", "none"})
    for (auto [h, hkv, nq] : {std::tuple{8, 1, 1}, {8, 2, 4}, {4, 4, 16}}) {
      const problem p = make_problem(2, h, hkv, nq, 1000, 64, dtype::fp32, mask);
      const host_inputs in = make_inputs(p, 5);
      const run_result one = run_splitkv(in, 1);
      for (int splits : {2, 5, 16, 40}) {
        const run_result many = run_splitkv(in, splits);
        double max_o = 0, max_lse = 0;
        for (std::size_t x = 0; x < one.out.o.size(); ++x)
          max_o = std::max(max_o, double(std::abs(one.out.o[x] - many.out.o[x])));
        for (std::size_t x = 0; x < one.out.lse.size(); ++x)
          max_lse = std::max(max_lse, double(std::abs(one.out.lse[x] - many.out.lse[x])));
        const std::string name = benchmark_name("flash2_splitkv", "cpu", p) + " splits " + std::to_string(splits);
        EXPECT_LT(max_o, 2e-6) << name;  // |O| <~ 1 here
        EXPECT_LT(max_lse, 2e-6) << name;
        EXPECT_TRUE(check(in, many.out).ok(1e-5)) << name;
      }
    }
}

// Rows that see no key (causal with Nq > Nkv, a window past the keys): O = 0 and lse = -inf
// after the merge too, never NaN.
TEST(flash2_splitkv, rows_without_visible_keys_are_zero) {
  for (const char* mask : {"causal", "local:2,0"})
    for (int splits : {1, 3}) {
      const problem p = make_problem(1, 4, 2, 16, 10, 32, dtype::fp32, mask);  // i' = i - 6
      const host_inputs in = make_inputs(p, 9);
      const run_result r = run_splitkv(in, splits);
      std::int64_t empty = 0;
      for (std::int64_t h = 0; h < p.H; ++h)
        for (std::int64_t i = 0; i < p.Nq; ++i) {
          if (visible_keys(p, i) > 0) continue;
          ++empty;
          const std::int64_t row = h * p.Nq + i;
          for (std::int64_t x = 0; x < p.d; ++x) ASSERT_EQ(r.out.o[row * p.d + x], 0.0f) << mask << " row " << i;
          ASSERT_TRUE(std::isinf(r.out.lse[row]) && r.out.lse[row] < 0) << mask << " row " << i;
        }
      EXPECT_EQ(empty, 4 * 6) << mask;
      EXPECT_TRUE(check(in, r.out).ok(1e-5)) << mask << " splits " << splits;
    }
}

TEST(flash2_splitkv, bf16_writes_o_in_bf16) {
  for (int splits : {1, 4}) {
    const problem p = make_problem(2, 8, 2, 3, 333, 64, dtype::bf16, "causal");
    host_inputs in = make_inputs(p, 3);
    for (auto* t : {&in.q, &in.k, &in.v})
      for (float& x : *t) x = cpu::bf16_round(x);
    const run_result r = run_splitkv(in, splits);
    const error_report e = check(in, r.out);
    EXPECT_TRUE(e.ok(1.0 / 256)) << "rel_l2 " << e.rel_l2;
    EXPECT_GT(e.rel_l2, 1e-4);  // O was rounded
    EXPECT_LT(e.lse_max_abs, 1e-4);
    for (float x : r.out.o) ASSERT_EQ(cpu::bf16_round(x), x);
  }
}

// Counted = model at forced split counts too (the registry grid checks the plan's own count).
TEST(flash2_splitkv, counted_bytes_and_exps_equal_the_model_at_every_split_count) {
  int checked = 0;
  for (const char* mask : {"causal", "local:40,0+global:3", "none"})
    for (auto [h, hkv, nq, nkv] : {std::tuple{8, 1, 1, 700}, {8, 2, 5, 129}, {6, 3, 16, 64}, {2, 2, 7, 1}})
      for (int splits : {1, 2, 3, 8}) {
        const problem p = make_problem(2, h, hkv, nq, nkv, 24, dtype::fp32, mask);
        const run_result r = run_splitkv(make_inputs(p, 4), splits);
        const model_figures m = model_flash2_splitkv_cpu(p, cpu::splitkv_plan(p, splits));
        const std::string name = benchmark_name("flash2_splitkv", "cpu", p) + " splits " + std::to_string(splits);
        ASSERT_EQ(r.bytes, static_cast<std::int64_t>(m.bytes)) << name;
        ASSERT_EQ(r.exps, static_cast<std::int64_t>(m.exps)) << name;
        ++checked;
      }
  EXPECT_EQ(checked, 48);
}

// K/V once per group, by hand: B 1, H 8, Nq 1, Nkv 4096, d 128, fp32, one split: K/V of the
// Hkv heads once (2 * 4096 * 128 * 4 each), Q and O rows of all 8 heads, 8 lse. At Hkv = 1
// that is 1/8 of flash2's K/V bytes (it reads K/V once per query head).
TEST(flash2_splitkv, kv_bytes_once_per_group) {
  for (std::int64_t hkv : {1, 2, 8}) {
    const problem p = make_problem(1, 8, hkv, 1, 4096, 128, dtype::fp32, "causal");
    const double kv = 2.0 * 4096 * 128 * 4, q_o_lse = 8.0 * (128 * 4 + 128 * 4 + 4);
    EXPECT_EQ(model_flash2_splitkv_cpu(p, cpu::splitkv_plan(p, 1)).bytes, hkv * kv + q_o_lse) << hkv;
    EXPECT_EQ(model_bytes_flash2(p), 8 * kv + q_o_lse) << hkv;
  }
}

// The plan: the group's packed rows in one tile (Br a power of two, 16 .. 256), 64-key
// tiles, and splits that give every thread work when the groups alone cannot.
TEST(flash2_splitkv, plan_packs_the_group_and_splits_by_threads) {
  const variant& v = *find_variant("flash2_splitkv", backend_kind::cpu);
  const problem a = make_problem(1, 8, 1, 4, 16384, 128, dtype::fp32, "causal");
  EXPECT_EQ(v.resolved(a).Br, 32);
  EXPECT_EQ(v.resolved(a).Bc, 64);
  EXPECT_EQ(v.benchmark_name(v.resolved(a)),
            "flash2_splitkv/cpu/fp32/B:1/H:8/Hkv:1/Nq:4/Nkv:16384/d:128/mask:causal/Br:32/Bc:64");
  EXPECT_EQ(v.resolved(make_problem(1, 8, 8, 1, 64, 64, dtype::fp32, "none")).Br, 16);
  EXPECT_EQ(v.resolved(make_problem(1, 64, 1, 16, 64, 64, dtype::fp32, "none")).Br, 256);
  const int t = cpu::max_threads();
  EXPECT_EQ(cpu::splitkv_plan(a).splits, std::min(4 * t, 256));  // one group: 4 tasks per thread
  EXPECT_EQ(cpu::splitkv_plan(make_problem(4 * t, 8, 8, 1, 16384, 128, dtype::fp32, "causal")).splits, 1);
  // at least 4 key tiles per split: 300 keys are 5 tiles
  EXPECT_EQ(cpu::splitkv_plan(make_problem(1, 8, 1, 1, 300, 128, dtype::fp32, "causal")).splits, 1);
  EXPECT_EQ(cpu::splitkv_plan(a, 3).splits, 3);
  EXPECT_FALSE(v.supports(make_problem(1, 8, 1, 17, 64, 64, dtype::fp32, "causal")).ok);
}

// The quick preset's decode group names no row: it runs every row of the backend, this one
// included, on all 8 of its problems (Hkv H and 1, Nq 1 and 4, Nkv 4k and 16k), named by the
// tile that runs (Br 16 for G Nq <= 16, 32 for 8 x 4).
TEST(flash2_splitkv, quick_decode_group_runs_it) {
  std::set<std::string> names;
  for (const configuration& c : expand(make_preset("quick"), registry(), backend_kind::cpu))
    if (c.group == "decode" && c.row->name == "flash2_splitkv") {
      EXPECT_TRUE(c.sup.ok) << c.name << ": " << c.sup.reason;
      names.insert(c.name);
    }
  EXPECT_EQ(names.size(), 8u);
  EXPECT_TRUE(names.count("flash2_splitkv/cpu/fp32/B:1/H:8/Hkv:1/Nq:4/Nkv:16384/d:128/mask:causal/Br:32/Bc:64"));
  EXPECT_TRUE(names.count("flash2_splitkv/cpu/fp32/B:1/H:8/Hkv:8/Nq:1/Nkv:4096/d:128/mask:causal/Br:16/Bc:64"));
}

// ---- negative controls ------------------------------------------------------------------

// A merge that averages the splits' partial O without their lse weights is caught by the
// fp64 check (and differs from the single-split run).
TEST(flash2_splitkv, negative_control_unweighted_merge_is_caught) {
  const problem p = make_problem(1, 8, 2, 4, 1000, 64, dtype::fp32, "causal");
  const host_inputs in = make_inputs(p, 5);
  ASSERT_TRUE(check(in, run_splitkv(in, 4).out).ok(1e-5));
  const error_report e = check(in, run_splitkv(in, 4, splitkv_fault::unweighted_merge).out);
  EXPECT_FALSE(e.ok(1e-5));
  EXPECT_GT(e.rel_l2, 1e-3);
}

// Query heads reading the next group's K/V are caught at every GQA ratio with Hkv > 1.
TEST(flash2_splitkv, negative_control_wrong_kv_group_is_caught) {
  for (auto [h, hkv] : {std::pair{4, 2}, {8, 8}, {6, 3}}) {
    const problem p = make_problem(1, h, hkv, 3, 200, 32, dtype::fp32, "none");
    const host_inputs in = make_inputs(p, 6);
    ASSERT_TRUE(check(in, run_splitkv(in).out).ok(1e-5));
    const error_report e = check(in, run_splitkv(in, 0, splitkv_fault::wrong_kv_group).out);
    EXPECT_FALSE(e.ok(1e-5)) << h << "/" << hkv;
    EXPECT_GT(e.rel_l2, 0.1) << h << "/" << hkv;
  }
}

// The byte check is not vacuous: with splits the counted bytes exceed a model without the
// partials (one split) by exactly the partials written and read, and flash2's model (K/V
// per query head) differs from what the packed kernel counts at G > 1.
TEST(flash2_splitkv, negative_control_models_that_miss_traffic_are_caught) {
  const problem p = make_problem(1, 8, 2, 2, 1000, 64, dtype::fp32, "causal");
  const run_result r = run_splitkv(make_inputs(p, 4), 3);
  const double one_split = model_flash2_splitkv_cpu(p, cpu::splitkv_plan(p, 1)).bytes;
  EXPECT_NE(r.bytes, static_cast<std::int64_t>(one_split));
  // partials: 3 splits write and the merge reads (d + 1) fp32 per row, 16 rows; and each
  // of the 3 splits reads the Q rows, 2 more times than one split
  EXPECT_EQ(r.bytes - static_cast<std::int64_t>(one_split), 2 * 3 * 16 * 65 * 4 + 16 * 64 * 4 * 2);
  EXPECT_NE(r.bytes, static_cast<std::int64_t>(model_bytes_flash2(p)));
}

}  // namespace

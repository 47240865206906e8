#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "harness/sweep.hpp"
#include "harness_test_rows.hpp"

using namespace attnbench;

namespace {

sweep_spec one_group(sweep_axes a) { return {"t", {{"g", std::move(a)}}}; }

std::string temp_file(const std::string& name, const std::string& text) {
  const auto p = std::filesystem::temp_directory_path() / ("attnbench_test_sweep_" + name);
  std::ofstream(p) << text;
  return p.string();
}

}  // namespace

TEST(sweep, mask_list_keeps_local_commas) {
  const auto m = parse_mask_list("none,causal,local:255,0,local:127,127+global:16,global:4");
  ASSERT_EQ(m.size(), 5u);
  EXPECT_EQ(to_string(m[0]), "none");
  EXPECT_EQ(to_string(m[1]), "causal");
  EXPECT_EQ(to_string(m[2]), "local:255,0");
  EXPECT_EQ(to_string(m[3]), "local:127,127+global:16");
  EXPECT_EQ(to_string(m[4]), "none+global:4");
  EXPECT_THROW(parse_mask_list("none,,causal"), input_error);
  EXPECT_THROW(parse_mask_list("local:5"), input_error);
  EXPECT_THROW(parse_mask_list("causal,"), input_error);
  EXPECT_THROW(parse_mask_list("diagonal"), input_error);
}

TEST(sweep, other_lists) {
  EXPECT_EQ(parse_int_list("512,1024", "seq"), (std::vector<std::int64_t>{512, 1024}));
  EXPECT_THROW(parse_int_list("512,,1024", "seq"), input_error);
  EXPECT_THROW(parse_int_list("0", "seq"), input_error);
  EXPECT_THROW(parse_int_list("-4", "seq"), input_error);
  EXPECT_THROW(parse_int_list("12a", "seq"), input_error);
  const auto b = parse_block_list("64x64,128x32");
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[1], (tile_shape{128, 32}));
  EXPECT_THROW(parse_block_list("64"), input_error);
  EXPECT_THROW(parse_block_list("64x"), input_error);
  const auto kv = parse_kv_heads_list("8,H,H/4");
  ASSERT_EQ(kv.size(), 3u);
  EXPECT_EQ(kv[0].value, 8);
  EXPECT_EQ(kv[1].divisor, 1);
  EXPECT_EQ(kv[2].divisor, 4);
  EXPECT_THROW(parse_kv_heads_list("H/0"), input_error);
  EXPECT_EQ(parse_dtype_list("fp32,bf16").size(), 2u);
  EXPECT_THROW(parse_dtype_list("fp64"), input_error);
}

TEST(sweep, expansion_counts_and_defaults) {
  sweep_axes a;
  a.variant = {"t_good", "t_nan"};
  a.seq = {128, 256};
  a.head_dim = {64, 128};
  a.mask = parse_mask_list("none,causal,local:8,0");
  const auto c = expand(one_group(a), testing_rows::rows(), backend_kind::cpu);
  EXPECT_EQ(c.size(), 2u * 2 * 3 * 2);
  std::set<std::string> names;
  for (const auto& x : c) {
    names.insert(x.name);
    EXPECT_EQ(x.group, "g");
    EXPECT_EQ(x.p.Nq, x.p.Nkv);
    EXPECT_EQ(x.p.H, 8);  // defaults
    EXPECT_EQ(x.p.Hkv, 8);
    EXPECT_EQ(x.p.B, 1);
    EXPECT_EQ(x.p.type, dtype::fp32);
    EXPECT_EQ(x.sup.ok, x.p.mask.kind != mask_kind::local);
  }
  EXPECT_EQ(names.size(), c.size());
  // Variants innermost: consecutive configurations share the problem.
  EXPECT_EQ(c[0].p, c[1].p);
  // cuda default dtypes: bf16 then fp16; cpu rows are ignored there.
  EXPECT_TRUE(expand(one_group(a), testing_rows::rows(), backend_kind::cuda).empty());
}

// A row whose kernels take no tiles (resolve = untiled_problem: the unfused CUDA rows, cuBLAS,
// cuDNN) runs once in a sweep over --block, named at the default tile; a tiled row runs per tile.
TEST(sweep, untiled_rows_run_once_per_tile_sweep) {
  variant untiled = testing_rows::make_row("t_untiled", testing_rows::mode::good);
  untiled.resolve = untiled_problem;
  const std::vector<variant> rows = {testing_rows::make_row("t_tiled", testing_rows::mode::good), untiled};
  sweep_axes a;
  a.variant = {"t_tiled", "t_untiled"};
  a.block = parse_block_list("128x128,64x32,32x64");
  std::map<std::string, std::vector<std::string>> names;
  for (const auto& c : expand(one_group(a), rows, backend_kind::cpu)) names[c.row->name].push_back(c.name);
  ASSERT_EQ(names["t_tiled"].size(), 3u);
  EXPECT_NE(names["t_tiled"][0].find("/Br:128/Bc:128"), std::string::npos);
  ASSERT_EQ(names["t_untiled"].size(), 1u);
  EXPECT_NE(names["t_untiled"][0].find("/Br:64/Bc:64"), std::string::npos);
  EXPECT_EQ(untiled_problem(make_problem(1, 2, 2, 8, 8, 8, dtype::fp32, "none", 16, 32)).Br, default_tile);
}

// A product of millions of configurations is refused before any is
// built, naming the cap and the flag that raises it.
TEST(sweep, a_sweep_beyond_the_configuration_cap_is_refused) {
  sweep_axes a;
  a.variant = {"t_good", "t_nan"};
  a.seq = {128, 256};
  a.head_dim = {64, 128};
  a.mask = parse_mask_list("none,causal,local:8,0");  // 24 configurations
  EXPECT_EQ(expand(one_group(a), testing_rows::rows(), backend_kind::cpu, 24).size(), 24u);
  try {
    expand(one_group(a), testing_rows::rows(), backend_kind::cpu, 23);
    ADD_FAILURE() << "24 configurations passed a cap of 23";
  } catch (const input_error& e) {
    EXPECT_NE(std::string(e.what()).find("more than 23 configurations"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--max-configurations"), std::string::npos) << e.what();
  }
  // 10^4 values on each of three axes: 10^12, refused at the default cap at once.
  sweep_axes big;
  big.variant = {"t_good"};
  for (std::int64_t i = 1; i <= 10000; ++i) {
    big.nq.push_back(i);
    big.nkv.push_back(i);
    big.batch.push_back(i);
  }
  EXPECT_THROW(expand(one_group(big), testing_rows::rows(), backend_kind::cpu), input_error);
}

TEST(sweep, nq_nkv_product_and_relative_kv_heads) {
  sweep_axes a;
  a.variant = {"t_good"};
  a.nq = {1, 4};
  a.nkv = {1024, 4096, 8192};
  a.heads = {32};
  a.kv_heads = parse_kv_heads_list("H,H/4,H/8,1");
  const auto c = expand(one_group(a), testing_rows::rows(), backend_kind::cpu);
  ASSERT_EQ(c.size(), 2u * 3 * 4);
  std::set<std::int64_t> hkv;
  for (const auto& x : c) hkv.insert(x.p.Hkv);
  EXPECT_EQ(hkv, (std::set<std::int64_t>{32, 8, 4, 1}));
  a.heads = {6};
  EXPECT_THROW(expand(one_group(a), testing_rows::rows(), backend_kind::cpu), input_error);
}

TEST(sweep, invalid_problems_and_unknown_variants_throw) {
  sweep_axes a;
  a.variant = {"t_good"};
  a.heads = {8};
  a.kv_heads = {{3, 0}};
  EXPECT_THROW(expand(one_group(a), testing_rows::rows(), backend_kind::cpu), input_error);
  a.kv_heads = {};
  a.head_dim = {100};
  EXPECT_THROW(expand(one_group(a), testing_rows::rows(), backend_kind::cpu), input_error);
  a.head_dim = {64};
  a.block = {{48, 64}};
  EXPECT_THROW(expand(one_group(a), testing_rows::rows(), backend_kind::cpu), input_error);
  a.block = {};
  a.variant = {"nope"};
  EXPECT_THROW(expand(one_group(a), testing_rows::rows(), backend_kind::cpu), input_error);
}

TEST(sweep, overrides_replace_axes_in_every_group) {
  sweep_spec s = make_preset("quick");
  sweep_axes o;
  o.seq = {512};
  o.variant = {"t_good"};
  o.mask = parse_mask_list("causal");
  apply_overrides(s, o);
  for (const auto& g : s.groups) {
    EXPECT_EQ(g.axes.seq, std::vector<std::int64_t>{512});
    EXPECT_TRUE(g.axes.nq.empty());
    EXPECT_TRUE(g.axes.nkv.empty());
  }
  const auto c = expand(s, testing_rows::rows(), backend_kind::cpu);
  // Duplicates across groups are dropped: the first group keeps the name.
  std::set<std::string> names;
  for (const auto& x : c) EXPECT_TRUE(names.insert(x.name).second);
  EXPECT_EQ(c.front().group, "seq");
  for (const auto& x : c) EXPECT_EQ(x.p.Nq, 512);
}

TEST(sweep, sweep_file_round_trip_and_errors) {
  const std::string good = temp_file("good.json", R"({"name": "mine", "groups": [
    {"name": "a", "variant": ["t_good"], "seq": [128, 256], "head_dim": 64, "mask": ["none", "local:3,0+global:2"]},
    {"name": "b", "variant": "t_good", "nq": [1], "nkv": [512], "kv-heads": ["H/2", 1], "block": ["32x64"], "dtype": "fp32"}]})");
  const sweep_spec s = load_sweep_file(good);
  EXPECT_EQ(s.name, "mine");
  ASSERT_EQ(s.groups.size(), 2u);
  EXPECT_EQ(s.groups[0].axes.mask[1].global, 2);
  const auto c = expand(s, testing_rows::rows(), backend_kind::cpu);
  EXPECT_EQ(c.size(), 2u * 2 + 2);
  // to_json / parse_sweep_json round trip gives the same configurations.
  const auto again =
      expand(parse_sweep_json(nlohmann::json::parse(to_json(s).dump()), "x"), testing_rows::rows(), backend_kind::cpu);
  ASSERT_EQ(again.size(), c.size());
  for (std::size_t i = 0; i < c.size(); ++i) EXPECT_EQ(again[i].name, c[i].name);
  // A bare list of groups works too.
  EXPECT_EQ(load_sweep_file(temp_file("list.json", R"([{"seq": 64}])")).groups.size(), 1u);

  EXPECT_THROW(load_sweep_file("/nonexistent/attnbench.json"), input_error);
  EXPECT_THROW(load_sweep_file(temp_file("bad.json", "{not json")), input_error);
  EXPECT_THROW(load_sweep_file(temp_file("axis.json", R"([{"sequence": [1]}])")), input_error);
  EXPECT_THROW(load_sweep_file(temp_file("val.json", R"([{"seq": [0]}])")), input_error);
  EXPECT_THROW(load_sweep_file(temp_file("empty.json", R"([])")), input_error);
  EXPECT_THROW(load_sweep_file(temp_file("type.json", R"([{"seq": [1.5]}])")), input_error);
}

TEST(sweep, shards_partition_the_configurations) {
  const auto all = expand(make_preset("quick"), registry(), backend_kind::cpu);
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(select(all, "", {0, 1}).size(), all.size());
  for (std::int64_t n : {2, 3, 4, 7}) {
    std::multiset<std::string> seen;
    for (std::int64_t i = 0; i < n; ++i)
      for (const auto& c : select(all, "", {i, n})) seen.insert(c.name);
    EXPECT_EQ(seen.size(), all.size()) << n;
    std::set<std::string> unique(seen.begin(), seen.end());
    EXPECT_EQ(unique.size(), all.size()) << n;  // disjoint
  }
  EXPECT_EQ(parse_shard("1/4").index, 1);
  EXPECT_EQ(parse_shard("0/1").count, 1);
  for (const char* bad : {"4/4", "x", "1/0", "-1/4", "1/", "/2"}) EXPECT_THROW(parse_shard(bad), input_error) << bad;
}

TEST(sweep, filter_selects_by_regex) {
  const auto all = expand(make_preset("quick"), registry(), backend_kind::cpu);
  const auto f = select(all, "^flash2/.*mask:causal/", {0, 1});
  ASSERT_FALSE(f.empty());
  for (const auto& c : f) EXPECT_EQ(c.row->name, "flash2");
  EXPECT_THROW(select(all, "([", {0, 1}), input_error);
}

TEST(sweep, presets_cover_every_cpu_variant_and_chart_group) {
  EXPECT_THROW(make_preset("huge"), input_error);
  for (const auto& name : preset_names())
    EXPECT_NO_THROW(expand(make_preset(name), registry(), backend_kind::cpu)) << name;
  const auto quick = expand(make_preset("quick"), registry(), backend_kind::cpu);
  std::set<std::string> runs, groups;
  for (const auto& c : quick) {
    groups.insert(c.group);
    if (c.sup.ok) runs.insert(c.row->name);
  }
  for (const auto& v : registry())
    if (v.backend == backend_kind::cpu) EXPECT_TRUE(runs.count(v.name)) << v.name << " never runs in quick";
  EXPECT_EQ(groups, (std::set<std::string>{"seq", "tiles", "masks", "density", "gqa", "decode", "fp8", "alternatives",
                                           "comparison", "train"}));
}

// The train groups: every CPU row claiming bwd runs bwd and fwd_bwd in quick
// and full; its fwd entries on the same problems exist (in train or in the seq group).
TEST(sweep, train_groups_run_each_backward_row_at_every_pass) {
  for (const char* preset : {"quick", "full"}) {
    std::set<std::string> names;
    std::map<std::string, std::set<pass_kind>> passes;  // row -> passes run in train
    const auto all = expand(make_preset(preset), registry(), backend_kind::cpu);
    for (const auto& c : all) names.insert(c.name);
    for (const auto& c : all) {
      if (c.group != "train" || !c.sup.ok) continue;
      passes[c.row->name].insert(c.p.pass);
      problem f = c.p;
      f.pass = pass_kind::fwd;
      EXPECT_TRUE(names.count(c.row->benchmark_name(f))) << c.name << ": no fwd entry beside it";
    }
    for (const auto& v : registry())
      if (v.backend == backend_kind::cpu && (v.caps.passes & pass_bwd))
        EXPECT_TRUE(passes[v.name].count(pass_kind::bwd) && passes[v.name].count(pass_kind::fwd_bwd))
            << preset << ": " << v.name;
    // naive and flash2, and sparse on the block-sparse mask; the other rows are skipped with the reason
    EXPECT_EQ(passes.size(), 3u) << preset;
  }
}

// The fp8 groups: e4m3 beside bf16 on the same shapes. On the CPU,
// flash2 at both dtypes and nothing skipped; on CUDA (rows standing in for
// flash3, flash3_fp8 and flash2), flash3_fp8 at e4m3 and flash3 at bf16 on
// every one of its shapes (in full, the seq group already runs flash3 at
// d 64/128 on the same shapes and keeps those names: the report pairs by
// problem, not by group), hd 64/128/256 with hd 128 non-causal N >= 4096
// among them, and nothing of the CPU-sized group (CUDA's flash2 is not in fp8).
static std::string shape_of(const configuration& c) {  // the name without variant, backend, dtype
  const std::string s = c.name.substr(c.name.find('/', c.name.find('/') + 1) + 1);
  return s.substr(s.find('/'));
}

TEST(sweep, fp8_groups_put_e4m3_beside_bf16) {
  for (const char* preset : {"quick", "full"}) {
    std::map<std::string, std::set<dtype>> cpu;
    for (const auto& c : expand(make_preset(preset), registry(), backend_kind::cpu)) {
      if (c.group != "fp8") continue;
      EXPECT_TRUE(c.sup.ok) << c.name << ": " << c.sup.reason;
      EXPECT_EQ(c.row->name, "flash2") << c.name;
      cpu[shape_of(c)].insert(c.p.type);
    }
    EXPECT_GE(cpu.size(), 4u) << preset;
    for (const auto& [shape, types] : cpu) EXPECT_EQ(types, (std::set<dtype>{dtype::bf16, dtype::e4m3})) << shape;

    std::vector<variant> rows;
    for (const char* name : {"flash2", "flash3", "flash3_fp8"}) {
      variant v = testing_rows::make_row(name, testing_rows::mode::good);
      v.backend = backend_kind::cuda;
      v.caps.dtypes = {std::string(name) == "flash3_fp8" ? dtype::e4m3 : dtype::bf16};
      rows.push_back(v);
    }
    for (const char* name : {"selective_scan", "ssd", "wkv", "wkv6"}) {  // the full preset names them on cuda
      variant v = testing_rows::make_row(name, testing_rows::mode::good);
      v.backend = backend_kind::cuda;
      rows.push_back(v);
    }
    std::set<std::string> fp8_shapes, flash3_bf16_shapes;
    std::set<std::int64_t> dims;
    bool target = false;
    for (const auto& c : expand(make_preset(preset), rows, backend_kind::cuda)) {
      if (c.row->name == "flash3" && c.p.type == dtype::bf16) flash3_bf16_shapes.insert(shape_of(c));
      if (c.group != "fp8") continue;
      EXPECT_TRUE(c.sup.ok) << c.name << ": " << c.sup.reason;
      EXPECT_NE(c.row->name, "flash2") << c.name;
      EXPECT_EQ(c.row->name == "flash3_fp8", c.p.type == dtype::e4m3) << c.name;
      if (c.p.type != dtype::e4m3) continue;
      fp8_shapes.insert(shape_of(c));
      dims.insert(c.p.d);
      target |= c.p.d == 128 && c.p.mask.is_none() && c.p.Nq >= 4096;
    }
    EXPECT_GE(fp8_shapes.size(), 18u) << preset;
    for (const auto& shape : fp8_shapes) EXPECT_TRUE(flash3_bf16_shapes.count(shape)) << preset << shape;
    EXPECT_EQ(dims, (std::set<std::int64_t>{64, 128, 256})) << preset;
    EXPECT_TRUE(target) << preset;
  }
}

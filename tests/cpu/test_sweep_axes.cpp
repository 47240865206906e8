// The axis table drives the CLI, sweep files, JSON, overrides and expansion:
// these tests iterate the table, so a new axis is covered once it has an
// example here (the tests fail until it does).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>

#include "harness/cli.hpp"
#include "harness/sweep.hpp"
#include "harness_test_rows.hpp"

using namespace attnbench;
using nlohmann::json;

namespace {

struct axis_example {
  std::string good;   // a CLI list
  std::size_t count;  // items in it
  std::string bad;    // an item the axis rejects, named by the error
};

const std::map<std::string, axis_example, std::less<>> examples = {
    {"dtype", {"fp32,bf16,e4m3", 3, "fp64"}},
    {"batch", {"1,2", 2, "12a"}},
    {"heads", {"4,8,16", 3, "-4"}},
    {"kv-heads", {"4,H,H/2", 3, "H/0"}},
    {"head-dim", {"32,64", 2, "6x"}},
    {"seq", {"128,256", 2, "0"}},
    {"nq", {"1,4", 2, "1.5"}},
    {"nkv", {"512", 1, "big"}},
    {"mask", {"none,local:255,0,causal+global:4", 3, "local:5"}},
    {"block", {"32x64,64x64", 2, "64*64"}},
    {"state", {"16,64", 2, "0"}},
    {"groups", {"1,2", 2, "two"}},
    {"pass", {"fwd,bwd,fwd_bwd", 3, "backward"}},
    {"variant", {"t_good,tag:tiled,cuda:t_good", 3, "tag:frob"}},
};

const axis_example& example(const sweep_axis* a) {
  const auto it = examples.find(a->name());
  if (it == examples.end()) throw std::runtime_error("no example for axis " + std::string(a->name()));
  return it->second;
}

std::size_t given_axes(const sweep_axes& a) {
  std::size_t n = 0;
  for (const sweep_axis* x : sweep_axis_table()) n += x->size(a) > 0;
  return n;
}

void expect_one_line_naming(const std::function<void()>& f, const std::string& value, const std::string& what) {
  try {
    f();
    ADD_FAILURE() << what << ": no input_error for '" << value << "'";
  } catch (const input_error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("'" + value + "'"), std::string::npos) << what << ": " << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << what << ": " << m;
  }
}

}  // namespace

TEST(sweep_axes, every_axis_has_a_flag_and_an_example) {
  ASSERT_EQ(sweep_axis_table().size(), examples.size());
  for (const sweep_axis* a : sweep_axis_table()) {
    EXPECT_NO_THROW(example(a)) << a->name();
    EXPECT_EQ(find_axis(a->name()), a);
    EXPECT_EQ(find_axis_by_flag(a->flag()), a);
    EXPECT_EQ(a->flag(), "--" + std::string(a->name()));
  }
  EXPECT_EQ(find_axis("sequence"), nullptr);
  EXPECT_EQ(sweep_axis_table().back()->name(), "variant");  // innermost
}

TEST(sweep_axes, table_drives_cli_file_and_json_for_every_axis) {
  for (const sweep_axis* a : sweep_axis_table()) {
    const axis_example& ex = example(a);
    const std::string name(a->name());
    const sweep_axes cli = parse_sweep_cli({a->flag(), ex.good}).overrides;
    EXPECT_EQ(a->size(cli), ex.count) << name;
    EXPECT_EQ(given_axes(cli), 1u) << name;
    EXPECT_FALSE(cli.empty()) << name;
    EXPECT_EQ(parse_sweep_cli({a->flag() + "=" + ex.good}).overrides, cli) << name;

    // to_json writes the axis under its name; reading that back gives the same axes.
    const sweep_spec s{"t", {{"g", cli}}};
    const auto j = to_json(s);
    ASSERT_TRUE(j["groups"][0].contains(name)) << j.dump();
    EXPECT_EQ(j["groups"][0][name].size(), ex.count) << name;
    const sweep_spec back = parse_sweep_json(json::parse(j.dump()), "x");
    EXPECT_EQ(back.groups.at(0).axes, cli) << name;

    // A sweep file with '_' for '-' and a single value (not a list).
    json one = json::array({json::object()});
    std::string key = name;
    std::replace(key.begin(), key.end(), '-', '_');
    one[0][key] = j["groups"][0][name][0];
    EXPECT_EQ(a->size(parse_sweep_json(one, "y").groups.at(0).axes), 1u) << name;

    // An override replaces the axis in every group of a preset.
    sweep_spec p = make_preset("quick");
    apply_overrides(p, cli);
    for (const auto& g : p.groups) {
      const sweep_spec only{"t", {{"g", g.axes}}};
      EXPECT_EQ(to_json(only)["groups"][0][name], j["groups"][0][name]) << name << " in " << g.name;
    }
  }
}

TEST(sweep_axes, a_bad_item_in_every_axis_is_one_line_naming_it) {
  for (const sweep_axis* a : sweep_axis_table()) {
    const std::string& bad = example(a).bad;
    const std::string name(a->name());
    expect_one_line_naming([&] { parse_sweep_cli({a->flag(), bad}); }, bad, "cli " + name);
    expect_one_line_naming([&] { parse_sweep_cli({a->flag(), example(a).good + "," + bad}); }, bad, "cli list " + name);
    json file = json::array({json::object({{name, json::array({bad})}})});
    expect_one_line_naming([&] { parse_sweep_json(file, "f.json"); }, bad, "file " + name);
  }
}

TEST(sweep_axes, empty_items_are_rejected_on_every_axis) {
  for (const sweep_axis* a : sweep_axis_table())
    EXPECT_THROW(parse_sweep_cli({a->flag(), example(a).good + ",,"}), input_error) << a->name();
}

TEST(sweep_axes, expansion_count_is_the_product_of_axis_sizes) {
  sweep_axes a;
  a.variant = {"t_good", "t_nan"};
  a.type = {dtype::fp32, dtype::fp16};
  a.batch = {1, 2};
  a.heads = {4, 8};
  a.kv_heads = parse_kv_heads_list("H,H/2");
  a.head_dim = {16, 32};
  a.nq = {1, 4};
  a.nkv = {64, 128, 256};
  a.mask = parse_mask_list("none,causal");
  a.block = parse_block_list("16x16,32x32");
  const expand_context ctx{testing_rows::rows(), backend_kind::cpu};
  std::size_t product = 1;
  for (const sweep_axis* x : sweep_axis_table()) product *= x->points(a, ctx).size();
  const auto c = expand({"t", {{"g", a}}}, testing_rows::rows(), backend_kind::cpu);
  EXPECT_EQ(product, 2u * 2 * 2 * 2 * 2 * 2 * 3 * 2 * 2 * 2);
  EXPECT_EQ(c.size(), product);
  // Table order: dtype outermost, then batch ..., block, variants innermost.
  EXPECT_EQ(c.front().p.type, dtype::fp32);
  EXPECT_EQ(c.back().p.type, dtype::fp16);
  EXPECT_EQ(c[0].p, c[1].p);
  EXPECT_EQ(c[0].row->name, "t_good");
  EXPECT_EQ(c[1].row->name, "t_nan");
  EXPECT_EQ(c[2].p.Br, 32);
  EXPECT_EQ(c[4].p.mask.kind, mask_kind::causal);
  EXPECT_EQ(c[8].p.Nkv, 128);
  EXPECT_EQ(c[24].p.Nq, 4);

  // seq alone pairs Nq = Nkv: a product over seq only, not seq x seq.
  sweep_axes s;
  s.variant = {"t_good"};
  s.seq = {64, 128, 256};
  const auto paired = expand({"t", {{"g", s}}}, testing_rows::rows(), backend_kind::cpu);
  ASSERT_EQ(paired.size(), 3u);
  for (const auto& x : paired) EXPECT_EQ(x.p.Nq, x.p.Nkv);
  // With nq given, seq supplies Nkv.
  s.nq = {1, 2};
  EXPECT_EQ(expand({"t", {{"g", s}}}, testing_rows::rows(), backend_kind::cpu).size(), 2u * 3);
}

TEST(sweep_axes, overrides_clear_what_the_table_says) {
  sweep_spec s = make_preset("decode");
  ASSERT_FALSE(s.groups[0].axes.nq.empty());
  sweep_axes o;
  o.seq = {256};
  apply_overrides(s, o);
  EXPECT_TRUE(s.groups[0].axes.nq.empty());
  EXPECT_TRUE(s.groups[0].axes.nkv.empty());
  // --seq with --nq: seq clears the preset's nq, the given nq stays.
  s = make_preset("decode");
  o.nq = {2};
  apply_overrides(s, o);
  EXPECT_EQ(s.groups[0].axes.nq, std::vector<std::int64_t>{2});
  EXPECT_TRUE(s.groups[0].axes.nkv.empty());
  EXPECT_EQ(s.groups[0].axes.seq, std::vector<std::int64_t>{256});
}

TEST(sweep_axes, leaves_go_through_make_problem) {
  sweep_axes a;
  a.variant = {"t_good"};
  a.seq = {100};
  a.heads = {6};
  a.kv_heads = parse_kv_heads_list("H/2");
  a.mask = parse_mask_list("local:3,1+global:2");
  a.block = parse_block_list("16x32");
  const auto c = expand({"t", {{"g", a}}}, testing_rows::rows(), backend_kind::cpu);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].p, make_problem(1, 6, 3, 100, 100, 64, dtype::fp32, "local:3,1+global:2", 16, 32));
  a.head_dim = {100};  // not a multiple of 8: make_problem refuses it
  EXPECT_THROW(expand({"t", {{"g", a}}}, testing_rows::rows(), backend_kind::cpu), input_error);
}

// cpu:NAME / cuda:NAME (the fp8 groups of the presets name cpu:flash2 and
// cuda:flash3_fp8): the row of that backend, nothing on the other, and the
// name is checked only on its own backend (a CPU run loads no CUDA rows).
TEST(sweep_axes, backend_qualified_variant_names) {
  std::vector<variant> rows = testing_rows::rows();
  variant gpu = testing_rows::make_row("t_gpu", testing_rows::mode::good);
  gpu.backend = backend_kind::cuda;
  rows.push_back(gpu);
  sweep_axes a;
  a.seq = {64};
  a.type = {dtype::fp32};
  a.variant = parse_sweep_cli({"--variant", "cpu:t_good,cuda:t_gpu"}).overrides.variant;
  const auto names = [&](backend_kind b) {
    std::vector<std::string> n;
    for (const auto& c : expand({"t", {{"g", a}}}, rows, b)) n.push_back(c.row->name);
    return n;
  };
  EXPECT_EQ(names(backend_kind::cpu), std::vector<std::string>{"t_good"});
  EXPECT_EQ(names(backend_kind::cuda), std::vector<std::string>{"t_gpu"});
  a.variant = {"cuda:not_built"};
  EXPECT_TRUE(names(backend_kind::cpu).empty());  // not an error, and not every row
  EXPECT_THROW(names(backend_kind::cuda), input_error);
  a.variant = {"not_built"};  // control: an unqualified name is checked on every backend
  EXPECT_THROW(names(backend_kind::cpu), input_error);
  expect_one_line_naming([] { parse_sweep_cli({"--variant", "cuda:"}); }, "cuda:", "empty qualified name");
}

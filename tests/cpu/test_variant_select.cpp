// The variant axis: row names and tag:<tag> selectors, checked in one place.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "harness/cli.hpp"
#include "harness/sweep.hpp"
#include "harness/variant_select.hpp"
#include "harness_test_rows.hpp"

using namespace attnbench;

namespace {

std::vector<std::string> names(const std::vector<const variant*>& rows) {
  std::vector<std::string> out;
  for (const variant* r : rows) out.push_back(r->name);
  return out;
}

// Test rows with tags, and one row only another backend has.
const std::vector<variant>& tagged_rows() {
  static const std::vector<variant> rows = [] {
    std::vector<variant> r;
    const std::vector<std::pair<std::string, std::vector<tag>>> declared = {{"t_a", {tag::baseline}},
                                                                            {"t_b", {tag::fused, tag::tiled}},
                                                                            {"t_c", {tag::unfused}},
                                                                            {"t_d", {tag::tiled, tag::gqa}}};
    for (const auto& [name, tags] : declared) {
      variant v = testing_rows::make_row(name, testing_rows::mode::good);
      v.tags = tags;
      r.push_back(std::move(v));
    }
    variant other = testing_rows::make_row("t_other", testing_rows::mode::good);
    other.backend = backend_kind::cuda;
    other.tags = {tag::tiled};
    r.push_back(std::move(other));
    return r;
  }();
  return rows;
}

std::vector<std::string> selected(std::vector<std::string> items) {
  return names(select_variants(items, tagged_rows(), backend_kind::cpu));
}

}  // namespace

TEST(variant_select, tags_select_rows_of_the_backend_in_registry_order) {
  EXPECT_EQ(selected({"tag:tiled"}), (std::vector<std::string>{"t_b", "t_d"}));
  EXPECT_EQ(names(select_variants({"tag:tiled"}, tagged_rows(), backend_kind::cuda)),
            std::vector<std::string>{"t_other"});
  EXPECT_TRUE(selected({"tag:library"}).empty());
  EXPECT_EQ(selected({}), (std::vector<std::string>{"t_a", "t_b", "t_c", "t_d"}));
  // The registry: tag:tiled on cpu is every cpu row carrying the tag, in order.
  std::vector<std::string> tiled;
  for (const auto& r : registry())
    if (r.backend == backend_kind::cpu && r.has(tag::tiled)) tiled.push_back(r.name);
  EXPECT_EQ(names(select_variants({"tag:tiled"}, registry(), backend_kind::cpu)), tiled);
  EXPECT_EQ(tiled, (std::vector<std::string>{"flash1", "flash2", "sparse"}));
}

TEST(variant_select, names_and_tags_mix_first_mention_wins) {
  EXPECT_EQ(selected({"t_c", "tag:tiled", "t_b", "t_a"}), (std::vector<std::string>{"t_c", "t_b", "t_d", "t_a"}));
  EXPECT_EQ(selected({"t_d", "tag:tiled"}), (std::vector<std::string>{"t_d", "t_b"}));
  // A name only another backend has selects nothing here (one sweep serves both backends).
  EXPECT_TRUE(selected({"t_other"}).empty());
}

TEST(variant_select, unknown_tags_and_names_are_input_errors) {
  try {
    parse_variant_item("tag:frob");
    FAIL() << "no error";
  } catch (const input_error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("'frob'"), std::string::npos) << m;
    EXPECT_NE(m.find("'tag:frob'"), std::string::npos) << m;
    for (tag t : all_tags) EXPECT_NE(m.find(to_string(t)), std::string::npos) << m;
  }
  EXPECT_EQ(std::size(all_tags), 9u);
  EXPECT_EQ(parse_tag_item("tag:gqa"), tag::gqa);
  EXPECT_THROW(parse_variant_item(""), input_error);
  EXPECT_EQ(parse_variant_item("flash2"), "flash2");  // names are checked against the rows
  EXPECT_THROW(selected({"tag:frob"}), input_error);
  try {
    selected({"t_a", "nope"});
    FAIL() << "no error";
  } catch (const input_error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("'nope'"), std::string::npos) << m;
    EXPECT_NE(m.find("t_other"), std::string::npos) << m;  // the known names
  }
  // Through the CLI and expand: one check, one message.
  EXPECT_THROW(parse_sweep_cli({"--variant", "flash2,tag:nope"}), input_error);
  const sweep_spec s = resolve_sweep(parse_sweep_cli({"--variant", "nope", "--seq", "64"}));
  EXPECT_THROW(expand(s, registry(), backend_kind::cpu), input_error);
}

// Presets select rows by tag, except the fp8 groups, which pair
// rows across dtypes (flash3 bf16 beside flash3_fp8 e4m3), and the alternatives
// group, which names the attention the scans are measured against:
// they name them, backend-qualified, and each name must be a row of that backend.
TEST(variant_select, presets_name_no_variants) {
  for (const auto& p : preset_names())
    for (const auto& g : make_preset(p).groups)
      for (const auto& item : g.axes.variant) {
        if (item.starts_with("tag:")) continue;
        EXPECT_TRUE(g.name == "fp8" || g.name == "alternatives") << p << "/" << g.name << ": " << item;
        const bool cpu = item.starts_with("cpu:"), cuda = item.starts_with("cuda:");
        ASSERT_TRUE(cpu || cuda) << p << "/" << g.name << ": " << item;
        const std::string name = item.substr(item.find(':') + 1);
        if (cpu) EXPECT_NE(find_variant(name, backend_kind::cpu), nullptr) << item;
        if (cuda && find_variant("flash3", backend_kind::cuda))  // a CUDA build: its rows are known
          EXPECT_NE(find_variant(name, backend_kind::cuda), nullptr) << item;
      }
  std::set<std::string> tiles;
  for (const auto& c : expand(make_preset("quick"), registry(), backend_kind::cpu))
    if (c.group == "tiles") tiles.insert(c.row->name);
  EXPECT_EQ(tiles, (std::set<std::string>{"flash1", "flash2", "sparse"}));
}

// Without items, every row of the backend but the comparison rows; tag:comparison names them
// (control: the same selection with the tag finds rows, so the default leaves something out).
TEST(variant_select, default_leaves_the_comparison_rows_to_groups_that_name_them) {
  const auto all = names(select_variants({}, registry(), backend_kind::cpu));
  const auto comparison = names(select_variants({"tag:comparison"}, registry(), backend_kind::cpu));
  EXPECT_EQ(comparison, (std::vector<std::string>{"linformer", "performer", "additive", "routing"}));
  for (const auto& n : comparison) EXPECT_EQ(std::count(all.begin(), all.end(), n), 0) << n;
  EXPECT_EQ(std::count(all.begin(), all.end(), std::string("flash2")), 1);
}

// Sweeps: named groups, each a cartesian product of axes, expanded into the
// list of (variant, problem) configurations a run executes. Presets live in
// presets.cpp; sweep files use the same axis names (docs/sweeps.md).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/problem.hpp"
#include "harness/sweep_axes.hpp"
#include "kernels/registry.hpp"

namespace attnbench {

struct sweep_group {
  std::string name;
  sweep_axes axes;
};

struct sweep_spec {
  std::string name;  // preset or sweep-file name; recorded as context.preset
  std::vector<sweep_group> groups;
};

// One (variant, problem) of an expanded sweep.
struct configuration {
  const variant* row = nullptr;
  problem p;
  std::string group;
  std::string name;  // row->benchmark_name(p)
  support sup;       // row->supports(p)
};

// The list parsers (split_list, parse_mask_list, ...) are in axis_values.hpp.

// ---- presets and sweep files ----
std::vector<std::string> preset_names();
sweep_spec make_preset(std::string_view name);  // throws input_error for unknown names
// A sweep file: {"name": ..., "groups": [{"name": ..., "<axis>": [...]}, ...]} or a bare
// list of groups. Axis names as in the axis table (sweep_axes.hpp); '_' may replace '-'.
sweep_spec parse_sweep_json(const nlohmann::json& j, const std::string& source);
sweep_spec load_sweep_file(const std::string& path);
// Keys in reading order: name, groups; each group's name, then its axes in table order.
nlohmann::ordered_json to_json(const sweep_spec& s);

// CLI overrides replace the same axis in every group (and clear the axes the
// table says they clear: --seq clears nq/nkv).
void apply_overrides(sweep_spec& s, const sweep_axes& overrides);

// Expands every group in order: the cartesian product of the axis table, each
// leaf's problem built by make_problem (input_error names the bad one) and
// rewritten by its row (variant::resolved), dropping duplicate names (first
// group wins). `rows` is the whole registry: variant items are resolved by
// select_variants (variant_select.hpp); rows of other backends are ignored.
// A sweep expanding to more configurations than this is refused before any
// is built (a sweep file's product can reach millions); --max-configurations
// raises it.
inline constexpr std::int64_t default_max_configurations = 100000;
std::vector<configuration> expand(const sweep_spec& s, const std::vector<variant>& rows, backend_kind backend,
                                  std::int64_t max_configurations = default_max_configurations);

struct shard_spec {
  std::int64_t index = 0, count = 1;
};
shard_spec parse_shard(std::string_view s);  // "i/n", 0 <= i < n
// Keeps names matching `filter` (an RE2 regex, linear time, searched anywhere; empty: all),
// then every count-th configuration starting at index.
std::vector<configuration> select(std::vector<configuration> all, const std::string& filter, shard_spec shard);

}  // namespace attnbench

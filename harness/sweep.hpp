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
#include "kernels/registry.hpp"

namespace attnbench {

// One KV-head count: absolute (value > 0) or relative to H ("H", "H/4": divisor > 0).
struct kv_heads_value {
  std::int64_t value = 0;
  std::int64_t divisor = 0;
  std::string text() const;
  bool operator==(const kv_heads_value&) const = default;
};

struct tile_shape {
  std::int64_t br = 64, bc = 64;
  bool operator==(const tile_shape&) const = default;
};

// Every axis is optional: empty means "use the default" (see defaults in sweep.cpp
// and docs/sweeps.md). seq sets Nq = Nkv; nq / nkv, when given, replace it on their side.
struct sweep_axes {
  std::vector<std::string> variant;
  std::vector<std::int64_t> seq, nq, nkv, batch, heads, head_dim;
  std::vector<kv_heads_value> kv_heads;
  std::vector<tile_shape> block;
  std::vector<mask_spec> mask;
  std::vector<dtype> type;
  bool empty() const;
};

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

// ---- parsing of CLI lists (each throws input_error naming the bad value) ----
std::vector<std::string> split_list(std::string_view s, std::string_view what);
std::vector<std::int64_t> parse_int_list(std::string_view s, std::string_view what);
// "none,causal,local:255,0,local:127,127+global:16": local:L,R keeps its comma.
std::vector<mask_spec> parse_mask_list(std::string_view s);
std::vector<tile_shape> parse_block_list(std::string_view s);
tile_shape parse_block(std::string_view s);
std::vector<kv_heads_value> parse_kv_heads_list(std::string_view s);
std::vector<dtype> parse_dtype_list(std::string_view s);

// ---- presets and sweep files ----
std::vector<std::string> preset_names();
sweep_spec make_preset(std::string_view name);  // throws input_error for unknown names
// A sweep file: {"name": ..., "groups": [{"name": ..., "<axis>": [...]}, ...]} or a bare
// list of groups. Axis names as on the CLI (seq, nq, nkv, batch, heads, kv-heads,
// head-dim, block, mask, dtype, variant); '_' may replace '-'.
sweep_spec parse_sweep_json(const nlohmann::json& j, const std::string& source);
sweep_spec load_sweep_file(const std::string& path);
// Keys in reading order (name, groups; each group's name first).
nlohmann::ordered_json to_json(const sweep_spec& s);

// CLI overrides replace the same axis in every group (--seq also clears nq/nkv).
void apply_overrides(sweep_spec& s, const sweep_axes& overrides);

// Expands every group in order, variants innermost, dropping duplicate names
// (first group wins). `rows` is the whole registry: names unknown to every row
// throw input_error; rows of other backends are ignored. Problems are validated
// (input_error names the bad one).
std::vector<configuration> expand(const sweep_spec& s, const std::vector<variant>& rows,
                                  backend_kind backend);

struct shard_spec {
  std::int64_t index = 0, count = 1;
};
shard_spec parse_shard(std::string_view s);  // "i/n", 0 <= i < n
// Keeps names matching `filter` (ECMAScript regex, searched anywhere; empty: all),
// then every count-th configuration starting at index.
std::vector<configuration> select(std::vector<configuration> all, const std::string& filter,
                                  shard_spec shard);

}  // namespace attnbench

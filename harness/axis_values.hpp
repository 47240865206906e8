// The values of the sweep axes that are not plain numbers, and the text forms
// every axis reads: CLI comma lists and sweep-file items. Each parser throws
// input_error, one line naming the bad value.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/problem.hpp"

namespace attnbench {

// One KV-head count: absolute (value > 0) or relative to H ("H", "H/4": divisor > 0).
struct kv_heads_value {
  std::int64_t value = 0;
  std::int64_t divisor = 0;
  std::string text() const;
  std::int64_t resolve(std::int64_t heads) const;  // Hkv for H = heads; throws when H % divisor
  bool operator==(const kv_heads_value&) const = default;
};

struct tile_shape {
  std::int64_t br = default_tile, bc = default_tile;
  std::string text() const;  // "64x64"
  bool operator==(const tile_shape&) const = default;
};

// "a,b,c" -> items; an empty item is an error naming the list.
std::vector<std::string> split_list(std::string_view s, std::string_view what);
// As split_list, but "local:L,R" keeps its comma: "none,local:255,0" is two items.
std::vector<std::string> split_mask_list(std::string_view s, std::string_view what);

kv_heads_value parse_kv_heads(std::string_view s);
tile_shape parse_block(std::string_view s);

std::vector<std::int64_t> parse_int_list(std::string_view s, std::string_view what);
std::vector<mask_spec> parse_mask_list(std::string_view s);
std::vector<tile_shape> parse_block_list(std::string_view s);
std::vector<kv_heads_value> parse_kv_heads_list(std::string_view s);
std::vector<dtype> parse_dtype_list(std::string_view s);

}  // namespace attnbench

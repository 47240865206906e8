#include "harness/axis_values.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace attnbench {

std::string kv_heads_value::text() const {
  if (value > 0) return std::to_string(value);
  return divisor == 1 ? "H" : fmt::format("H/{}", divisor);
}

std::int64_t kv_heads_value::resolve(std::int64_t heads) const {
  if (value > 0) return value;
  if (heads % divisor != 0)
    throw input_error(fmt::format("kv-heads '{}' with H={}: H is not divisible by {}", text(), heads, divisor));
  return heads / divisor;
}

std::string tile_shape::text() const { return fmt::format("{}x{}", br, bc); }

std::vector<std::string> split_list(std::string_view s, std::string_view what) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const auto comma = s.find(',', start);
    const std::string_view item = s.substr(start, comma == std::string_view::npos ? s.npos : comma - start);
    if (item.empty()) throw input_error(fmt::format("malformed {} list '{}' (empty item)", what, s));
    out.emplace_back(item);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

// True when mask text m is cut at a comma of its last term: local:L / strided:L
// lack ",R" / ",S", random:b lacks ",r", and random:b,r is followed by a seed
// (a mask never starts with a digit). A layout path takes no commas here.
static bool mask_term_continues(const std::string& m, const std::string& next) {
  const auto plus = m.rfind('+');
  const std::string_view term = std::string_view(m).substr(plus == std::string::npos ? 0 : plus + 1);
  const auto commas = std::count(term.begin(), term.end(), ',');
  if (term.starts_with("local:") || term.starts_with("strided:")) return commas == 0;
  if (term.starts_with("random:"))
    return commas == 0 || (commas == 1 && !next.empty() &&
                           std::all_of(next.begin(), next.end(), [](char c) { return c >= '0' && c <= '9'; }));
  return false;
}

std::vector<std::string> split_mask_list(std::string_view s, std::string_view what) {
  const auto items = split_list(s, what);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    std::string m = items[i];
    // "local:L" is followed by ",R" (and maybe "+global:G"), "random:b" by ",r"
    // and maybe ",seed": glue the next items back on.
    while (i + 1 < items.size() && mask_term_continues(m, items[i + 1])) m += "," + items[++i];
    out.push_back(std::move(m));
  }
  return out;
}

kv_heads_value parse_kv_heads(std::string_view s) {
  try {
    if (s == "H") return {0, 1};
    if (s.starts_with("H/")) return {0, parse_positive(s.substr(2), "kv-heads divisor")};
    return {parse_positive(s, "kv-heads"), 0};
  } catch (const input_error&) {
    throw input_error(fmt::format("bad kv-heads '{}' (expected N, H or H/k with N, k > 0)", s));
  }
}

tile_shape parse_block(std::string_view s) {
  try {
    const auto x = s.find('x');
    if (x != std::string_view::npos)
      return {parse_positive(s.substr(0, x), "block Br"), parse_positive(s.substr(x + 1), "block Bc")};
  } catch (const input_error&) {
  }
  throw input_error(fmt::format("bad block '{}' (expected BrxBc with Br, Bc > 0, e.g. 64x64)", s));
}

namespace {

template <class F>
auto parse_each(const std::vector<std::string>& items, F parse) {
  std::vector<decltype(parse(std::string_view{}))> out;
  for (const auto& item : items) out.push_back(parse(item));
  return out;
}

}  // namespace

std::vector<std::int64_t> parse_int_list(std::string_view s, std::string_view what) {
  return parse_each(split_list(s, what), [&](std::string_view x) { return parse_positive(x, what); });
}

std::vector<mask_spec> parse_mask_list(std::string_view s) {
  return parse_each(split_mask_list(s, "mask"), parse_mask);
}

std::vector<tile_shape> parse_block_list(std::string_view s) { return parse_each(split_list(s, "block"), parse_block); }

std::vector<kv_heads_value> parse_kv_heads_list(std::string_view s) {
  return parse_each(split_list(s, "kv-heads"), parse_kv_heads);
}

std::vector<dtype> parse_dtype_list(std::string_view s) { return parse_each(split_list(s, "dtype"), parse_dtype); }

}  // namespace attnbench

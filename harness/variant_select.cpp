#include "harness/variant_select.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <set>

namespace attnbench {

namespace {

constexpr std::string_view tag_prefix = "tag:";

std::string tag_list() {
  std::vector<std::string_view> names;
  for (tag t : all_tags) names.push_back(to_string(t));
  return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace

tag parse_tag_item(std::string_view item) {
  const std::string_view name = item.substr(item.starts_with(tag_prefix) ? tag_prefix.size() : 0);
  for (tag t : all_tags)
    if (to_string(t) == name) return t;
  throw input_error(fmt::format("unknown tag '{}' in '{}' (tags: {})", name, item, tag_list()));
}

std::string parse_variant_item(std::string_view item) {
  if (item.empty()) throw input_error("empty variant name");
  if (item.starts_with(tag_prefix)) parse_tag_item(item);
  return std::string(item);
}

std::vector<const variant*> select_variants(const std::vector<std::string>& items, const std::vector<variant>& rows,
                                            backend_kind backend) {
  std::vector<const variant*> out;
  auto add = [&](const variant& r) {
    if (r.backend == backend && std::find(out.begin(), out.end(), &r) == out.end()) out.push_back(&r);
  };
  // No items: every row of the backend but the scans (docs/alternatives.md) and the comparison
  // rows, which cost more per configuration (additive: a tanh per width element of every score;
  // Performer's fp64 reference: Nkv m d per KV head) and answer another question; groups name them.
  if (items.empty())
    for (const auto& r : rows)
      if (!r.has(tag::scan) && !r.has(tag::comparison)) add(r);
  for (const auto& item : items) {
    if (item.starts_with(tag_prefix)) {
      const tag t = parse_tag_item(item);
      for (const auto& r : rows)
        if (r.has(t)) add(r);
      continue;
    }
    const auto named = [&](const variant& r) { return r.name == item; };
    if (std::none_of(rows.begin(), rows.end(), named)) {
      std::set<std::string> names;
      for (const auto& r : rows) names.insert(r.name);
      throw input_error(fmt::format("unknown variant '{}' (known: {}; or tag:<tag>)", item, fmt::join(names, ", ")));
    }
    for (const auto& r : rows)
      if (named(r)) add(r);
  }
  return out;
}

}  // namespace attnbench

#include "harness/sweep.hpp"

#include <charconv>
#include <fmt/format.h>
#include <optional>
#include <re2/re2.h>
#include <set>

namespace attnbench {

void apply_overrides(sweep_spec& s, const sweep_axes& o) {
  const auto& table = sweep_axis_table();
  for (auto& g : s.groups) {
    // Clear first, so an override the table clears is not lost when both are given.
    for (const sweep_axis* axis : table)
      if (axis->size(o) > 0)
        for (std::string_view cleared : axis->clears()) find_axis(cleared)->clear(g.axes);
    for (const sweep_axis* axis : table)
      if (axis->size(o) > 0) axis->copy(g.axes, o);
  }
}

std::vector<configuration> expand(const sweep_spec& s, const std::vector<variant>& rows, backend_kind backend,
                                  std::int64_t max_configurations) {
  std::vector<configuration> out;
  std::set<std::string> seen;
  const expand_context ctx{rows, backend};
  const auto& table = sweep_axis_table();
  std::vector<std::vector<std::vector<point_setter>>> group_levels;
  std::int64_t total = 0;  // saturates at the cap + 1
  for (const auto& g : s.groups) {
    auto& levels = group_levels.emplace_back();
    std::int64_t n = 1;
    for (const sweep_axis* axis : table) {
      levels.push_back(axis->points(g.axes, ctx));
      std::int64_t m = 0;
      n = __builtin_mul_overflow(n, static_cast<std::int64_t>(levels.back().size()), &m)
              ? max_configurations + 1
              : std::min(m, max_configurations + 1);
    }
    total = std::min(total + n, max_configurations + 1);
  }
  if (total > max_configurations)
    throw input_error(
        fmt::format("sweep '{}' expands to more than {} configurations; narrow it or pass --max-configurations N",
                    s.name, max_configurations));
  for (std::size_t gi = 0; gi < s.groups.size(); ++gi) {
    const auto& g = s.groups[gi];
    const auto& levels = group_levels[gi];
    sweep_point point;
    const auto leaf = [&] {
      problem p;
      try {
        p = point_problem(point);
      } catch (const input_error& e) {
        throw input_error(fmt::format("group '{}': {}", g.name, e.what()));
      }
      const problem rp = point.row->resolved(p);
      configuration c{point.row, rp, g.name, point.row->benchmark_name(rp), {}};
      if (!seen.insert(c.name).second) return;
      c.sup = point.row->supports(rp);
      out.push_back(std::move(c));
    };
    const auto visit = [&](const auto& self, std::size_t level) -> void {
      if (level == levels.size()) return leaf();
      for (const auto& set : levels[level]) {
        set(point);
        self(self, level + 1);
      }
    };
    visit(visit, 0);
  }
  return out;
}

shard_spec parse_shard(std::string_view s) {
  const auto slash = s.find('/');
  if (slash == std::string_view::npos)
    throw input_error(fmt::format("bad shard '{}' (expected i/n with 0 <= i < n)", s));
  auto number = [&](std::string_view t) {
    std::int64_t v = -1;
    const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    return t.empty() || ec != std::errc() || ptr != t.data() + t.size() ? std::int64_t{-1} : v;
  };
  shard_spec sh;
  sh.index = number(s.substr(0, slash));
  sh.count = number(s.substr(slash + 1));
  if (sh.index < 0 || sh.count <= 0 || sh.index >= sh.count)
    throw input_error(fmt::format("bad shard '{}' (expected i/n with 0 <= i < n)", s));
  return sh;
}

std::vector<configuration> select(std::vector<configuration> all, const std::string& filter, shard_spec shard) {
  // RE2: matching takes time linear in the name, whatever the pattern.
  std::optional<re2::RE2> re;
  if (!filter.empty()) {
    re2::RE2::Options o;
    o.set_log_errors(false);
    re.emplace(filter, o);
    if (!re->ok()) throw input_error(fmt::format("bad --filter regex '{}': {} (RE2 syntax)", filter, re->error()));
  }
  std::vector<configuration> kept;
  for (auto& c : all)
    if (!re || re2::RE2::PartialMatch(c.name, *re)) kept.push_back(std::move(c));
  std::vector<configuration> out;
  for (std::size_t i = 0; i < kept.size(); ++i)
    if (static_cast<std::int64_t>(i % shard.count) == shard.index) out.push_back(std::move(kept[i]));
  return out;
}

}  // namespace attnbench

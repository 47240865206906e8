// Sweep files and their JSON form; both walk the axis table.
#include <algorithm>
#include <fmt/format.h>
#include <fstream>

#include "harness/sweep.hpp"
#include "harness/json_read.hpp"

namespace attnbench {

using nlohmann::json;

namespace {

std::string axis_key(std::string k) {
  std::replace(k.begin(), k.end(), '_', '-');
  return k;
}

// A JSON axis value: a list or a single value; items are numbers or strings.
std::vector<std::string> json_items(const json& v, const std::string& where) {
  std::vector<std::string> out;
  auto one = [&](const json& x) {
    if (x.is_number_integer())
      out.push_back(std::to_string(x.get<std::int64_t>()));
    else if (x.is_string())
      out.push_back(x.get<std::string>());
    else
      throw input_error(fmt::format("{}: expected numbers or strings, got {}", where, x.dump()));
  };
  if (v.is_array()) {
    if (v.empty()) throw input_error(fmt::format("{}: empty list", where));
    for (const auto& x : v) one(x);
  } else {
    one(v);
  }
  return out;
}

}  // namespace

sweep_spec parse_sweep_json(const json& j, const std::string& source) {
  sweep_spec s;
  s.name = source;
  const json* groups = &j;
  if (j.is_object()) {
    for (const auto& [k, v] : j.items())
      if (k != "name" && k != "groups")
        throw input_error(
            fmt::format("{}: unknown top-level key '{}' (a sweep file has 'name' and 'groups')", source, k));
    if (j.contains("name")) {
      if (!j["name"].is_string()) throw input_error(fmt::format("{}: 'name' must be a string", source));
      s.name = j["name"].get<std::string>();
    }
    if (!j.contains("groups")) throw input_error(fmt::format("{}: no 'groups' list", source));
    groups = &j["groups"];
  }
  if (!groups->is_array() || groups->empty())
    throw input_error(fmt::format("{}: expected a non-empty list of groups", source));
  int index = 0;
  for (const auto& g : *groups) {
    if (!g.is_object()) throw input_error(fmt::format("{}: group {} is not an object", source, index));
    sweep_group out;
    out.name = fmt::format("group{}", index);
    for (const auto& [k, v] : g.items()) {
      if (k == "name") {
        if (!v.is_string()) throw input_error(fmt::format("{}: group name must be a string", source));
        out.name = v.get<std::string>();
        continue;
      }
      const std::string where = fmt::format("{}: group '{}' axis '{}'", source, out.name, k);
      const sweep_axis* axis = find_axis(axis_key(k));
      if (!axis) throw input_error(fmt::format("{}: group '{}': unknown axis '{}'", source, out.name, k));
      const auto items = json_items(v, where);
      try {
        axis->set(out.axes, items);
      } catch (const input_error& e) {
        throw input_error(fmt::format("{}: {}", where, e.what()));
      }
    }
    s.groups.push_back(std::move(out));
    ++index;
  }
  return s;
}

sweep_spec load_sweep_file(const std::string& path) {
  return parse_sweep_json(read_json_file(path, "sweep file"), path);
}

nlohmann::ordered_json to_json(const sweep_spec& s) {
  using ojson = nlohmann::ordered_json;
  ojson groups = ojson::array();
  for (const auto& g : s.groups) {
    ojson o;
    o["name"] = g.name;
    for (const sweep_axis* axis : sweep_axis_table())
      if (axis->size(g.axes) > 0) o[std::string(axis->name())] = axis->to_json(g.axes);
    groups.push_back(o);
  }
  ojson out;
  out["name"] = s.name;
  out["groups"] = groups;
  return out;
}

}  // namespace attnbench

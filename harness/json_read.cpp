#include "harness/json_read.hpp"

#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <set>
#include <vector>

#include "core/errors.hpp"

namespace attnbench {

using nlohmann::json;

namespace {

struct too_deep {};
struct duplicate_key {
  std::string key;
};

// Aborts the parse as soon as a container opens below max_json_depth.
const json::parser_callback_t depth_guard = [](int depth, json::parse_event_t event, json&) {
  if ((event == json::parse_event_t::object_start || event == json::parse_event_t::array_start) &&
      depth >= max_json_depth)
    throw too_deep{};
  return true;
};

}  // namespace

json parse_json_text(std::string_view text) {
  try {
    return json::parse(text, depth_guard, /*allow_exceptions=*/false);
  } catch (const too_deep&) {
    return json(json::value_t::discarded);
  }
}

json read_json_file(const std::string& path, std::string_view what) {
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(st))
    throw input_error(fmt::format("cannot read {} '{}': {}", what, path, ec ? ec.message() : "no such file"));
  if (std::filesystem::is_directory(st))
    throw input_error(fmt::format("cannot read {} '{}': it is a directory", what, path));
  if (!std::filesystem::is_regular_file(st))
    throw input_error(fmt::format("cannot read {} '{}': not a regular file", what, path));
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw input_error(fmt::format("cannot read {} '{}': {}", what, path, ec.message()));
  if (size > max_json_file_bytes)
    throw input_error(
        fmt::format("{} '{}' is {} bytes, more than the largest accepted {}", what, path, size, max_json_file_bytes));
  std::ifstream f(path, std::ios::binary);
  if (!f) throw input_error(fmt::format("cannot read {} '{}'", what, path));
  // The keys of every object still open, innermost last: nlohmann keeps the last of two equal
  // keys silently, so a file's earlier value would be dropped without a word.
  std::vector<std::set<std::string>> open_objects;
  const json::parser_callback_t guard = [&](int depth, json::parse_event_t event, json& parsed) {
    depth_guard(depth, event, parsed);
    if (event == json::parse_event_t::object_start)
      open_objects.emplace_back();
    else if (event == json::parse_event_t::object_end && !open_objects.empty())
      open_objects.pop_back();
    else if (event == json::parse_event_t::key && !open_objects.empty() &&
             !open_objects.back().insert(parsed.get<std::string>()).second)
      throw duplicate_key{parsed.get<std::string>()};
    return true;
  };
  try {
    return json::parse(f, guard);
  } catch (const too_deep&) {
    throw input_error(fmt::format("{} '{}' is nested deeper than {} levels", what, path, max_json_depth));
  } catch (const duplicate_key& d) {
    throw input_error(fmt::format("{} '{}' gives the key '{}' twice in one object", what, path, d.key));
  } catch (const json::exception& e) {
    throw input_error(fmt::format("{} '{}' is not valid JSON: {}", what, path, e.what()));
  }
}

}  // namespace attnbench

#include "harness/row_quarantine.hpp"

#include <fmt/format.h>
#include <filesystem>

#include "core/errors.hpp"
#include "harness/json_read.hpp"
#include "harness/results_log.hpp"

namespace attnbench {

using nlohmann::json;

std::string row_key(std::string_view backend, std::string_view variant) {
  return fmt::format("{}:{}", backend, variant);
}

void collect_row_faults(const std::vector<json>& entries, const std::string& source,
                        std::map<std::string, row_fault_record>& faults) {
  for (const json& e : entries) {
    if (!e.is_object() || !e.contains(row_fault_field) || !e[row_fault_field].is_string()) continue;
    const auto text = [&](const char* k) {
      return e.contains(k) && e[k].is_string() ? e[k].get<std::string>() : std::string();
    };
    if (text("status") != "failed" || text("variant").empty() || text("backend").empty()) continue;
    row_fault_record f{text("backend"), text("variant"),       e[row_fault_field].get<std::string>(),
                       text("name"),    text("error_message"), source};
    faults.try_emplace(row_key(f.backend, f.variant), std::move(f));
  }
}

std::string quarantine_reason(const row_fault_record& f) {
  std::string what;
  if (f.kind == "timeout")
    what = "hung (timeout)";
  else if (f.kind == "crash")
    what = "crashed (" + (f.message.starts_with("crashed: ") ? f.message.substr(9) : f.message) + ")";
  else if (f.kind == "device_error")
    what = "crashed (sticky device error: " + f.message + ")";
  else
    what = "failed (" + f.kind + ")";
  // The reason must stay one readable line: the crash/device text can be long.
  if (what.size() > 200) what = what.substr(0, 197) + "...";
  return fmt::format("{} {} on {}, see {}", f.variant, what, f.config, f.source);
}

std::vector<json> entries_of_results_file(const std::string& path) {
  if (path.ends_with(".jsonl")) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
      throw input_error(fmt::format("--quarantine-from '{}' is not a readable results log", path));
    return read_results_log(path).entries;
  }
  const json doc = read_json_file(path, "results file");
  if (!doc.is_object() || !doc.contains("benchmarks") || !doc["benchmarks"].is_array())
    throw input_error(
        fmt::format("--quarantine-from '{}': no 'benchmarks' array (expected an attnbench result "
                    "JSON or a .log.jsonl results log)",
                    path));
  return doc["benchmarks"].get<std::vector<json>>();
}

}  // namespace attnbench

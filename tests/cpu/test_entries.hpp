// A minimal entry that passes the schema (entry_schema.hpp), for tests that
// put hand-made entries into a results log or result file.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace testing_entries {

inline nlohmann::json valid_entry(const std::string& name, nlohmann::json extra = nlohmann::json::object()) {
  nlohmann::json e = {{"name", name},      {"variant", "t"},   {"backend", "cpu"},    {"dtype", "fp32"},
                      {"mask", "none"},    {"group", "g"},     {"status", "skipped"}, {"error_message", "test"},
                      {"real_time", 0.0},  {"cpu_time", 0.0},  {"iterations", 0},     {"repetitions", 0},
                      {"tolerance", 1e-4}, {"err_ok", nullptr}};
  for (const char* k : {"B", "H", "Hkv", "Nq", "Nkv", "d", "Br", "Bc", "checked_rows", "batch"}) e[k] = 1;
  for (const char* k : {"flops", "flops_executed", "bytes", "bytes_min", "bytes_counted", "intensity", "time_ms",
                        "time_ms_min", "time_ms_max", "time_cv", "tflops", "gbps", "rel_err", "max_abs_err", "lse_err"})
    e[k] = nullptr;
  for (auto& [k, v] : extra.items()) e[k] = v;
  return e;
}

}  // namespace testing_entries

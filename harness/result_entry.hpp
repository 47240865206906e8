// One finished configuration as the bench loop keeps it: the typed
// measurement and model next to the JSON entry made from them once. The
// console line is formatted from the typed fields, never from the JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "harness/run_result.hpp"
#include "harness/sweep.hpp"

namespace attnbench {

struct result_entry {
  std::string name;                    // the configuration's benchmark name
  std::optional<model_figures> model;  // model_of(row, p), evaluated once
  measurement m;
  nlohmann::json json;  // make_entry(c, m, model)
};

result_entry make_result(const configuration& c, measurement m, std::optional<model_figures> model);

// The console line of a result; `profiled`: the sweep ran in --profile mode.
std::string console_line(const result_entry& r, bool profiled = false);

}  // namespace attnbench

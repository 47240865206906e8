// Benchmark entries and result files in the layout of docs/json_schema.md:
// one entry per (variant, configuration), assembled with the context into a
// Google-Benchmark-shaped file; shards merged into one.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/sweep.hpp"

namespace attnbench {

// Accuracy of O (and lse) against the fp64 reference, checked before timing.
struct validation_result {
  bool checked = false;
  double rel_err = 0;  // NaN when O held NaN/inf (written as null)
  double max_abs_err = 0;
  double lse_err = 0;
  std::int64_t checked_rows = 0;
  double tolerance = 0;
  bool err_ok = false;
  std::int64_t counted_bytes = -1;  // runner.counted_bytes() of the validation run
};

struct timing_result {
  std::vector<double> rep_ms;      // real (or manual) time per iteration, one per repetition
  std::vector<double> rep_cpu_ms;  // cpu time per iteration
  std::int64_t iterations = 0;     // per repetition
  int batch = 1;                   // launches per timed sample (GPU)
};

struct measurement {
  std::string status = "ok";  // ok | skipped | failed
  std::string message;        // reason (skipped) or error text (failed)
  bool sticky = false;        // failed with a sticky backend error: the process must end
  validation_result val;
  timing_result time;
};

struct time_stats {
  double median = 0, min = 0, max = 0, cv = 0;
};
time_stats stats_of(std::vector<double> v);  // median as Google Benchmark computes it

nlohmann::json make_entry(const configuration& c, const measurement& m);
// One line for the console.
std::string entry_line(const nlohmann::json& entry);

// {"context": ..., "benchmarks": [...]}, entries deduplicated by name (the last wins).
nlohmann::json assemble_results(const nlohmann::json& context, const std::vector<nlohmann::json>& entries);
// Writes atomically (temp file + rename); creates parent directories.
void write_json_file(const std::string& path, const nlohmann::json& j);
// Reads a result file; input_error when unreadable or not a results file.
nlohmann::json read_results_file(const std::string& path);
// Joins shard files: one context (the first file's) plus context.shards, one entry per name.
nlohmann::json merge_results(const std::vector<std::string>& paths);

}  // namespace attnbench

// Benchmark entries and result files in the layout of docs/json_schema.md:
// one entry per (variant, configuration), assembled with the context into a
// Google-Benchmark-shaped file; shards merged into one.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "harness/run_result.hpp"
#include "harness/sweep.hpp"

namespace attnbench {

// " worst row 3.1e-01 at (b 0, h 2, row 17)": a worst row above its tolerance in the console line.
std::string worst_row_text(double err, std::int64_t b, std::int64_t h, std::int64_t i);

// `model`: model_of(*c.row, c.p), computed once by the caller; the two-argument
// form computes it.
nlohmann::json make_entry(const configuration& c, const measurement& m, const std::optional<model_figures>& model);
nlohmann::json make_entry(const configuration& c, const measurement& m);
// The console line read back from an entry (tests; the bench loop uses console_line).
std::string entry_line(const nlohmann::json& entry);

// {"context": ..., "benchmarks": [...]}, entries deduplicated by name (the last wins).
nlohmann::json assemble_results(const nlohmann::json& context, const std::vector<nlohmann::json>& entries);
inline constexpr std::size_t max_result_entries = 10'000'000;

// Writes atomically (safe_write.hpp: temp file, fsync, rename; io_error naming the file).
void write_json_file(const std::string& path, const nlohmann::json& j);
// Reads a result file (json_read.hpp limits) and checks it: context an object, benchmarks an
// array of valid entries (entry_schema.hpp); input_error naming the file and the field.
nlohmann::json read_results_file(const std::string& path);
// Joins shard files: one context (the first file's) plus context.shards, one entry per name.
nlohmann::json merge_results(const std::vector<std::string>& paths);

}  // namespace attnbench

// Crash isolation per row. A configuration that hangs the device (a wait
// past its deadline: device_watchdog.hpp), crashes the process (a signal:
// crash_guard.hpp) or poisons the CUDA context (a sticky error) is logged as failed
// with the field "row_fault": "timeout", "crash" or "device_error". Its row is then
// quarantined: a sweep that finds such an entry in its own results log (on --resume) or
// in a log given with --quarantine-from records the row's remaining configurations as
// skipped, e.g. "flash3 hung (timeout) on flash3/cuda/bf16/B:4/..., see quick.json.log.jsonl",
// with "quarantined_by" naming that configuration, instead of running them: a hung or
// crashed kernel would cost one restart (and a device deadline) per configuration.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace attnbench {

inline constexpr const char* row_fault_field = "row_fault";
inline constexpr const char* quarantined_by_field = "quarantined_by";

struct row_fault_record {
  std::string backend, variant;  // the row
  std::string kind;              // timeout, crash or device_error
  std::string config;            // the configuration it happened on
  std::string message;           // that entry's error_message
  std::string source;            // the log it was read from
};

// "cuda:flash3"
std::string row_key(std::string_view backend, std::string_view variant);

// Adds the first fault of each row among `entries` (failed entries with a row_fault
// field) to `faults`, keyed by row_key; rows already present keep their record.
void collect_row_faults(const std::vector<nlohmann::json>& entries, const std::string& source,
                        std::map<std::string, row_fault_record>& faults);

// "flash3 hung (timeout) on <config>, see <source>" / "... crashed (signal 11 (SIGSEGV)) on ..."
std::string quarantine_reason(const row_fault_record& f);

// The entries of a results log (.jsonl) or result JSON (--quarantine-from); input_error
// naming the file when it cannot be read or parsed.
std::vector<nlohmann::json> entries_of_results_file(const std::string& path);

}  // namespace attnbench

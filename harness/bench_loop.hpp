// Runs an expanded sweep on one backend. Each configuration goes through
// three steps, in order: admission (supported, and fits in memory:
// admission.hpp), validation (make the runner, run once, check every output
// element and row, compare sampled rows with the fp64 reference, cached per
// problem and math: validation.hpp; bad output elements fail the entry) and
// measurement (warm-up and timing: timing.hpp; --profile instead runs it once
// inside its NVTX range, untimed). The typed result (result_entry.hpp) gives
// the JSON entry, appended to the results log at once, and the console line.
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/admission.hpp"
#include "harness/backend.hpp"
#include "harness/device_watchdog.hpp"
#include "harness/json_output.hpp"
#include "harness/result_entry.hpp"
#include "harness/results_log.hpp"
#include "harness/row_quarantine.hpp"
#include "harness/sweep.hpp"
#include "harness/tensors.hpp"
#include "harness/timing.hpp"
#include "harness/validation.hpp"

namespace attnbench {

// A planted fault (tests): ATTNBENCH_FAULT=KIND:TEXT[;KIND:TEXT...] applies KIND to every
// configuration whose name contains TEXT: sticky / failed throw that backend_error instead
// of running; hang waits on a device that never completes (the watchdog's own polling,
// against the configuration's deadline: device_watchdog.hpp); crash raises SIGSEGV.
struct planted_fault {
  std::string kind;  // sticky, failed, hang, crash
  std::string name_part;
};
// input_error naming the bad item.
std::vector<planted_fault> parse_planted_faults(const std::string& spec);

struct sweep_options {
  int repetitions = 3;
  bool hot = false;                   // no cache flush before timed samples (GPU L2, CPU LLC)
  bool profile = false;               // one untimed launch set per configuration, inside its range
  double rep_time_s = 0;              // target time of one repetition; 0: backend default
  bool quiet = false;                 // no per-configuration console lines
  std::vector<planted_fault> faults;  // tests: ATTNBENCH_FAULT
  // Device waits (device_watchdog.hpp): deadline max(wait_floor_s, wait_factor x the
  // model's bound at `peaks` (the context's ceilings.theoretical) x launches).
  double wait_floor_s = default_wait_floor_s;
  double wait_factor = default_wait_factor;
  nlohmann::json peaks;
  // Rows quarantined by faults found in other logs (--quarantine-from), keyed by row_key;
  // the sweep adds those in its own log (row_quarantine.hpp).
  std::map<std::string, row_fault_record> quarantine;
  // Called before the process ends from inside a configuration (a device wait past its
  // deadline): writes the results so far (the final JSON). May be empty.
  std::function<void()> write_partial;
  // Host memory the originals of later shapes may hold (originals_store); 0: none kept.
  std::int64_t keep_originals_bytes = 0;
};

struct sweep_totals {
  int ok = 0, skipped = 0, failed = 0, above_tolerance = 0, resumed = 0, profiled = 0;
  int quarantined = 0;                        // skipped because their row crashed or hung
  std::vector<std::string> quarantined_rows;  // quarantine_reason of each such row
  bool sticky_error = false;                  // the process must end (exit 3); --resume carries on
  std::string sticky_message;
};

// Runs one configuration (no logging); a sticky backend error sets m.sticky.
measurement run_configuration(backend& be, const configuration& c, reference_cache& cache, const sweep_options& opt);

// Runs every configuration whose name is not in the log already, appending an
// entry per configuration to `log` (may be null: nothing recorded). Stops at
// the first sticky backend error. Each row's model is evaluated once per
// configuration run (the progress weights and the entry share it).
// Crash isolation (row_quarantine.hpp): configurations of a row with a fault in the
// log or in opt.quarantine are recorded as skipped with the reason; each configuration
// runs under a crash guard (crash_guard.hpp: a signal still logs it) and with its device
// deadline (device_watchdog.hpp: a wait past it logs `timeout` and ends the process, 3).
sweep_totals run_sweep(backend& be, const std::vector<configuration>& configs, results_log* log,
                       const sweep_options& opt);

}  // namespace attnbench

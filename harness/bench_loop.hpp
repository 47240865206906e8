// Runs an expanded sweep on one backend. Each configuration goes through
// three steps, in order: admission (supported, and fits in memory:
// admission.hpp), validation (make the runner, run once and compare with the
// fp64 reference, cached per problem and math: validation.hpp) and
// measurement (warm-up and timing: timing.hpp; --profile instead runs it once
// inside its NVTX range, untimed). The typed result (result_entry.hpp) gives
// the JSON entry, appended to the results log at once, and the console line.
#pragma once

#include <string>
#include <vector>

#include "harness/admission.hpp"
#include "harness/backend.hpp"
#include "harness/json_output.hpp"
#include "harness/result_entry.hpp"
#include "harness/results_log.hpp"
#include "harness/sweep.hpp"
#include "harness/tensors.hpp"
#include "harness/timing.hpp"
#include "harness/validation.hpp"

namespace attnbench {

struct sweep_options {
  int repetitions = 3;
  bool hot = false;       // no cache flush before timed samples (GPU L2, CPU LLC)
  bool profile = false;   // one untimed launch set per configuration, inside its range
  double rep_time_s = 0;  // target time of one repetition; 0: backend default
  bool quiet = false;     // no per-configuration console lines
  // Test hook: throw this backend_error instead of running configurations whose
  // name contains `fault_name` (ATTNBENCH_FAULT=sticky:<text> or failed:<text>).
  std::string fault_name;
  bool fault_sticky = false;
};

struct sweep_totals {
  int ok = 0, skipped = 0, failed = 0, above_tolerance = 0, resumed = 0, profiled = 0;
  bool sticky_error = false;  // the process must end (exit 3); --resume carries on
  std::string sticky_message;
};

// Runs one configuration (no logging); a sticky backend error sets m.sticky.
measurement run_configuration(backend& be, const configuration& c, reference_cache& cache,
                              const sweep_options& opt);

// Runs every configuration whose name is not in the log already, appending an
// entry per configuration to `log` (may be null: nothing recorded). Stops at
// the first sticky backend error. Each row's model is evaluated once per
// configuration run (the progress weights and the entry share it).
sweep_totals run_sweep(backend& be, const std::vector<configuration>& configs, results_log* log,
                       const sweep_options& opt);

}  // namespace attnbench

// Runs an expanded sweep on one backend: for each configuration, in order,
// supports -> memory check -> make runner -> run once and validate against
// the fp64 reference (cached per problem and math) -> warm-up -> timing as a
// Google Benchmark benchmark named by the configuration (real time on the
// CPU, manual time from backend.timed_sample on the GPU) -> one entry
// appended to the results log at once. --profile instead runs each
// configuration once inside its NVTX range, untimed.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "harness/backend.hpp"
#include "harness/json_output.hpp"
#include "harness/results_log.hpp"
#include "harness/sweep.hpp"
#include "harness/tensors.hpp"

namespace attnbench {

struct sweep_options {
  int repetitions = 3;
  bool hot = false;       // no L2 flush before timed samples (GPU)
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

// Validation rows for a problem: every row when small, fewer for long Nkv so the
// fp64 reference stays well under a second.
std::int64_t validation_rows(const problem& p);

// Inputs of the last shape seen (the mask and tiles do not change them) and the
// fp64 reference rows of the last problem (tiles ignored), so the variants,
// tile shapes and masks of one shape share them.
class reference_cache {
 public:
  host_inputs& inputs(const problem& p);
  struct rows_and_ref {
    std::vector<std::int64_t> rows;
    std::vector<double> o, lse;
  };
  const rows_and_ref& reference(const problem& p, attention_math m);
  // Frees the cached data that does not belong to p.
  void keep_only(const problem& p);

 private:
  static problem shape_of(problem p);    // mask and tiles reset
  static problem problem_of(problem p);  // tiles reset
  problem shape_{}, problem_{};
  std::unique_ptr<host_inputs> inputs_;
  std::unique_ptr<rows_and_ref> refs_[2];
};

// Runs one configuration (no logging); a sticky backend error sets m.sticky.
measurement run_configuration(backend& be, const configuration& c, reference_cache& cache,
                              const sweep_options& opt);

// Runs every configuration whose name is not in the log already, appending an
// entry per configuration to `log` (may be null: nothing recorded). Stops at
// the first sticky backend error.
sweep_totals run_sweep(backend& be, const std::vector<configuration>& configs, results_log* log,
                       const sweep_options& opt);

}  // namespace attnbench

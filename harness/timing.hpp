// Measurement of a validated runner: warm-up and a pilot that sizes the
// iterations, then the timed repetitions as one Google Benchmark benchmark
// named by the configuration: manual time from backend.timed_sample on the GPU
// (an L2 flush per launch) and on the CPU when cold (an LLC eviction per run,
// outside the timed region); real time of run() in a loop on the CPU with --hot.
// --profile replaces it with one launch inside the configuration's range.
#pragma once

#include <string>

#include "harness/backend.hpp"
#include "harness/run_result.hpp"

namespace attnbench {

struct timing_request {
  int repetitions = 3;
  bool hot = false;       // no cache flush before timed samples (GPU L2, CPU LLC)
  double rep_time_s = 0;  // target time of one repetition; 0: backend default
};

// `validation_run_s`: the validation run's time (a slow configuration needs no
// pilot). Throws backend_error, sticky when the device is lost.
timing_result time_runner(backend& be, runner& r, const std::string& name, const timing_request& req,
                          double validation_run_s);

// Warm-up, then exactly one launch set inside the range `name`: no flush, no timing loop.
void profile_runner(backend& be, runner& r, const std::string& name);

}  // namespace attnbench

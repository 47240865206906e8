#include "harness/timing.hpp"

#include <algorithm>
#include <benchmark/benchmark.h>
#include <chrono>
#include <cmath>

#include "harness/run_defaults.hpp"

namespace attnbench {

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

// Collects the per-repetition runs of the one benchmark being run.
class collecting_reporter final : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& r : runs) {
      if (r.run_type != Run::RT_Iteration) continue;
      if (r.error_occurred) {
        error = r.error_message.empty() ? "benchmark error" : r.error_message;
        continue;
      }
      real_ms.push_back(r.GetAdjustedRealTime());
      cpu_ms.push_back(r.GetAdjustedCPUTime());
      iterations = r.iterations;
    }
  }
  std::vector<double> real_ms, cpu_ms;
  std::int64_t iterations = 0;
  std::string error;
};

}  // namespace

timing_result time_runner(backend& be, runner& r, const std::string& name, const timing_request& req,
                          double validation_run_s) {
  timing_result t;
  const timing_options topt{req.hot, {}};
  const timing_options ranged_topt{req.hot, name};  // NVTX range = benchmark name (Nsight merge key)
  const double rep_time = req.rep_time_s > 0 ? req.rep_time_s : defaults_for(be.kind()).rep_time_s;
  std::int64_t iterations = 1;
  // The host path, cold: every timed run is one sample from timed_sample() (an LLC eviction,
  // then the run alone on the clock), reported as Google Benchmark manual time.
  const bool host_cold = !be.manual_time() && !req.hot && be.evicts_llc();
  if (be.manual_time()) {
    // Warm-up, then one pilot sample. Cold (the default): one launch per
    // sample, each after its own L2 flush, so no launch reads what the one
    // before it left in L2 (a decode shape's K/V fit in the H200's 60 MB).
    // Hot: kernels under ~10 us are batched so that one sample lasts >= ~50 us
    // and event overhead stays small.
    r.run();
    r.run();
    be.synchronize();
    const double pilot = be.timed_sample(r, 1, topt);
    t.batch =
        !req.hot || pilot >= 10e-6 ? 1 : static_cast<int>(std::min(1000.0, std::ceil(50e-6 / std::max(pilot, 1e-7))));
    iterations = std::clamp<std::int64_t>(std::llround(rep_time / std::max(pilot * t.batch, 1e-6)), 3, 100);
  } else if (validation_run_s > 3 * rep_time) {
    // A slow configuration: the validation run was its warm-up (it paged the
    // buffers in) and its pilot; one iteration per repetition.
    iterations = 1;
  } else {
    // One timed warm-up run is the pilot (the validation run also paid first-touch costs).
    // Cold on an evicting backend it is a whole sample, its LLC eviction included, so the
    // iterations fit the repetition time with the eviction (~5 ms for 64 MiB here) counted.
    const auto t0 = clock_type::now();
    if (host_cold)
      be.timed_sample(r, 1, topt);
    else
      r.run();
    be.synchronize();
    const double pilot = seconds_since(t0);
    iterations = std::clamp<std::int64_t>(std::llround(rep_time / std::max(pilot, 1e-7)), 1, 10000);
  }

  std::string error;
  bool sticky = false;
  const bool manual = be.manual_time() || host_cold;
  const int batch = t.batch;
  auto* b = benchmark::RegisterBenchmark(name.c_str(), [&](benchmark::State& st) {
    if (!error.empty()) {  // an earlier repetition failed: do not touch the device again
      st.SkipWithError(error.c_str());
      for (auto _ : st) {
      }
      return;
    }
    for (auto _ : st) {
      try {
        if (manual) {
          st.SetIterationTime(be.timed_sample(r, batch, ranged_topt));
        } else {
          be.range_push(name);
          r.run();
          be.range_pop();
        }
      } catch (const backend_error& e) {
        error = e.what();
        sticky = e.sticky;
        st.SkipWithError(error.c_str());
        break;
      } catch (const std::exception& e) {
        error = e.what();
        st.SkipWithError(error.c_str());
        break;
      }
    }
  });
  b->Iterations(iterations)->Repetitions(std::max(req.repetitions, 1))->Unit(benchmark::kMillisecond);
  if (manual)
    b->UseManualTime();
  else
    b->UseRealTime();
  collecting_reporter rep;
  benchmark::RunSpecifiedBenchmarks(&rep, ".");
  benchmark::ClearRegisteredBenchmarks();
  if (!error.empty()) throw backend_error(error, sticky);
  if (!rep.error.empty()) throw backend_error(rep.error, false);
  if (manual) be.synchronize();
  t.rep_ms = rep.real_ms;
  t.rep_cpu_ms = rep.cpu_ms;
  t.iterations = rep.iterations;
  return t;
}

void profile_runner(backend& be, runner& r, const std::string& name) {
  r.run();
  be.synchronize();
  be.range_push(name);
  r.run();
  be.synchronize();
  be.range_pop();
}

}  // namespace attnbench

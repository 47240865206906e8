#include "harness/bench_loop.hpp"

#include "harness/run_defaults.hpp"

#include <algorithm>
#include <benchmark/benchmark.h>
#include <chrono>
#include <cmath>
#include <fmt/format.h>
#include <new>

#include "harness/host_info.hpp"
#include "harness/progress.hpp"
#include "kernels/reference/attention_reference.hpp"

namespace attnbench {

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

std::string gib(double bytes) { return fmt::format("{:.2f} GiB", bytes / double(1 << 30)); }

// Default target time of one repetition: CPU configurations are slow and many
// (the quick sweep must stay within 3 minutes on 2 cores); GPU samples are cheap.

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

void check_fault(const configuration& c, const sweep_options& opt) {
  if (!opt.fault_name.empty() && c.name.find(opt.fault_name) != std::string::npos)
    throw backend_error(fmt::format("injected {} fault", opt.fault_sticky ? "sticky" : "non-sticky"),
                        opt.fault_sticky);
}

// Validation run: poisoned outputs, one run, compare sampled rows with fp64.
validation_result validate_once(backend& be, runner& r, const configuration& c, reference_cache& cache,
                                double* run_seconds) {
  r.poison_outputs();
  const auto t0 = clock_type::now();
  r.run();
  be.synchronize();
  *run_seconds = seconds_since(t0);
  const host_outputs out = r.get_outputs();
  validation_result v;
  v.counted_bytes = r.counted_bytes();
  const auto& ref = cache.reference(c.p, c.row->math);
  if (static_cast<std::int64_t>(out.o.size()) != c.p.o_elems())
    throw backend_error(fmt::format("runner returned {} output values, expected {}", out.o.size(),
                                    c.p.o_elems()));
  const bool check_lse = c.row->writes_lse && !ref.lse.empty() &&
                         static_cast<std::int64_t>(out.lse.size()) == c.p.rows();
  const error_report e =
      compare_rows(c.p, out.o, check_lse ? std::span<const float>(out.lse) : std::span<const float>(),
                   ref.rows, ref.o, check_lse ? std::span<const double>(ref.lse) : std::span<const double>());
  v.checked = true;
  v.rel_err = e.nonfinite ? NAN : e.rel_l2;
  v.max_abs_err = e.max_abs;
  v.lse_err = e.lse_max_abs;
  v.checked_rows = static_cast<std::int64_t>(ref.rows.size());
  v.tolerance = sweep_tolerance(c.p.type);
  v.err_ok = e.ok(v.tolerance);
  return v;
}

// Times r as one Google Benchmark benchmark named c.name.
timing_result time_configuration(backend& be, runner& r, const configuration& c, const sweep_options& opt,
                                 double validation_run_s) {
  timing_result t;
  const timing_options topt{opt.hot, {}};
  const timing_options ranged_topt{opt.hot, c.name};  // NVTX range = benchmark name (Nsight merge key)
  const double rep_time = opt.rep_time_s > 0 ? opt.rep_time_s : defaults_for(be.kind()).rep_time_s;
  std::int64_t iterations = 1;
  if (be.manual_time()) {
    // Warm-up, then one pilot sample; kernels under ~10 us are batched so that
    // one sample lasts >= ~50 us and event overhead stays small.
    r.run();
    r.run();
    be.synchronize();
    const double pilot = be.timed_sample(r, 1, topt);
    t.batch = pilot >= 10e-6 ? 1 : static_cast<int>(std::min(1000.0, std::ceil(50e-6 / std::max(pilot, 1e-7))));
    iterations = std::clamp<std::int64_t>(std::llround(rep_time / std::max(pilot * t.batch, 1e-6)), 3, 100);
  } else if (validation_run_s > 3 * rep_time) {
    // A slow configuration: the validation run was its warm-up (it paged the
    // buffers in) and its pilot; one iteration per repetition.
    iterations = 1;
  } else {
    // One timed warm-up run is the pilot (the validation run also paid first-touch costs).
    const auto t0 = clock_type::now();
    r.run();
    be.synchronize();
    const double pilot = seconds_since(t0);
    iterations = std::clamp<std::int64_t>(std::llround(rep_time / std::max(pilot, 1e-7)), 1, 10000);
  }

  std::string error;
  bool sticky = false;
  const bool manual = be.manual_time();
  const int batch = t.batch;
  auto* b = benchmark::RegisterBenchmark(c.name.c_str(), [&](benchmark::State& st) {
    if (!error.empty()) {  // an earlier repetition failed: do not touch the device again
      st.SkipWithError(error.c_str());
      for (auto _ : st) {}
      return;
    }
    for (auto _ : st) {
      try {
        if (manual) {
          st.SetIterationTime(be.timed_sample(r, batch, ranged_topt));
        } else {
          be.range_push(c.name);
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
  b->Iterations(iterations)->Repetitions(std::max(opt.repetitions, 1))->Unit(benchmark::kMillisecond);
  if (manual) b->UseManualTime();
  else b->UseRealTime();
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

}  // namespace

std::int64_t validation_rows(const problem& p) {
  // ~3e8 fp64 multiply-adds of the reference per configuration.
  const double per_row = 2.0 * double(p.Nkv) * double(p.d);
  return std::clamp<std::int64_t>(static_cast<std::int64_t>(3e8 / per_row), 16, 256);
}

// ---- reference cache -----------------------------------------------------------------

problem reference_cache::shape_of(problem p) {
  p.Br = p.Bc = 64;
  p.mask = {};
  return p;
}

problem reference_cache::problem_of(problem p) {
  p.Br = p.Bc = 64;
  return p;
}

void reference_cache::keep_only(const problem& p) {
  if (!(problem_ == problem_of(p))) {
    refs_[0].reset();
    refs_[1].reset();
  }
  if (inputs_ && !(shape_ == shape_of(p))) inputs_.reset();
}

host_inputs& reference_cache::inputs(const problem& p) {
  keep_only(p);
  if (!inputs_) {
    inputs_ = std::make_unique<host_inputs>(make_inputs(shape_of(p)));
    shape_ = shape_of(p);
  }
  problem_ = problem_of(p);
  inputs_->p = p;  // mask and tiles of the current configuration; the data do not depend on them
  return *inputs_;
}

const reference_cache::rows_and_ref& reference_cache::reference(const problem& p, attention_math m) {
  host_inputs& in = inputs(p);
  auto& slot = refs_[m == attention_math::softmax ? 0 : 1];
  if (!slot) {
    slot = std::make_unique<rows_and_ref>();
    slot->rows = sample_rows(p, validation_rows(p));
    reference_rows r = reference_for(m, in, slot->rows);
    slot->o = std::move(r.o);
    slot->lse = std::move(r.lse);
  }
  return *slot;
}

// ---- one configuration ---------------------------------------------------------------

measurement run_configuration(backend& be, const configuration& c, reference_cache& cache,
                              const sweep_options& opt) {
  measurement m;
  const problem& p = c.p;
  if (!c.sup.ok) {
    m.status = "skipped";
    m.message = c.sup.reason;
    return m;
  }
  cache.keep_only(p);
  // Memory: the runner's own allocations on its backend, plus the host copies of
  // inputs and outputs the harness keeps (unless already cached).
  const double host_bytes = 4.0 * double(p.q_elems() + 2 * p.kv_elems() + 2 * p.o_elems() + p.rows());
  const double run_bytes = c.row->memory_bytes ? double(c.row->memory_bytes(p)) : 0.0;
  if (be.kind() == backend_kind::cpu) {
    const double need = run_bytes + host_bytes, have = double(be.free_memory_bytes());
    if (need > have) {
      m.status = "skipped";
      m.message = fmt::format("needs {}, {} free", gib(need), gib(have));
      return m;
    }
  } else {
    const double have = double(be.free_memory_bytes()), host = double(host_available_bytes());
    if (run_bytes > have) {
      m.status = "skipped";
      m.message = fmt::format("needs {} of device memory, {} free", gib(run_bytes), gib(have));
      return m;
    }
    if (host_bytes > host) {
      m.status = "skipped";
      m.message = fmt::format("needs {} of host memory, {} free", gib(host_bytes), gib(host));
      return m;
    }
  }
  try {
    check_fault(c, opt);
    host_inputs& in = cache.inputs(p);
    std::unique_ptr<runner> r = c.row->make(p);
    r->set_inputs(in);
    double validation_run_s = 0;
    m.val = validate_once(be, *r, c, cache, &validation_run_s);
    if (opt.profile) {
      // Warm-up, then exactly one launch set inside the range: no flush, no timing loop.
      r->run();
      be.synchronize();
      be.range_push(c.name);
      r->run();
      be.synchronize();
      be.range_pop();
      return m;
    }
    m.time = time_configuration(be, *r, c, opt, validation_run_s);
  } catch (const backend_error& e) {
    m.status = "failed";
    m.message = e.what();
    m.sticky = e.sticky;
  } catch (const std::bad_alloc&) {
    m.status = "failed";
    m.message = "out of host memory";
  } catch (const std::exception& e) {
    m.status = "failed";
    m.message = e.what();
  }
  return m;
}

// ---- the sweep ---------------------------------------------------------------------

sweep_totals run_sweep(backend& be, const std::vector<configuration>& configs, results_log* log,
                       const sweep_options& opt) {
  sweep_totals tot;
  std::vector<double> cost(configs.size(), 0.0);
  std::vector<bool> todo(configs.size(), true);
  for (std::size_t i = 0; i < configs.size(); ++i) {
    const auto& c = configs[i];
    if (log && log->existing().names.count(c.name)) {
      todo[i] = false;
      ++tot.resumed;
      continue;
    }
    if (!c.sup.ok) continue;
    double f = 0;
    try {
      f = c.row->model ? c.row->model(c.p).flops_executed : 0;
    } catch (const std::exception&) {
    }
    cost[i] = 1e8 + std::max(f, 0.0);  // fixed per-configuration overhead + work
  }
  std::vector<double> todo_cost;
  std::vector<std::size_t> todo_index(configs.size(), 0);
  for (std::size_t i = 0; i < configs.size(); ++i)
    if (todo[i]) {
      todo_index[i] = todo_cost.size();
      todo_cost.push_back(cost[i]);
    }
  if (tot.resumed > 0)
    fmt::print(stderr, "attnbench: resuming: {} of {} configurations already in {}\n", tot.resumed,
               configs.size(), log->path());
  progress prog(todo_cost);
  reference_cache cache;
  for (std::size_t i = 0; i < configs.size(); ++i) {
    if (!todo[i]) continue;
    const configuration& c = configs[i];
    const measurement m = run_configuration(be, c, cache, opt);
    const nlohmann::json entry = make_entry(c, m);
    if (log && !opt.profile) log->append(entry);
    if (m.status == "ok") {
      ++(opt.profile ? tot.profiled : tot.ok);
      if (!m.val.err_ok) ++tot.above_tolerance;
    } else if (m.status == "skipped") {
      ++tot.skipped;
    } else {
      ++tot.failed;
    }
    if (!opt.quiet) {
      prog.clear();
      if (opt.profile && m.status == "ok")
        fmt::print("{:<90} profiled (rel_err {:.1e})\n", c.name, m.val.rel_err);
      else
        fmt::print("{}\n", entry_line(entry));
      std::fflush(stdout);
    }
    prog.done(todo_index[i]);
    if (m.sticky) {
      tot.sticky_error = true;
      tot.sticky_message = m.message;
      break;
    }
  }
  prog.finish();
  return tot;
}

}  // namespace attnbench

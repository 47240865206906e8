#include "harness/bench_loop.hpp"

#include <algorithm>
#include <cstdio>
#include <fmt/format.h>
#include <memory>
#include <new>
#include <optional>

#include "harness/progress.hpp"

namespace attnbench {

namespace {

measurement skipped(std::string why) {
  measurement m;
  m.status = "skipped";
  m.message = std::move(why);
  return m;
}

void check_fault(const configuration& c, const sweep_options& opt) {
  if (!opt.fault_name.empty() && c.name.find(opt.fault_name) != std::string::npos)
    throw backend_error(fmt::format("injected {} fault", opt.fault_sticky ? "sticky" : "non-sticky"),
                        opt.fault_sticky);
}

// Validation, then measurement (or the profile launch); throws what they throw.
void validate_and_measure(backend& be, const configuration& c, reference_cache& cache,
                          const sweep_options& opt, measurement& m) {
  check_fault(c, opt);
  host_inputs& in = cache.inputs(c.p);
  std::unique_ptr<runner> r = c.row->make(c.p);
  r->set_inputs(in);
  const validation_run v = validate(be, *r, c, cache);
  m.val = v.result;
  if (opt.profile) {
    profile_runner(be, *r, c.name);
    return;
  }
  m.time = time_runner(be, *r, c.name, {opt.repetitions, opt.hot, opt.rep_time_s}, v.run_seconds);
}

void count(sweep_totals& tot, const measurement& m, bool profile) {
  if (m.status == "ok") {
    ++(profile ? tot.profiled : tot.ok);
    if (!m.val.err_ok) ++tot.above_tolerance;
  } else if (m.status == "skipped") {
    ++tot.skipped;
  } else {
    ++tot.failed;
  }
}

}  // namespace

measurement run_configuration(backend& be, const configuration& c, reference_cache& cache,
                              const sweep_options& opt) {
  if (!c.sup.ok) return skipped(c.sup.reason);
  cache.keep_only(c.p);  // frees what this problem does not share before free memory is read
  if (const support fits = admit(be, c); !fits.ok) return skipped(fits.reason);
  measurement m;
  try {
    validate_and_measure(be, c, cache, opt, m);
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

sweep_totals run_sweep(backend& be, const std::vector<configuration>& configs, results_log* log,
                       const sweep_options& opt) {
  sweep_totals tot;
  std::vector<std::size_t> todo;  // indices into configs, in order
  std::vector<std::optional<model_figures>> models;
  std::vector<double> cost;  // progress weight: fixed per-configuration overhead + executed FLOPs
  for (std::size_t i = 0; i < configs.size(); ++i) {
    const configuration& c = configs[i];
    if (log && log->existing().names.count(c.name)) {
      ++tot.resumed;
      continue;
    }
    todo.push_back(i);
    models.push_back(model_of(*c.row, c.p));
    const double f = models.back() ? models.back()->flops_executed : 0;
    cost.push_back(c.sup.ok ? 1e8 + std::max(f, 0.0) : 0.0);
  }
  if (tot.resumed > 0)
    fmt::print(stderr, "attnbench: resuming: {} of {} configurations already in {}\n", tot.resumed,
               configs.size(), log->path());
  progress prog(cost);
  reference_cache cache;
  for (std::size_t k = 0; k < todo.size(); ++k) {
    const configuration& c = configs[todo[k]];
    const result_entry r = make_result(c, run_configuration(be, c, cache, opt), models[k]);
    if (log && !opt.profile) log->append(r.json);
    count(tot, r.m, opt.profile);
    if (!opt.quiet) {
      prog.clear();
      fmt::print("{}\n", console_line(r, opt.profile));
      std::fflush(stdout);
    }
    prog.done(k);
    if (r.m.sticky) {
      tot.sticky_error = true;
      tot.sticky_message = r.m.message;
      break;
    }
  }
  prog.finish();
  return tot;
}

}  // namespace attnbench

#include "harness/bench_loop.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <new>
#include <optional>

#include "harness/cli.hpp"
#include "harness/crash_guard.hpp"
#include "harness/progress.hpp"

namespace attnbench {

namespace {

measurement skipped(std::string why) {
  measurement m;
  m.status = "skipped";
  m.message = std::move(why);
  return m;
}

measurement failed(std::string why, bool sticky) {
  measurement m;
  m.status = "failed";
  m.message = std::move(why);
  m.sticky = sticky;
  return m;
}

// A hang as the watchdog sees one: a device that never reports the work done, polled
// against the configuration's deadline; device_wait_expired() does not return.
[[noreturn]] void planted_hang() {
  const device_deadline& d = current_deadline();
  const wait_clock clock = steady_wait_clock();
  const double t0 = clock.now_s();
  poll_until_done([] { return poll_state::pending; }, d.for_launches(1), clock);
  device_wait_expired("the launch (a hang planted by ATTNBENCH_FAULT)", clock.now_s() - t0, d.describe(1));
}

void check_fault(const configuration& c, const sweep_options& opt) {
  for (const planted_fault& f : opt.faults) {
    if (c.name.find(f.name_part) == std::string::npos) continue;
    if (f.kind == "hang") planted_hang();
    if (f.kind == "crash") {
      std::fflush(stdout);
      std::raise(SIGSEGV);
    }
    throw backend_error(fmt::format("injected {} fault", f.kind == "sticky" ? "sticky" : "non-sticky"),
                        f.kind == "sticky");
  }
}

// Validation, then measurement (or the profile launch); throws what they throw.
void validate_and_measure(backend& be, const configuration& c, reference_cache& cache, const sweep_options& opt,
                          measurement& m) {
  check_fault(c, opt);
  host_inputs& in = cache.inputs(c.p);
  std::unique_ptr<runner> r = c.row->make(c.p);
  r->set_inputs(in);
  const validation_run v = validate(be, *r, c, cache);
  m.val = v.result;
  // Bad output elements fail the entry: nothing wrong is timed.
  if (std::string why = validation_failure(c.p, v.result); !why.empty()) {
    m.status = "failed";
    m.message = std::move(why);
    return;
  }
  if (opt.profile) {
    profile_runner(be, *r, c.name);
    return;
  }
  m.time = time_runner(be, *r, c.name, {opt.repetitions, opt.hot, opt.rep_time_s}, v.run_seconds);
  m.phases = r->phase_times();
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

// The entry of configuration c as a fault of its row (row_quarantine.hpp).
result_entry fault_entry(const configuration& c, const std::optional<model_figures>& model, const std::string& message,
                         const char* kind) {
  result_entry r = make_result(c, failed(message, true), model);
  r.json[row_fault_field] = kind;
  return r;
}

}  // namespace

std::vector<planted_fault> parse_planted_faults(const std::string& spec) {
  std::vector<planted_fault> out;
  std::size_t pos = 0;
  while (pos <= spec.size()) {
    const std::size_t end = std::min(spec.find(';', pos), spec.size());
    const std::string item = spec.substr(pos, end - pos);
    pos = end + 1;
    if (item.empty()) continue;
    const auto colon = item.find(':');
    const std::string kind = item.substr(0, colon);
    if (colon == std::string::npos || colon + 1 == item.size() ||
        (kind != "sticky" && kind != "failed" && kind != "hang" && kind != "crash"))
      throw input_error(
          fmt::format("ATTNBENCH_FAULT item '{}': expected KIND:TEXT with KIND sticky, failed, hang or "
                      "crash",
                      item));
    out.push_back({kind, item.substr(colon + 1)});
  }
  return out;
}

measurement run_configuration(backend& be, const configuration& c, reference_cache& cache, const sweep_options& opt) {
  if (!c.sup.ok) return skipped(c.sup.reason);
  cache.keep_only(c.p);  // frees what this problem does not share before free memory is read
  be.keep_check_data(c.p);
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
  std::map<std::string, row_fault_record> quarantine = opt.quarantine;
  if (log) collect_row_faults(log->existing().entries, log->path(), quarantine);
  for (std::size_t i = 0; i < configs.size(); ++i) {
    const configuration& c = configs[i];
    if (log && log->existing().names.count(c.name)) {
      ++tot.resumed;
      continue;
    }
    todo.push_back(i);
    models.push_back(model_of(*c.row, c.p));
    const double f = models.back() ? models.back()->flops_executed : 0;
    const bool runs = c.sup.ok && !quarantine.count(row_key(to_string(c.row->backend), c.row->name));
    cost.push_back(runs ? 1e8 + std::max(f, 0.0) : 0.0);
  }
  if (tot.resumed > 0)
    fmt::print(stderr, "attnbench: resuming: {} of {} configurations already in {}\n", tot.resumed, configs.size(),
               log->path());
  for (const auto& [key, f] : quarantine) {
    tot.quarantined_rows.push_back(quarantine_reason(f));
    fmt::print(stderr, "attnbench: not running {}: {}\n", key, quarantine_reason(f));
  }

  // The fp32 originals of every shape once, shared by its dtypes (tensors.hpp).
  std::vector<problem> order;
  for (std::size_t i : todo) order.push_back(configs[i].p);
  originals_store store(order, opt.keep_originals_bytes);
  reference_cache cache([&store](const problem& p) { return store.originals(p); });

  std::optional<crash_guard> guard;
  if (log && !opt.profile) guard.emplace(log->fd());
  progress prog(cost);
  for (std::size_t k = 0; k < todo.size(); ++k) {
    const configuration& c = configs[todo[k]];
    const std::optional<model_figures>& model = models[k];
    store.at(k);
    const std::string key = row_key(to_string(c.row->backend), c.row->name);
    measurement m;
    bool quarantined = false;
    if (auto q = quarantine.find(key); q != quarantine.end() && c.sup.ok) {
      m = skipped(quarantine_reason(q->second));
      quarantined = true;
    } else {
      // This configuration's device deadline, and what ends it (device_watchdog.hpp).
      set_current_deadline(
          {opt.wait_floor_s, opt.wait_factor, model ? model_bound_s(*model, c.p.type, opt.peaks) : 0.0});
      set_wait_expired_handler([&](const std::string& message) {
        const result_entry r = fault_entry(c, model, message, "timeout");
        try {
          if (log && !opt.profile) log->append(r.json);
          if (opt.write_partial) opt.write_partial();
        } catch (const std::exception& e) {
          fmt::print(stderr, "attnbench: error: recording the timeout failed: {}\n", e.what());
        }
        if (!opt.quiet) {
          prog.clear();
          fmt::print("{}\n", console_line(r, opt.profile));
        }
        std::fflush(stdout);
        fmt::print(stderr,
                   "attnbench: error: {}\nattnbench: rerun with --resume (scripts/resume_sweep.sh does): the other "
                   "configurations of {} are then skipped\n",
                   message, c.row->name);
        std::fflush(stderr);
        std::_Exit(exit_sticky);  // no unwinding: a cudaFree behind the hung kernel would block forever
      });
      if (guard) {
        const result_entry crash = fault_entry(
            c, model, fmt::format("crashed: signal {} while this configuration ran", crash_signal_placeholder),
            "crash");
        guard->arm(crash.json.dump() + "\n",
                   fmt::format("attnbench: error: {} crashed the process (signal {}); its entry is in {}; rerun with "
                               "--resume: the other configurations of {} are then skipped\n",
                               c.name, crash_signal_placeholder, log->path(), c.row->name));
      }
      m = run_configuration(be, c, cache, opt);
      if (guard) guard->disarm();
      set_wait_expired_handler({});
    }
    result_entry r = make_result(c, std::move(m), model);
    if (r.m.sticky) r.json[row_fault_field] = "device_error";
    if (quarantined) {
      r.json[quarantined_by_field] = quarantine.at(key).config;
      ++tot.quarantined;
    }
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

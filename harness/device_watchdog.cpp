#include "harness/device_watchdog.hpp"

#include <fmt/format.h>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "core/errors.hpp"
#include "harness/cli.hpp"

namespace attnbench {

namespace {

device_deadline& deadline_slot() {
  // Until a sweep sets it: the floor from $ATTNBENCH_WAIT_TIMEOUT_S when valid (`run --repeat`,
  // `ceilings`); a bad value is reported by the sweep, which reads it with wait_floor_from_env().
  static device_deadline d = [] {
    device_deadline init;
    try {
      init.floor_s = wait_floor_from_env();
    } catch (const std::exception&) {
    }
    return init;
  }();
  return d;
}

wait_expired_handler& handler_slot() {
  static wait_expired_handler h;
  return h;
}

std::string seconds_text(double s) {
  if (s >= 1) return fmt::format("{:.3g} s", s);
  if (s >= 1e-3) return fmt::format("{:.3g} ms", s * 1e3);
  return fmt::format("{:.3g} us", s * 1e6);
}

}  // namespace

std::string device_deadline::describe(std::int64_t launches) const {
  if (bound_s <= 0) return fmt::format("{} (the floor; no model bound at known peaks)", seconds_text(floor_s));
  return fmt::format("max({}, {:g} x {} model bound x {} launch{}) = {}", seconds_text(floor_s), factor,
                     seconds_text(bound_s), launches, launches == 1 ? "" : "es", seconds_text(for_launches(launches)));
}

double wait_floor_from_env() {
  const char* v = std::getenv("ATTNBENCH_WAIT_TIMEOUT_S");
  if (!v || !*v) return default_wait_floor_s;
  char* end = nullptr;
  const double s = std::strtod(v, &end);
  if (end == v || *end != '\0' || !std::isfinite(s) || s <= 0)
    throw input_error(fmt::format("ATTNBENCH_WAIT_TIMEOUT_S '{}' is not a positive number of seconds", v));
  return s;
}

double model_bound_s(const model_figures& m, dtype t, const nlohmann::json& theoretical) {
  if (!theoretical.is_object()) return 0;
  double compute = 0, memory = 0;
  if (theoretical.contains("tflops") && theoretical["tflops"].is_object()) {
    const nlohmann::json& tf = theoretical["tflops"];
    double peak = 0;
    const std::string key(to_string(t));
    if (tf.contains(key) && tf[key].is_number() && tf[key].get<double>() > 0) {
      peak = tf[key].get<double>();
    } else {  // no peak for this dtype: the slowest listed, so the bound errs long
      peak = std::numeric_limits<double>::infinity();
      for (const auto& [k, v] : tf.items())
        if (v.is_number() && v.get<double>() > 0) peak = std::min(peak, v.get<double>());
      if (!std::isfinite(peak)) peak = 0;
    }
    if (peak > 0) compute = std::max(m.flops_executed, m.flops) / (peak * 1e12);
  }
  if (theoretical.contains("bandwidth_gbps") && theoretical["bandwidth_gbps"].is_number() &&
      theoretical["bandwidth_gbps"].get<double>() > 0)
    memory = m.bytes / (theoretical["bandwidth_gbps"].get<double>() * 1e9);
  const double b = std::max(compute, memory);
  return std::isfinite(b) && b > 0 ? b : 0;
}

void set_current_deadline(const device_deadline& d) { deadline_slot() = d; }
const device_deadline& current_deadline() { return deadline_slot(); }

void set_wait_expired_handler(wait_expired_handler h) { handler_slot() = std::move(h); }

void device_wait_expired(const std::string& what, double waited_s, const std::string& limit) {
  const std::string message = fmt::format(
      "{}{} did not complete within {} (waited {}); the device cannot be "
      "trusted after this, the process ends",
      timeout_prefix, what, limit, seconds_text(waited_s));
  if (const wait_expired_handler& h = handler_slot()) h(message);
  std::fflush(stdout);
  std::fprintf(stderr, "attnbench: error: %s\n", message.c_str());
  std::fflush(stderr);
  // No unwinding and no atexit: a cudaFree or CUDA's teardown behind a hung kernel blocks forever.
  std::_Exit(exit_sticky);
}

}  // namespace attnbench

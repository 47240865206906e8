#include "harness/exp_ceiling.hpp"

#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <string>

#include "harness/datasheet.hpp"
#include "kernels/cpu/exp_throughput.hpp"

namespace attnbench {

using nlohmann::json;

namespace {

json (*cuda_measure)() = nullptr;

double seconds_of(std::int64_t steps, cpu::exp_chains_result* r) {
  const auto t0 = std::chrono::steady_clock::now();
  *r = cpu::run_exp_chains(steps);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// 16 exp2 per clock per SM (CUDA C++ Programming Guide, arithmetic instruction throughput:
// exp2 on compute capabilities 8.x and 9.0); other architectures are not assumed.
bool mufu16(const std::string& cc) { return cc.rfind("8.", 0) == 0 || cc == "9.0"; }

}  // namespace

json measure_exp_ceiling_cpu() {
  // A warm-up (the OpenMP threads start), then the size of a run grows x4 until the faster of
  // two takes 10 ms, is scaled to ~20 ms (never below that size), and the best of 5 counts.
  // Noise (a loaded machine) only lengthens runs: the minima keep it out of the size and rate.
  constexpr double target_s = 0.02;
  cpu::exp_chains_result r;
  seconds_of(256, &r);
  std::int64_t steps = 4096;
  auto fastest_of_two = [&](std::int64_t n) { return std::min(seconds_of(n, &r), seconds_of(n, &r)); };
  double t = fastest_of_two(steps);
  while (t < 0.01 && steps < (std::int64_t{1} << 30)) {
    steps *= 4;
    t = fastest_of_two(steps);
  }
  steps = std::max(steps, static_cast<std::int64_t>(static_cast<double>(steps) * target_s / std::max(t, 1e-9)));
  double best = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    best = std::min(best, seconds_of(steps, &r));
    if (r.first_wrong >= 0) break;
  }
  json method = {{"function", r.path},
                 {"threads", r.threads},
                 {"chains_per_thread", cpu::exp_chain_lanes},
                 {"steps", steps},
                 {"exps_per_run", r.exps},
                 {"runs", 5},
                 {"checked", "every chain's final value against the scalar exp_approx chain"}};
  if (r.first_wrong >= 0) {
    method["error"] = fmt::format("chain {} of {} ended off its value: the exp ceiling is not recorded", r.first_wrong,
                                  r.exps / steps);
    return {{"exps_per_s", nullptr}, {"exp_method", method}};
  }
  return {{"exps_per_s", static_cast<double>(r.exps) / best}, {"exp_method", method}};
}

void register_cuda_exp_ceiling(json (*measure)()) { cuda_measure = measure; }

json theoretical_exp_ceiling(const json& c) {
  const std::string device = c.contains("device") && c["device"].is_string() ? c["device"].get<std::string>() : "";
  if (const datasheet_part* d = find_datasheet(device))
    return {{"exps_per_s", datasheet_exps_per_s(*d)},
            {"exp_source", fmt::format("datasheet: {}: {} SMs x 16 exp2/clock x {:.0f} MHz (the clock of its "
                                       "dense tensor figures)",
                                       d->part, d->sms, d->clock_mhz)}};
  const json info = c.value("device_info", json::object());
  if (!info.is_object() || !info.contains("sm_count") || !info.contains("sm_clock_mhz") ||
      !info.contains("compute_capability") || !info["compute_capability"].is_string() ||
      !mufu16(info["compute_capability"].get<std::string>()) || !info["sm_count"].is_number() ||
      !info["sm_clock_mhz"].is_number())
    return nullptr;
  const double sms = info["sm_count"].get<double>(), mhz = info["sm_clock_mhz"].get<double>();
  return {{"exps_per_s", sms * mufu_exp2_per_clock_per_sm * mhz * 1e6},
          {"exp_source", fmt::format("{:.0f} SMs x 16 exp2/clock x max clock {:.0f} MHz (an upper bound)", sms, mhz)}};
}

void add_exp_ceilings(json& c, backend_kind kind, bool measure) {
  if (!c.is_object()) return;
  json& ceil = c["ceilings"];
  if (!ceil.is_object()) ceil = json::object();
  if (kind == backend_kind::cuda && !(ceil.contains("theoretical") && ceil["theoretical"].is_object() &&
                                      ceil["theoretical"].contains("exps_per_s"))) {
    const json t = theoretical_exp_ceiling(c);
    if (!t.is_null()) {
      if (!ceil.contains("theoretical") || !ceil["theoretical"].is_object()) ceil["theoretical"] = json::object();
      ceil["theoretical"].update(t);
    }
  }
  if (!measure) return;
  if (ceil.contains("measured") && ceil["measured"].is_object() && ceil["measured"].contains("exps_per_s")) return;
  json m;
  if (kind == backend_kind::cpu)
    m = measure_exp_ceiling_cpu();
  else if (cuda_measure)
    m = cuda_measure();
  if (m.is_null()) return;
  if (!ceil.contains("measured") || !ceil["measured"].is_object()) ceil["measured"] = json::object();
  ceil["measured"].update(m);
}

}  // namespace attnbench

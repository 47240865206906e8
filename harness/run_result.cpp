#include "harness/run_result.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <numeric>

namespace attnbench {

time_stats stats_of(std::vector<double> v) {
  time_stats s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  s.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  s.min = v.front();
  s.max = v.back();
  if (n > 1) {
    const double mean = std::accumulate(v.begin(), v.end(), 0.0) / n;
    double ss = 0;
    for (double x : v) ss += (x - mean) * (x - mean);
    s.cv = mean > 0 ? std::sqrt(ss / (n - 1)) / mean : 0;
  }
  return s;
}

std::optional<model_figures> model_of(const variant& row, const problem& p) {
  // A row that does not run p's pass has no model of it (its model is of the passes it runs).
  if (!row.model || !(row.caps.passes & pass_feature_of(p.pass))) return std::nullopt;
  try {
    return row.model(p);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

entry_figures figures_of(const measurement& m, const std::optional<model_figures>& model) {
  entry_figures f;
  f.time = stats_of(m.time.rep_ms);
  f.cpu = stats_of(m.time.rep_cpu_ms);
  const double flops = model && std::isfinite(model->flops) ? model->flops : NAN;
  const double bytes = model && std::isfinite(model->bytes) ? model->bytes : NAN;
  f.intensity = bytes > 0 ? flops / bytes : NAN;
  f.timed = m.status == "ok" && f.time.median > 0;
  const double s = f.time.median * 1e-3;
  f.tflops = f.timed ? flops / s / 1e12 : NAN;
  f.gbps = f.timed ? bytes / s / 1e9 : NAN;
  return f;
}

}  // namespace attnbench

#include "harness/json_output.hpp"

#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>

#include "harness/entry_set.hpp"
#include "harness/tensors.hpp"
#include "kernels/models/models.hpp"

namespace attnbench {

using nlohmann::json;

static json number_or_null(double x) { return std::isfinite(x) ? json(x) : json(nullptr); }

template <class F>
static json model_value(const F& f, const problem& p) {
  if constexpr (requires { static_cast<bool>(f); } && !std::is_pointer_v<F> && !std::is_function_v<F>)
    if (!f) return nullptr;
  try {
    return number_or_null(static_cast<double>(f(p)));
  } catch (const std::exception&) {
    return nullptr;
  }
}

json make_entry(const configuration& c, const measurement& m) { return make_entry(c, m, model_of(*c.row, c.p)); }

json make_entry(const configuration& c, const measurement& m, const std::optional<model_figures>& model) {
  const problem& p = c.p;
  const variant& v = *c.row;
  const bool ran = m.status == "ok";
  json e;
  e["name"] = c.name;
  e["run_name"] = c.name;
  e["run_type"] = "aggregate";
  e["aggregate_name"] = "median";
  e["repetitions"] = static_cast<std::int64_t>(m.time.rep_ms.size());
  e["iterations"] = m.time.iterations;
  const entry_figures f = figures_of(m, model);
  const time_stats& t = f.time;
  e["real_time"] = ran ? t.median : 0.0;
  e["cpu_time"] = ran ? f.cpu.median : 0.0;
  e["time_unit"] = "ms";
  e["label"] = fmt::format("{} {} {} mask:{} group:{}", v.name, to_string(v.backend),
                           to_string(p.type), to_string(p.mask), c.group);
  if (!ran) {
    e["error_occurred"] = true;
    e["error_message"] = m.message;
  }
  e["variant"] = v.name;
  e["backend"] = std::string(to_string(v.backend));
  e["dtype"] = std::string(to_string(p.type));
  e["mask"] = to_string(p.mask);
  e["group"] = c.group;
  e["status"] = m.status;
  e["B"] = p.B;
  e["H"] = p.H;
  e["Hkv"] = p.Hkv;
  e["Nq"] = p.Nq;
  e["Nkv"] = p.Nkv;
  e["d"] = p.d;
  e["Br"] = p.Br;
  e["Bc"] = p.Bc;
  e["flops"] = model ? number_or_null(model->flops) : json(nullptr);
  e["flops_executed"] = model ? number_or_null(model->flops_executed) : json(nullptr);
  e["bytes"] = model ? number_or_null(model->bytes) : json(nullptr);
  e["bytes_min"] = model_value(model_bytes_min, p);
  e["bytes_counted"] = m.val.counted_bytes >= 0 ? json(m.val.counted_bytes) : json(nullptr);
  e["intensity"] = number_or_null(f.intensity);
  if (f.timed) {
    e["time_ms"] = t.median;
    e["time_ms_min"] = t.min;
    e["time_ms_max"] = t.max;
    e["time_cv"] = t.cv;
    e["tflops"] = number_or_null(f.tflops);
    e["gbps"] = number_or_null(f.gbps);
  } else {
    for (const char* k : {"time_ms", "time_ms_min", "time_ms_max", "time_cv", "tflops", "gbps"})
      e[k] = nullptr;
  }
  e["batch"] = m.time.batch;
  if (m.val.checked) {
    e["rel_err"] = number_or_null(m.val.rel_err);
    e["max_abs_err"] = number_or_null(m.val.max_abs_err);
    e["lse_err"] = v.writes_lse ? number_or_null(m.val.lse_err) : json(nullptr);
    e["checked_rows"] = m.val.checked_rows;
    e["tolerance"] = m.val.tolerance;
    e["err_ok"] = m.val.err_ok;
  } else {
    e["rel_err"] = nullptr;
    e["max_abs_err"] = nullptr;
    e["lse_err"] = nullptr;
    e["checked_rows"] = 0;
    e["tolerance"] = sweep_tolerance(p.type);
    e["err_ok"] = nullptr;
  }
  return e;
}

std::string entry_line(const json& e) {
  const std::string name = e.value("name", "?");
  const std::string status = e.value("status", "?");
  if (status != "ok") return fmt::format("{:<90} {}: {}", name, status, e.value("error_message", ""));
  auto num = [&](const char* k) { return e.contains(k) && e[k].is_number() ? e[k].get<double>() : NAN; };
  std::string err = e["rel_err"].is_number() ? fmt::format("{:.1e}", num("rel_err")) : "nan";
  const bool ok = e["err_ok"].is_boolean() && e["err_ok"].get<bool>();
  return fmt::format("{:<90} {:10.4f} ms {:8.3f} TFLOP/s {:8.1f} GB/s  err {} {}", name, num("time_ms"),
                     num("tflops"), num("gbps"), err, ok ? "ok" : "ABOVE TOLERANCE");
}

json assemble_results(const json& context, const std::vector<json>& entries) {
  entry_set unique;
  for (const auto& e : entries) unique.put(e);
  return {{"context", context}, {"benchmarks", unique.entries()}};
}

void write_json_file(const std::string& path, const json& j) {
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream o(tmp, std::ios::trunc);
    if (!o) throw input_error(fmt::format("cannot write '{}'", path));
    o << j.dump(2) << "\n";
    if (!o) throw input_error(fmt::format("cannot write '{}'", path));
  }
  std::filesystem::rename(tmp, path);
}

json read_results_file(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw input_error(fmt::format("cannot read results file '{}'", path));
  json j = json::parse(f, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("context") || !j.contains("benchmarks") ||
      !j["benchmarks"].is_array())
    throw input_error(fmt::format("'{}' is not an attnbench results file", path));
  return j;
}

json merge_results(const std::vector<std::string>& paths) {
  if (paths.empty()) throw input_error("merge needs at least one results file");
  json context;
  json shards = json::array();
  std::vector<json> entries;
  for (const auto& path : paths) {
    json j = read_results_file(path);
    const json& c = j["context"];
    if (context.is_null()) context = c;
    json s = {{"file", path}};
    for (const char* k : {"shard", "host", "device", "backend", "git_commit", "date", "preset"})
      if (c.contains(k)) s[k] = c[k];
    s["entries"] = j["benchmarks"].size();
    shards.push_back(s);
    for (auto& e : j["benchmarks"]) entries.push_back(std::move(e));
  }
  context.erase("shard");
  context["shards"] = shards;
  return assemble_results(context, entries);
}

}  // namespace attnbench

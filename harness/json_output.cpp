#include "harness/json_output.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>

#include "harness/entry_schema.hpp"
#include "harness/entry_set.hpp"
#include "harness/json_read.hpp"
#include "harness/safe_write.hpp"
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

namespace {

// The pass of every entry and, of those that ran, the memory the run allocated (the row's
// memory_bytes, what admission held against free memory: a backward adds dO, dQ, dK, dV and
// its workspace); the gradient errors of bwd / fwd_bwd entries (docs/backward.md).
void add_backward_fields(json& e, const variant& row, const problem& p, const measurement& m) {
  const validation_result& v = m.val;
  e["pass"] = std::string(to_string(p.pass));
  e["memory_bytes"] = nullptr;
  if (m.status == "ok" && row.memory_bytes) {
    try {
      e["memory_bytes"] = row.memory_bytes(p);
    } catch (const std::exception&) {  // null: not known
    }
  }
  if (p.pass == pass_kind::fwd) return;
  const bool c = v.grads_checked;
  e["dq_err"] = c ? number_or_null(v.dq_err) : json(nullptr);
  e["dk_err"] = c ? number_or_null(v.dk_err) : json(nullptr);
  e["dv_err"] = c ? number_or_null(v.dv_err) : json(nullptr);
  e["grad_err"] = c ? number_or_null(v.grad_err) : json(nullptr);
  e["grad_tolerance"] = c ? v.grad_tolerance : grad_tolerance(p.type);
  e["grad_nonfinite"] = c ? json(v.grad_nonfinite) : json(nullptr);
  e["grad_checked_rows"] = c ? v.grad_checked_rows : 0;
}

// Rows with phases (routing): each phase's model figures and its share of the run's time,
// measured by the runner over every run of the configuration (validation, warm-up and
// timed runs), so no second timing loop; time_ms is that share of the median.
json phases_json(const variant& row, const problem& p, const measurement& m, const entry_figures& f) {
  std::vector<model_phase> model;
  try {
    model = row.model_phases(p);
  } catch (const std::exception&) {
    return nullptr;
  }
  double total = 0;
  for (const phase_time& t : m.phases) total += t.seconds;
  json out = json::object();
  for (const model_phase& ph : model) {
    const auto t =
        std::find_if(m.phases.begin(), m.phases.end(), [&](const phase_time& x) { return x.name == ph.name; });
    const bool timed = f.timed && t != m.phases.end() && total > 0;
    const double share = timed ? t->seconds / total : NAN;
    out[ph.name] = {{"share", number_or_null(share)},
                    {"time_ms", number_or_null(share * f.time.median)},
                    {"flops", number_or_null(ph.figures.flops)},
                    {"bytes", number_or_null(ph.figures.bytes)},
                    {"exps", number_or_null(ph.figures.exps)}};
  }
  return out;
}

}  // namespace

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
  e["label"] = fmt::format("{} {} {} mask:{} group:{}", v.name, to_string(v.backend), to_string(p.type),
                           to_string(p.mask), c.group);
  if (!ran) {
    e["error_occurred"] = true;
    e["error_message"] = m.message;
  }
  e["variant"] = v.name;
  e["backend"] = std::string(to_string(v.backend));
  e["dtype"] = std::string(to_string(p.type));
  e["out_dtype"] = std::string(to_string(output_dtype(p.type)));
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
  if (reads_state_axes(v.math)) {  // the state axes it reads (docs/alternatives.md)
    e["dstate"] = p.dstate;
    e["ngroups"] = p.ngroups;
  }
  e["flops"] = model ? number_or_null(model->flops) : json(nullptr);
  e["flops_executed"] = model ? number_or_null(model->flops_executed) : json(nullptr);
  e["bytes"] = model ? number_or_null(model->bytes) : json(nullptr);
  e["bytes_min"] = model_value(model_bytes_min, p);
  e["exps"] = model ? number_or_null(model->exps) : json(nullptr);  // the exp roof's count
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
    for (const char* k : {"time_ms", "time_ms_min", "time_ms_max", "time_cv", "tflops", "gbps"}) e[k] = nullptr;
  }
  e["batch"] = m.time.batch;
  if (m.val.checked) {
    e["rel_err"] = number_or_null(m.val.rel_err);
    e["e2e_rel_err"] = number_or_null(m.val.e2e_rel_err);
    e["max_abs_err"] = number_or_null(m.val.max_abs_err);
    e["lse_err"] = v.writes_lse ? number_or_null(m.val.lse_err) : json(nullptr);
    e["checked_rows"] = m.val.checked_rows;
    e["tolerance"] = m.val.tolerance;
    e["err_ok"] = m.val.err_ok;
    e["approx_err_vs_exact"] = number_or_null(m.val.approx_err_vs_exact);
  } else {
    e["rel_err"] = nullptr;
    e["e2e_rel_err"] = nullptr;
    e["max_abs_err"] = nullptr;
    e["lse_err"] = nullptr;
    e["checked_rows"] = 0;
    e["tolerance"] = sweep_tolerance(p.type);
    e["err_ok"] = nullptr;
    e["approx_err_vs_exact"] = nullptr;
  }
  // The check of every output: rows_total and row_tolerance always; the rest
  // once validated (also for an entry that failed on bad output elements).
  e["rows_total"] = p.rows();
  e["row_tolerance"] = m.val.checked ? m.val.row_tolerance : row_tolerance(p.type);
  if (m.val.checked) {
    e["rows_checked"] = m.val.rows_checked;
    e["nonfinite_outputs"] = m.val.nonfinite_outputs;
    const bool worst = m.val.worst_row >= 0;
    e["worst_row_err"] = worst ? number_or_null(m.val.worst_row_err) : json(nullptr);
    const row_position& at = m.val.worst_at;
    e["worst_row"] = worst ? json{{"b", at.b}, {"h", at.h}, {"i", at.i}} : json(nullptr);
  } else {
    e["rows_checked"] = 0;
    e["nonfinite_outputs"] = nullptr;
    e["worst_row_err"] = nullptr;
    e["worst_row"] = nullptr;
  }
  add_backward_fields(e, v, p, m);
  if (v.model_phases) e["phases"] = phases_json(v, p, m, f);
  // e4m3 entries only: the scales of the inputs it was validated on; null when none were made.
  if (p.type == dtype::e4m3)
    e["input_scales"] =
        m.val.scales ? json{{"q", m.val.scales->q}, {"k", m.val.scales->k}, {"v", m.val.scales->v}} : json(nullptr);
  return e;
}

std::string worst_row_text(double err, std::int64_t b, std::int64_t h, std::int64_t i) {
  return fmt::format(" worst row {:.1e} at (b {}, h {}, row {})", err, b, h, i);
}

std::string entry_line(const json& e) {
  const std::string name = e.value("name", "?");
  const std::string status = e.value("status", "?");
  if (status != "ok") return fmt::format("{:<90} {}: {}", name, status, e.value("error_message", ""));
  auto num = [&](const char* k) { return e.contains(k) && e[k].is_number() ? e[k].get<double>() : NAN; };
  std::string err = e["rel_err"].is_number() ? fmt::format("{:.1e}", num("rel_err")) : "nan";
  const bool ok = e["err_ok"].is_boolean() && e["err_ok"].get<bool>();
  // Rounded inputs (bf16, fp16, e4m3): also the error against the unrounded fp32
  // inputs, when it differs (console_line's rule).
  const double e2e_err = num("e2e_rel_err"), rel = num("rel_err");
  const std::string e2e =
      std::isfinite(e2e_err) && std::isfinite(rel) && e2e_err != rel ? fmt::format(" (e2e {:.1e})", e2e_err) : "";
  // A worst row above its tolerance, as console_line prints it.
  std::string worst;
  if (e.contains("worst_row") && e["worst_row"].is_object() && num("worst_row_err") > num("row_tolerance"))
    worst = worst_row_text(num("worst_row_err"), e["worst_row"].value("b", std::int64_t{0}),
                           e["worst_row"].value("h", std::int64_t{0}), e["worst_row"].value("i", std::int64_t{0}));
  return fmt::format("{:<90} {:10.4f} ms {:8.3f} TFLOP/s {:8.1f} GB/s  err {}{}{} {}", name, num("time_ms"),
                     num("tflops"), num("gbps"), err, e2e, worst, ok ? "ok" : "ABOVE TOLERANCE");
}

json assemble_results(const json& context, const std::vector<json>& entries) {
  entry_set unique;
  for (const auto& e : entries) unique.put(e);
  return {{"context", context}, {"benchmarks", unique.entries()}};
}

void write_json_file(const std::string& path, const json& j) { write_file_atomically(path, j.dump(2) + "\n"); }

namespace {

// The benchmarks of a result file: each a valid entry (entry_schema.hpp).
void check_results(const std::string& path, const json& j) {
  if (!j.is_object() || !j.contains("context") || !j.contains("benchmarks"))
    throw input_error(fmt::format("'{}' is not an attnbench results file (needs 'context' and 'benchmarks')", path));
  if (!j["context"].is_object())
    throw input_error(fmt::format("{}: field 'context' is {}, expected an object", path, j["context"].type_name()));
  if (!j["benchmarks"].is_array())
    throw input_error(
        fmt::format("{}: field 'benchmarks' is {}, expected an array", path, j["benchmarks"].type_name()));
  const json& c = j["context"];
  for (const char* k : {"shard", "host", "device", "backend", "git_commit", "date", "preset"})
    if (c.contains(k) && !c[k].is_string())
      throw input_error(fmt::format("{}: field 'context.{}' is {}, expected a string", path, k, c[k].type_name()));
  const json& b = j["benchmarks"];
  if (b.size() > max_result_entries)
    throw input_error(
        fmt::format("{}: {} benchmarks, more than the largest accepted {}", path, b.size(), max_result_entries));
  for (std::size_t i = 0; i < b.size(); ++i)
    if (const std::string why = entry_schema_error(b[i]); !why.empty()) {
      const std::string name = b[i].is_object() && b[i].contains("name") && b[i]["name"].is_string()
                                   ? fmt::format(" ('{}')", b[i]["name"].get<std::string>())
                                   : std::string();
      throw input_error(fmt::format("{}: benchmarks[{}]{}: {}", path, i, name, why));
    }
}

}  // namespace

json read_results_file(const std::string& path) {
  json j = read_json_file(path, "results file");
  check_results(path, j);
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

#include "harness/entry_schema.hpp"

#include <fmt/format.h>

namespace attnbench {

using nlohmann::json;

namespace {

constexpr const char* string_fields[] = {"name", "variant", "backend", "dtype", "mask", "group", "status"};
constexpr const char* count_fields[] = {"B", "H", "Hkv", "Nq", "Nkv", "d", "Br", "Bc", "checked_rows", "batch"};
constexpr const char* number_fields[] = {"real_time", "cpu_time", "iterations", "repetitions", "tolerance"};
constexpr const char* number_or_null_fields[] = {
    "flops",       "flops_executed", "bytes",  "bytes_min", "bytes_counted", "intensity",   "time_ms", "time_ms_min",
    "time_ms_max", "time_cv",        "tflops", "gbps",      "rel_err",       "max_abs_err", "lse_err"};

std::string shown(const json& v) {
  std::string s = v.dump();
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

std::string missing_or(const json& e, const char* k, const char* expected) {
  if (!e.contains(k)) return fmt::format("field '{}' is missing", k);
  return fmt::format("field '{}' is {}, expected {}", k, shown(e[k]), expected);
}

}  // namespace

std::string entry_schema_error(const json& e) {
  if (!e.is_object()) return fmt::format("the entry is {}, expected an object", e.type_name());
  for (const char* k : string_fields)
    if (!e.contains(k) || !e[k].is_string() || e[k].get_ref<const std::string&>().empty())
      return missing_or(e, k, "a non-empty string");
  const auto& status = e["status"].get_ref<const std::string&>();
  if (status != "ok" && status != "skipped" && status != "failed")
    return missing_or(e, "status", "ok, skipped or failed");
  for (const char* k : count_fields)
    if (!e.contains(k) || !e[k].is_number_integer() || e[k].get<std::int64_t>() < 0)
      return missing_or(e, k, "a non-negative integer");
  for (const char* k : number_fields)
    if (!e.contains(k) || !e[k].is_number()) return missing_or(e, k, "a number");
  for (const char* k : number_or_null_fields)
    if (!e.contains(k) || !(e[k].is_number() || e[k].is_null())) return missing_or(e, k, "a number or null");
  if (!e.contains("err_ok") || !(e["err_ok"].is_boolean() || e["err_ok"].is_null()))
    return missing_or(e, "err_ok", "true, false or null");
  if (status != "ok" && (!e.contains("error_message") || !e["error_message"].is_string()))
    return missing_or(e, "error_message", "a string (status not ok)");
  // The end-to-end error, absent from older files (and peers' entries): checked when present.
  if (e.contains("e2e_rel_err") && !(e["e2e_rel_err"].is_number() || e["e2e_rel_err"].is_null()))
    return missing_or(e, "e2e_rel_err", "a number or null");
  // The distance of an approximation to exact attention, absent from older files.
  if (e.contains("approx_err_vs_exact") &&
      !(e["approx_err_vs_exact"].is_number() || e["approx_err_vs_exact"].is_null()))
    return missing_or(e, "approx_err_vs_exact", "a number or null");
  // The phases of rows that time them apart (routing), absent for the others: an object when present.
  if (e.contains("phases") && !e["phases"].is_object()) return missing_or(e, "phases", "an object");
  // The exp roof's exps, absent from older files: a non-negative number or null when present.
  if (e.contains("exps") && !(e["exps"].is_null() || (e["exps"].is_number() && e["exps"].get<double>() >= 0)))
    return missing_or(e, "exps", "a non-negative number or null");
  if (e.contains("out_dtype") && (!e["out_dtype"].is_string() || e["out_dtype"].get_ref<const std::string&>().empty()))
    return missing_or(e, "out_dtype", "a non-empty string");
  // The fields of the check of every output, absent from older files: checked when present.
  for (const char* k : {"rows_total", "rows_checked"})
    if (e.contains(k) && !(e[k].is_number_integer() && e[k].get<std::int64_t>() >= 0))
      return missing_or(e, k, "a non-negative integer");
  if (e.contains("nonfinite_outputs") && !e["nonfinite_outputs"].is_null() &&
      !(e["nonfinite_outputs"].is_number_integer() && e["nonfinite_outputs"].get<std::int64_t>() >= 0))
    return missing_or(e, "nonfinite_outputs", "a non-negative integer or null");
  if (e.contains("worst_row_err") && !(e["worst_row_err"].is_number() || e["worst_row_err"].is_null()))
    return missing_or(e, "worst_row_err", "a number or null");
  if (e.contains("row_tolerance") && !e["row_tolerance"].is_number()) return missing_or(e, "row_tolerance", "a number");
  if (e.contains("worst_row") && !e["worst_row"].is_null()) {
    const json& w = e["worst_row"];
    if (!w.is_object()) return missing_or(e, "worst_row", "an object {b, h, i} or null");
    for (const char* k : {"b", "h", "i"})
      if (!w.contains(k) || !w[k].is_number_integer() || w[k].get<std::int64_t>() < 0)
        return fmt::format("field 'worst_row.{}' is {}, expected a non-negative integer", k,
                           w.contains(k) ? shown(w[k]) : "missing");
  }
  // The backward pass's fields, absent from older files: checked when present.
  if (e.contains("pass")) {
    const json& p = e["pass"];
    if (!p.is_string() || (p != "fwd" && p != "bwd" && p != "fwd_bwd"))
      return missing_or(e, "pass", "fwd, bwd or fwd_bwd");
  }
  if (e.contains("memory_bytes") && !e["memory_bytes"].is_null() &&
      !(e["memory_bytes"].is_number_integer() && e["memory_bytes"].get<std::int64_t>() >= 0))
    return missing_or(e, "memory_bytes", "a non-negative integer or null");
  for (const char* k : {"dq_err", "dk_err", "dv_err", "grad_err"})
    if (e.contains(k) && !(e[k].is_number() || e[k].is_null())) return missing_or(e, k, "a number or null");
  if (e.contains("input_scales") && !e["input_scales"].is_null()) {
    const json& s = e["input_scales"];
    if (!s.is_object()) return missing_or(e, "input_scales", "an object {q, k, v} or null");
    for (const char* k : {"q", "k", "v"})
      if (!s.contains(k) || !s[k].is_number() || !(s[k].get<double>() > 0))
        return fmt::format("field 'input_scales.{}' is {}, expected a positive number", k,
                           s.contains(k) ? shown(s[k]) : "missing");
  }
  return {};
}

}  // namespace attnbench

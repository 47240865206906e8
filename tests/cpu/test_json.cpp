// Runs tiny sweeps through the real code path (validation, Google Benchmark
// timing, results log) and checks every schema field of docs/json_schema.md.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "harness/bench_loop.hpp"
#include "harness/context.hpp"
#include "harness/json_output.hpp"
#include "harness_test_rows.hpp"
#include "test_entries.hpp"

using namespace attnbench;
using nlohmann::json;

namespace {

const char* const entry_fields[] = {"name",
                                    "run_name",
                                    "run_type",
                                    "aggregate_name",
                                    "repetitions",
                                    "iterations",
                                    "real_time",
                                    "cpu_time",
                                    "time_unit",
                                    "label",
                                    "variant",
                                    "backend",
                                    "dtype",
                                    "mask",
                                    "group",
                                    "status",
                                    "B",
                                    "H",
                                    "Hkv",
                                    "Nq",
                                    "Nkv",
                                    "d",
                                    "Br",
                                    "Bc",
                                    "flops",
                                    "flops_executed",
                                    "bytes",
                                    "bytes_min",
                                    "bytes_counted",
                                    "time_ms",
                                    "time_ms_min",
                                    "time_ms_max",
                                    "time_cv",
                                    "tflops",
                                    "gbps",
                                    "intensity",
                                    "rel_err",
                                    "e2e_rel_err",
                                    "max_abs_err",
                                    "lse_err",
                                    "checked_rows",
                                    "tolerance",
                                    "err_ok",
                                    "out_dtype",
                                    "rows_total",
                                    "rows_checked",
                                    "nonfinite_outputs",
                                    "worst_row_err",
                                    "worst_row",
                                    "row_tolerance"};

std::vector<configuration> tiny(const std::vector<variant>& rows, std::vector<std::string> names,
                                const char* masks = "none,causal") {
  sweep_axes a;
  a.variant = std::move(names);
  a.seq = {40};
  a.nkv = {72};  // Nq != Nkv, ragged against the 16-wide tiles
  a.heads = {4};
  a.kv_heads = {{2, 0}};
  a.head_dim = {16};
  a.block = {{16, 16}};
  a.mask = parse_mask_list(masks);
  return expand({"t", {{"tiny", a}}}, rows, backend_kind::cpu);
}

sweep_options quick_options() {
  sweep_options o;
  o.repetitions = 3;
  o.rep_time_s = 1e-3;
  o.quiet = true;
  return o;
}

std::string fresh(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / "attnbench_test_json";
  std::filesystem::create_directories(dir);
  std::filesystem::remove(dir / name);
  return (dir / name).string();
}

}  // namespace

TEST(json_output, ok_entry_has_every_schema_field) {
  auto be = make_cpu_backend();
  const auto configs = tiny(testing_rows::rows(), {"t_good"}, "causal");
  ASSERT_EQ(configs.size(), 1u);
  reference_cache cache;
  const measurement m = run_configuration(*be, configs[0], cache, quick_options());
  ASSERT_EQ(m.status, "ok") << m.message;
  const json e = make_entry(configs[0], m);
  for (const char* f : entry_fields) EXPECT_TRUE(e.contains(f)) << f;
  EXPECT_EQ(e["run_type"], "aggregate");
  EXPECT_EQ(e["aggregate_name"], "median");
  EXPECT_EQ(e["time_unit"], "ms");
  EXPECT_EQ(e["repetitions"], 3);
  EXPECT_GE(e["iterations"].get<int>(), 1);
  EXPECT_EQ(e["name"], "t_good/cpu/fp32/B:1/H:4/Hkv:2/Nq:40/Nkv:72/d:16/mask:causal/Br:16/Bc:16");
  EXPECT_EQ(e["mask"], "causal");
  EXPECT_EQ(e["group"], "tiny");
  EXPECT_EQ(e["Nkv"], 72);
  EXPECT_GT(e["time_ms"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(e["real_time"].get<double>(), e["time_ms"].get<double>());
  EXPECT_LE(e["time_ms_min"].get<double>(), e["time_ms"].get<double>());
  EXPECT_GE(e["time_ms_max"].get<double>(), e["time_ms"].get<double>());
  EXPECT_NEAR(e["tflops"].get<double>(), e["flops"].get<double>() / (e["time_ms"].get<double>() * 1e-3) / 1e12, 1e-12);
  EXPECT_NEAR(e["intensity"].get<double>(), e["flops"].get<double>() / e["bytes"].get<double>(), 1e-9);
  EXPECT_LT(e["rel_err"].get<double>(), 1e-6);
  EXPECT_LT(e["lse_err"].get<double>(), 1e-4);
  EXPECT_EQ(e["checked_rows"], 4 * 40);
  EXPECT_TRUE(e["err_ok"].get<bool>());
  EXPECT_EQ(e["bytes_counted"], 123);
  EXPECT_FALSE(e.contains("error_occurred"));
  EXPECT_EQ(e["out_dtype"], "fp32");
  EXPECT_EQ(e["e2e_rel_err"], e["rel_err"]);  // fp32: the inputs are the originals
  EXPECT_FALSE(e.contains("input_scales"));   // e4m3 entries only
}

TEST(json_output, skipped_failed_and_nan_entries) {
  auto be = make_cpu_backend();
  const auto configs = tiny(testing_rows::rows(), {"t_good", "t_nan", "t_fail", "t_huge"}, "local:4,0,none");
  reference_cache cache;
  std::map<std::string, json> by;
  for (const auto& c : configs) by[c.name] = make_entry(c, run_configuration(*be, c, cache, quick_options()));
  const std::string tail = "/cpu/fp32/B:1/H:4/Hkv:2/Nq:40/Nkv:72/d:16/mask:";
  const json& unsup = by["t_good" + tail + "local:4,0/Br:16/Bc:16"];
  EXPECT_EQ(unsup["status"], "skipped");
  EXPECT_EQ(unsup["error_occurred"], true);
  EXPECT_EQ(unsup["error_message"], "test row: no local masks");
  EXPECT_TRUE(unsup["time_ms"].is_null());
  EXPECT_TRUE(unsup["rel_err"].is_null());
  // A non-finite output fails the entry, validated but never timed.
  const json& nan = by["t_nan" + tail + "none/Br:16/Bc:16"];
  EXPECT_EQ(nan["status"], "failed");
  EXPECT_EQ(nan["error_message"], "non-finite outputs: 1 element in 1 row of 160, the first at (b 0, h 0, row 0)");
  EXPECT_TRUE(nan["rel_err"].is_null());
  EXPECT_EQ(nan["err_ok"], false);
  EXPECT_EQ(nan["nonfinite_outputs"], 1);
  EXPECT_TRUE(nan["time_ms"].is_null());
  const json& fail = by["t_fail" + tail + "none/Br:16/Bc:16"];
  EXPECT_EQ(fail["status"], "failed");
  EXPECT_EQ(fail["error_message"], "test row: launch failed");
  const json& huge = by["t_huge" + tail + "none/Br:16/Bc:16"];
  EXPECT_EQ(huge["status"], "skipped");
  EXPECT_NE(huge["error_message"].get<std::string>().find("GiB free"), std::string::npos);
  for (const auto& [name, e] : by)
    for (const char* f : entry_fields) EXPECT_TRUE(e.contains(f)) << name << " " << f;
}

TEST(json_output, errors_inside_the_timing_loop) {
  auto be = make_cpu_backend();
  const auto configs = tiny(testing_rows::rows(), {"t_late", "t_late_sticky"}, "none");
  ASSERT_EQ(configs.size(), 2u);
  reference_cache cache;
  sweep_options opt = quick_options();
  opt.rep_time_s = 1e-9;  // one iteration per repetition: run 3 falls inside the timing loop
  const measurement late = run_configuration(*be, configs[0], cache, opt);
  EXPECT_EQ(late.status, "failed");
  EXPECT_EQ(late.message, "test row: timeout in run 3");
  EXPECT_FALSE(late.sticky);
  const json e = make_entry(configs[0], late);
  EXPECT_LT(e["rel_err"].get<double>(), 1e-6);  // validated before the failure
  EXPECT_TRUE(e["time_ms"].is_null());
  const measurement sticky = run_configuration(*be, configs[1], cache, opt);
  EXPECT_EQ(sticky.status, "failed");
  EXPECT_TRUE(sticky.sticky);
}

TEST(json_output, sticky_error_stops_the_sweep_after_logging) {
  auto be = make_cpu_backend();
  const auto configs = tiny(testing_rows::rows(), {"t_good", "t_sticky"}, "none,causal");
  ASSERT_EQ(configs.size(), 4u);
  const std::string p = fresh("sticky.log.jsonl");
  results_log log(p, false);
  const sweep_totals t = run_sweep(*be, configs, &log, quick_options());
  EXPECT_TRUE(t.sticky_error);
  EXPECT_EQ(t.sticky_message, "test row: illegal address");
  const log_contents c = read_results_log(p);
  ASSERT_EQ(c.entries.size(), 2u);  // t_good/none, then t_sticky/none failed; nothing after
  EXPECT_EQ(c.entries[1]["status"], "failed");
}

TEST(json_output, real_registry_rows_validate_on_a_tiny_sweep) {
  auto be = make_cpu_backend();
  const auto configs = tiny(registry(), {}, "none,causal,local:8,0+global:4");
  ASSERT_FALSE(configs.empty());
  const std::string p = fresh("real.log.jsonl");
  results_log log(p, false);
  const sweep_totals t = run_sweep(*be, configs, &log, quick_options());
  EXPECT_EQ(t.failed, 0);
  EXPECT_EQ(t.above_tolerance, 0);
  EXPECT_GT(t.ok, 0);
  for (const auto& e : read_results_log(p).entries)
    if (e["status"] == "ok") {
      EXPECT_TRUE(e["err_ok"].get<bool>()) << e["name"];
      if (e["bytes_counted"].is_number())
        EXPECT_EQ(e["bytes_counted"].get<double>(), e["bytes"].get<double>()) << e["name"];
    }
}

TEST(json_output, context_and_assembly) {
  auto be = make_cpu_backend();
  run_facts f;
  f.preset = "quick";
  f.command_line = "attnbench sweep";
  f.repetitions = 3;
  const json c = make_context(*be, false, f);
  for (const char* k : {"date",   "host_name",          "executable",        "num_cpus", "mhz_per_cpu",
                        "caches", "library_build_type", "attnbench_version", "backend",  "device",
                        "host",   "git_commit",         "git_dirty",         "compiler", "build_type",
                        "preset", "command_line",       "device_info",       "ceilings", "timing"})
    EXPECT_TRUE(c.contains(k)) << k;
  EXPECT_EQ(c["backend"], "cpu");
  EXPECT_EQ(c["timing"]["clock"], "steady_clock");
  EXPECT_EQ(c["timing"]["l2_flush"], "none");
  EXPECT_EQ(c["git_commit"].get<std::string>().size() == 40 || c["git_commit"] == "unknown", true);

  const json r = assemble_results(c, {{{"name", "a"}, {"v", 1}}, {{"name", "b"}}, {{"name", "a"}, {"v", 2}}});
  ASSERT_EQ(r["benchmarks"].size(), 2u);
  EXPECT_EQ(r["benchmarks"][0]["v"], 2);  // the last entry of a name wins

  json c0 = c, c1 = c;
  c0["shard"] = "0/2";
  c1["shard"] = "1/2";
  const std::string a = fresh("s0.json"), b = fresh("s1.json");
  using testing_entries::valid_entry;
  write_json_file(a, assemble_results(c0, {valid_entry("x"), valid_entry("y")}));
  write_json_file(b, assemble_results(c1, {valid_entry("z"), valid_entry("y")}));
  const json m = merge_results({a, b});
  EXPECT_EQ(m["benchmarks"].size(), 3u);
  ASSERT_EQ(m["context"]["shards"].size(), 2u);
  EXPECT_EQ(m["context"]["shards"][1]["shard"], "1/2");
  EXPECT_FALSE(m["context"].contains("shard"));
  EXPECT_THROW(merge_results({fresh("missing.json")}), input_error);
}

TEST(json_output, stats_match_google_benchmark_median) {
  const time_stats s = stats_of({3, 1, 2, 10});
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 10);
  EXPECT_GT(s.cv, 0);
  EXPECT_DOUBLE_EQ(stats_of({5}).cv, 0);
}

TEST(json_output, slug_and_command_line) {
  EXPECT_EQ(slug("NVIDIA H200"), "nvidia-h200");
  EXPECT_EQ(slug("AMD EPYC 7B13 64-Core Processor"), "amd-epyc-7b13-64-core-processor");
  EXPECT_EQ(slug("///"), "unknown");
  char a0[] = "attnbench", a1[] = "--mask", a2[] = "local:1,1 x";
  char* argv[] = {a0, a1, a2};
  EXPECT_EQ(join_command_line(3, argv), "attnbench --mask 'local:1,1 x'");
}

// An approximation's entry carries its distance to exact softmax attention (information,
// not held to a tolerance: far above rel_err, and err_ok still true); an exact row's is null.
TEST(json_output, approximations_carry_their_distance_to_exact_attention) {
  auto be = make_cpu_backend();
  const auto configs = tiny(registry(), {"linformer", "performer", "flash2"}, "none");
  ASSERT_EQ(configs.size(), 3u);
  const std::string p = fresh("approx.log.jsonl");
  results_log log(p, false);
  const sweep_totals t = run_sweep(*be, configs, &log, quick_options());
  EXPECT_EQ(t.ok, 3);
  for (const auto& e : read_results_log(p).entries) {
    ASSERT_EQ(e["status"], "ok") << e["name"];
    EXPECT_TRUE(e["err_ok"].get<bool>()) << e["name"];
    if (e["variant"] == "flash2") {
      EXPECT_TRUE(e["approx_err_vs_exact"].is_null()) << e["name"];
    } else {
      ASSERT_TRUE(e["approx_err_vs_exact"].is_number()) << e["name"];
      EXPECT_GT(e["approx_err_vs_exact"].get<double>(), 1e3 * e["tolerance"].get<double>()) << e["name"];
      EXPECT_LT(e["rel_err"].get<double>(), e["tolerance"].get<double>()) << e["name"];
    }
  }
}

// The routing row's entry splits its time and model into phases (routing, attention) from the
// runs already made: shares summing to 1, times to the median, figures to the entry's; other
// rows carry no phases.
TEST(json_output, routing_entry_carries_its_phases) {
  auto be = make_cpu_backend();
  const auto configs = tiny(registry(), {"routing", "flash2"}, "causal");
  ASSERT_EQ(configs.size(), 2u);
  const std::string p = fresh("phases.log.jsonl");
  results_log log(p, false);
  EXPECT_EQ(run_sweep(*be, configs, &log, quick_options()).ok, 2);
  for (const auto& e : read_results_log(p).entries) {
    ASSERT_EQ(e["status"], "ok") << e["name"];
    if (e["variant"] == "flash2") {
      EXPECT_FALSE(e.contains("phases"));
      continue;
    }
    EXPECT_TRUE(e["approx_err_vs_exact"].is_number());
    const auto& ph = e["phases"];
    ASSERT_TRUE(ph.contains("routing") && ph.contains("attention")) << ph.dump();
    double share = 0, ms = 0, flops = 0, bytes = 0, exps = 0;
    for (const char* k : {"routing", "attention"}) {
      ASSERT_TRUE(ph[k]["share"].is_number()) << ph.dump();
      EXPECT_GT(ph[k]["share"].get<double>(), 0) << k;
      share += ph[k]["share"].get<double>();
      ms += ph[k]["time_ms"].get<double>();
      flops += ph[k]["flops"].get<double>();
      bytes += ph[k]["bytes"].get<double>();
      exps += ph[k]["exps"].get<double>();
    }
    EXPECT_NEAR(share, 1.0, 1e-12);
    EXPECT_NEAR(ms, e["time_ms"].get<double>(), 1e-9 * ms);
    EXPECT_EQ(flops, e["flops"].get<double>());
    EXPECT_EQ(bytes, e["bytes"].get<double>());
    EXPECT_EQ(exps, e["exps"].get<double>());
  }
}

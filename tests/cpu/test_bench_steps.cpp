// The steps of the bench loop one by one: admission (memory), the typed
// result and its console line, and one model evaluation per configuration.
#include <gtest/gtest.h>

#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <sstream>

#include "harness/bench_loop.hpp"
#include "harness_test_rows.hpp"
#include "test_entries.hpp"

using namespace attnbench;
using nlohmann::json;

namespace {

// Host-timed backend with a chosen kind and free memory.
class small_backend final : public backend {
 public:
  small_backend(backend_kind k, std::int64_t free) : kind_(k), free_(free) {}
  backend_kind kind() const override { return kind_; }
  json context(bool) override { return json::object(); }
  std::int64_t free_memory_bytes() override { return free_; }
  bool manual_time() const override { return false; }
  double timed_sample(runner&, int, const timing_options&) override { return 0; }
  void synchronize() override {}
  void range_push(const std::string&) override {}
  void range_pop() override {}

 private:
  backend_kind kind_;
  std::int64_t free_;
};

std::vector<configuration> tiny(const std::vector<variant>& rows, std::vector<std::string> names, const char* masks) {
  sweep_axes a;
  a.variant = std::move(names);
  a.seq = {24};
  a.heads = {2};
  a.head_dim = {16};
  a.block = {{16, 16}};
  a.mask = parse_mask_list(masks);
  return expand({"t", {{"tiny", a}}}, rows, backend_kind::cpu);
}

sweep_options quick_options() {
  sweep_options o;
  o.repetitions = 2;
  o.rep_time_s = 1e-3;
  o.quiet = true;
  return o;
}

std::string gib(double bytes) { return fmt::format("{:.2f} GiB", bytes / double(1 << 30)); }

std::string fresh(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / "attnbench_test_steps";
  std::filesystem::create_directories(dir);
  std::filesystem::remove(dir / name);
  return (dir / name).string();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

}  // namespace

TEST(admission, skips_what_does_not_fit_naming_the_bytes) {
  const auto configs = tiny(testing_rows::rows(), {"t_good", "t_huge"}, "none");
  ASSERT_EQ(configs.size(), 2u);
  const configuration& good = configs[0];
  const configuration& huge = configs[1];
  const memory_need n = memory_need_of(good);
  EXPECT_EQ(n.run_bytes, double(good.row->memory_bytes(good.p)));
  EXPECT_GT(n.host_bytes, 0);
  // Rounded inputs keep their fp32 originals too (the e2e reference): the inputs count twice.
  configuration rounded = good;
  rounded.p.type = dtype::bf16;
  EXPECT_DOUBLE_EQ(memory_need_of(rounded).host_bytes - n.host_bytes,
                   4.0 * double(good.p.q_elems() + 2 * good.p.kv_elems()));

  // CPU: runner and host copies together against the free host memory.
  small_backend cpu(backend_kind::cpu, 1000);
  const support s = admit(cpu, good);
  EXPECT_FALSE(s.ok);
  EXPECT_EQ(s.reason, fmt::format("needs {}, {} free", gib(n.run_bytes + n.host_bytes), gib(1000)));
  small_backend roomy(backend_kind::cpu, std::int64_t{1} << 40);
  EXPECT_TRUE(admit(roomy, good).ok);

  // GPU: the runner's bytes against device memory.
  small_backend gpu(backend_kind::cuda, std::int64_t{1} << 30);
  EXPECT_TRUE(admit(gpu, good).ok);
  const support d = admit(gpu, huge);
  EXPECT_FALSE(d.ok);
  EXPECT_EQ(d.reason, fmt::format("needs {} of device memory, 1.00 GiB free", gib(double(std::int64_t{1} << 60))));

  // Through the loop: skipped with the reason, never run.
  reference_cache cache;
  const measurement m = run_configuration(cpu, good, cache, quick_options());
  EXPECT_EQ(m.status, "skipped");
  EXPECT_EQ(m.message, s.reason);
  EXPECT_FALSE(m.val.checked);
  const measurement ok = run_configuration(roomy, good, cache, quick_options());
  EXPECT_EQ(ok.status, "ok") << ok.message;
}

TEST(admission, unsupported_is_skipped_before_the_memory_check) {
  const auto configs = tiny(testing_rows::rows(), {"t_huge"}, "local:4,0");
  ASSERT_EQ(configs.size(), 1u);
  small_backend cpu(backend_kind::cpu, 1);
  reference_cache cache;
  const measurement m = run_configuration(cpu, configs[0], cache, quick_options());
  EXPECT_EQ(m.status, "skipped");
  EXPECT_EQ(m.message, "test row: no local masks");
}

TEST(result_entry, console_line_comes_from_the_typed_result) {
  auto be = make_cpu_backend();
  const auto configs = tiny(testing_rows::rows(), {"t_good", "t_nan", "t_fail"}, "none,local:4,0");
  reference_cache cache;
  std::map<std::string, std::string> by_status;
  for (const auto& c : configs) {
    result_entry r = make_result(c, run_configuration(*be, c, cache, quick_options()), model_of(*c.row, c.p));
    EXPECT_EQ(r.name, c.name);
    EXPECT_EQ(r.json, make_entry(c, r.m));
    const std::string line = console_line(r);
    EXPECT_EQ(line, entry_line(r.json)) << c.name;  // the same text as the line read from JSON
    r.json = nullptr;                               // ... and no JSON needed for it
    EXPECT_EQ(console_line(r), line);
    by_status[c.row->name + " " + r.m.status] = line;
  }
  const std::string ok = by_status.at("t_good ok");
  EXPECT_NE(ok.find(" ms "), std::string::npos);
  EXPECT_NE(ok.find(" TFLOP/s "), std::string::npos);
  EXPECT_TRUE(ok.ends_with(" ok")) << ok;
  const std::string tail = "/cpu/fp32/B:1/H:2/Hkv:2/Nq:24/Nkv:24/d:16/mask:";
  // A NaN in O fails the entry, naming where.
  EXPECT_EQ(by_status.at("t_nan failed"),
            fmt::format("{:<90} failed: non-finite outputs: 1 element in 1 row of 48, the first at (b 0, h 0, row 0)",
                        "t_nan" + tail + "none/Br:16/Bc:16"));
  EXPECT_EQ(by_status.at("t_good skipped"),
            fmt::format("{:<90} skipped: test row: no local masks", "t_good" + tail + "local:4,0/Br:16/Bc:16"));
  EXPECT_EQ(by_status.at("t_fail failed"),
            fmt::format("{:<90} failed: test row: launch failed", "t_fail" + tail + "none/Br:16/Bc:16"));
}

TEST(result_entry, console_line_figures) {
  result_entry r;
  r.name = "x";
  r.model = model_figures{4e9, 5e9, 2e9};
  r.m.time.rep_ms = {3.0, 2.0, 1.0};
  r.m.val.checked = true;
  r.m.val.rel_err = 1e-7;
  r.m.val.err_ok = true;
  EXPECT_EQ(console_line(r),
            fmt::format("{:<90} {:10.4f} ms {:8.3f} TFLOP/s {:8.1f} GB/s  err 1.0e-07 ok", "x", 2.0, 2.0, 1000.0));
  EXPECT_EQ(console_line(r, /*profiled=*/true), fmt::format("{:<90} profiled (rel_err 1.0e-07)", "x"));
  r.m.val.e2e_rel_err = 3e-3;  // rounded inputs: the error against the unrounded ones too
  EXPECT_EQ(console_line(r),
            fmt::format("{:<90} {:10.4f} ms {:8.3f} TFLOP/s {:8.1f} GB/s  err 1.0e-07 (e2e 3.0e-03) ok", "x", 2.0, 2.0,
                        1000.0));
  r.m.val.e2e_rel_err = r.m.val.rel_err;  // fp32: the same figure, not repeated
  r.model.reset();
  r.m.val.err_ok = false;
  EXPECT_EQ(console_line(r), fmt::format("{:<90} {:10.4f} ms {:8.3f} TFLOP/s {:8.1f} GB/s  err 1.0e-07 ABOVE TOLERANCE",
                                         "x", 2.0, NAN, NAN));
  r.m.status = "failed";
  r.m.message = "boom";
  EXPECT_EQ(console_line(r, true), fmt::format("{:<90} failed: boom", "x"));
}

TEST(result_entry, the_sweep_prints_the_typed_lines) {
  auto be = make_cpu_backend();
  const auto configs = tiny(testing_rows::rows(), {"t_good", "t_fail"}, "none,local:4,0");
  ASSERT_EQ(configs.size(), 4u);
  const std::string p = fresh("lines.log.jsonl");
  results_log log(p, false);
  sweep_options opt = quick_options();
  opt.quiet = false;
  ::testing::internal::CaptureStdout();
  const sweep_totals t = run_sweep(*be, configs, &log, opt);
  const std::vector<std::string> lines = lines_of(::testing::internal::GetCapturedStdout());
  EXPECT_EQ(t.ok, 1);
  EXPECT_EQ(t.skipped, 2);
  EXPECT_EQ(t.failed, 1);
  ASSERT_EQ(lines.size(), 4u);
  ASSERT_EQ(log.entries().size(), 4u);
  for (std::size_t i = 0; i < lines.size(); ++i) EXPECT_EQ(lines[i], entry_line(log.entries()[i]));
}

TEST(model, evaluated_once_per_configuration) {
  int calls = 0;
  const std::vector<variant> rows = {testing_rows::counting_row(&calls)};
  const auto configs = tiny(rows, {"t_count"}, "none,causal,local:4,0");  // local: unsupported
  ASSERT_EQ(configs.size(), 3u);
  auto be = make_cpu_backend();
  const std::string p = fresh("model.log.jsonl");
  {
    calls = 0;
    results_log log(p, false);
    run_sweep(*be, configs, &log, quick_options());
    EXPECT_EQ(calls, 3);
    for (const auto& e : log.entries()) {
      EXPECT_TRUE(e["flops"].is_number()) << e["name"];  // the one evaluation reached the entry
      EXPECT_TRUE(e["bytes"].is_number()) << e["name"];
    }
  }
  {
    // Resumed configurations are not evaluated at all.
    results_log(p, false).append(testing_entries::valid_entry(configs[0].name));
    calls = 0;
    results_log log(p, true);
    run_sweep(*be, configs, &log, quick_options());
    EXPECT_EQ(calls, 2);
  }
  {
    calls = 0;
    sweep_options opt = quick_options();
    opt.profile = true;
    const sweep_totals t = run_sweep(*be, configs, nullptr, opt);
    EXPECT_EQ(t.profiled, 2);
    EXPECT_EQ(calls, 3);
  }
}

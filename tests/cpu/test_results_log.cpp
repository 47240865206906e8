#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <unistd.h>

#include "harness/bench_loop.hpp"
#include "harness/results_log.hpp"
#include "harness/safe_write.hpp"
#include "harness_test_rows.hpp"
#include "test_entries.hpp"

using namespace attnbench;
using nlohmann::json;
using testing_entries::valid_entry;

namespace {

std::string fresh_path(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / "attnbench_test_log";
  std::filesystem::create_directories(dir);
  const auto p = dir / name;
  std::filesystem::remove(p);
  return p.string();
}

std::string slurp(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST(results_log, appends_lines_and_reads_them_back) {
  const std::string p = fresh_path("a.log.jsonl");
  {
    results_log log(p, false);
    log.append({{"name", "x"}, {"v", 1}});
    log.append({{"name", "y"}, {"v", 2}});
  }
  const log_contents c = read_results_log(p);
  ASSERT_EQ(c.entries.size(), 2u);
  EXPECT_EQ(c.entries[1]["v"], 2);
  EXPECT_EQ(c.torn_lines, 0);
  EXPECT_TRUE(c.names.count("x"));
  EXPECT_EQ(slurp(p).back(), '\n');
  EXPECT_EQ(log_path_for("r/quick.json"), "r/quick.json.log.jsonl");
  EXPECT_TRUE(read_results_log(fresh_path("missing")).entries.empty());
}

TEST(results_log, torn_last_line_is_ignored_and_cut_before_appending) {
  const std::string p = fresh_path("torn.log.jsonl");
  {
    results_log log(p, false);
    log.append(valid_entry("a"));
    log.append(valid_entry("b"));
  }
  { std::ofstream(p, std::ios::app) << R"({"name": "c", "time_ms": 1.)"; }  // killed mid-write
  log_contents c = read_results_log(p);
  EXPECT_EQ(c.entries.size(), 2u);
  EXPECT_EQ(c.torn_lines, 1);
  EXPECT_FALSE(c.names.count("c"));
  {
    results_log log(p, /*resume=*/true);
    EXPECT_EQ(log.existing().entries.size(), 2u);
    log.append(valid_entry("c"));
  }
  c = read_results_log(p);
  EXPECT_EQ(c.torn_lines, 0);
  ASSERT_EQ(c.entries.size(), 3u);
  EXPECT_EQ(c.entries[2]["name"], "c");
}

TEST(results_log, without_resume_starts_empty) {
  const std::string p = fresh_path("fresh.log.jsonl");
  { results_log(p, false).append({{"name", "a"}}); }
  {
    results_log log(p, false);
    EXPECT_TRUE(log.existing().entries.empty());
  }
  EXPECT_TRUE(read_results_log(p).entries.empty());
}

TEST(results_log, resume_skips_finished_configurations) {
  sweep_axes a;
  a.variant = {"t_good"};
  a.seq = {16, 32, 48};
  a.head_dim = {16};
  a.heads = {2};
  const auto configs = expand({"t", {{"g", a}}}, testing_rows::rows(), backend_kind::cpu);
  ASSERT_EQ(configs.size(), 3u);
  auto be = make_cpu_backend();
  sweep_options opt;
  opt.repetitions = 1;
  opt.rep_time_s = 1e-3;
  opt.quiet = true;
  const std::string p = fresh_path("resume.log.jsonl");
  {
    results_log log(p, false);
    log.append(valid_entry(configs[1].name));  // finished before a "kill"
  }
  results_log log(p, true);
  const sweep_totals t = run_sweep(*be, configs, &log, opt);
  EXPECT_EQ(t.resumed, 1);
  EXPECT_EQ(t.ok, 2);
  const log_contents c = read_results_log(p);
  ASSERT_EQ(c.entries.size(), 3u);
  EXPECT_EQ(c.names.size(), 3u);  // nothing lost, nothing twice
  EXPECT_EQ(c.entries[0]["name"], configs[1].name);
}

namespace {

// What the final file holds when built from a fresh read of the log.
json unique_entries_on_disk(const std::string& p) {
  return assemble_results(json::object(), read_results_log(p).entries)["benchmarks"];
}

}  // namespace

TEST(results_log, in_memory_entries_equal_a_fresh_read) {
  const std::string p = fresh_path("memory.log.jsonl");
  {
    results_log log(p, false);
    EXPECT_TRUE(log.entries().empty());
    log.append(valid_entry("a", {{"v", 1}, {"t", 0.1}}));
    log.append(valid_entry("b", {{"v", -2}, {"t", 1e-300}}));
    log.append(valid_entry("a", {{"v", 3}, {"n", nullptr}}));  // a name twice: the last wins, first place
    ASSERT_EQ(log.entries().size(), 2u);
    EXPECT_EQ(log.entries()[0]["v"], 3);
    EXPECT_EQ(json(log.entries()), unique_entries_on_disk(p));
  }
  {
    std::ofstream(p, std::ios::app) << "not json\n"
                                    << valid_entry("c").dump() << "\n"
                                    << R"({"name": "d", "t)";
  }
  {
    results_log log(p, /*resume=*/true);  // a bad middle line and a torn tail
    EXPECT_EQ(log.existing().torn_lines, 2);
    ASSERT_EQ(log.entries().size(), 3u);
    EXPECT_EQ(json(log.entries()), unique_entries_on_disk(p));
    log.append(valid_entry("d", {{"v", 4}}));
    log.append(valid_entry("b", {{"v", 5}}));
    EXPECT_EQ(json(log.entries()), unique_entries_on_disk(p));
    EXPECT_EQ(log.entries().back()["name"], "d");
    EXPECT_EQ(log.entries()[1]["v"], 5);
  }
  {
    results_log log(p, false);
    EXPECT_TRUE(log.entries().empty());
  }
}

TEST(results_log, sweep_entries_in_memory_after_a_resume_with_a_torn_tail) {
  sweep_axes a;
  a.variant = {"t_good", "t_fail"};
  a.seq = {16, 32};
  a.head_dim = {16};
  a.heads = {2};
  a.mask = parse_mask_list("none,local:2,0");
  const auto configs = expand({"t", {{"g", a}}}, testing_rows::rows(), backend_kind::cpu);
  ASSERT_EQ(configs.size(), 8u);
  auto be = make_cpu_backend();
  sweep_options opt;
  opt.repetitions = 1;
  opt.rep_time_s = 1e-3;
  opt.quiet = true;
  const std::string p = fresh_path("sweep_memory.log.jsonl");
  const std::vector<configuration> first(configs.begin(), configs.begin() + 3);
  {
    results_log log(p, false);
    run_sweep(*be, first, &log, opt);
    EXPECT_EQ(json(log.entries()), unique_entries_on_disk(p));
  }
  const std::string text = slurp(p);
  { std::ofstream(p, std::ios::app) << text.substr(0, text.find('\n') / 2); }  // killed mid-write
  results_log log(p, true);
  EXPECT_EQ(log.existing().torn_lines, 1);
  const sweep_totals t = run_sweep(*be, configs, &log, opt);
  EXPECT_EQ(t.resumed, 3);
  ASSERT_EQ(log.entries().size(), configs.size());
  EXPECT_EQ(json(log.entries()), unique_entries_on_disk(p));
  for (std::size_t i = 0; i < configs.size(); ++i) EXPECT_EQ(log.entries()[i]["name"], configs[i].name);
  const json ctx = {{"device", "x"}};
  EXPECT_EQ(assemble_results(ctx, log.entries()), assemble_results(ctx, read_results_log(p).entries));
}

// ---- a resume that cannot be fooled ----

namespace {

log_options for_sweep(const std::vector<std::string>& names, const std::set<std::string>& known, bool resume,
                      bool append = false) {
  log_options o;
  o.resume = resume;
  o.append = append;
  o.identity = sweep_identity(names, "c0ffee");
  o.known_names = &known;
  return o;
}

}  // namespace

TEST(results_log, header_records_the_sweep_and_another_sweep_is_refused_unless_append) {
  const std::string p = fresh_path("identity.log.jsonl");
  const std::vector<std::string> a{"x", "y"}, b{"x"};
  const std::set<std::string> ka(a.begin(), a.end()), kb(b.begin(), b.end());
  EXPECT_EQ(sweep_identity(a, "c").sweep_id, sweep_identity({"y", "x"}, "c").sweep_id);  // order-free
  EXPECT_NE(sweep_identity(a, "c").sweep_id, sweep_identity(a, "d").sweep_id);           // the build counts
  { results_log(p, for_sweep(a, ka, false)).append(valid_entry("x")); }
  EXPECT_TRUE(slurp(p).starts_with(R"({"context":{"attnbench_log":)"));
  const log_contents c = read_results_log(p);
  ASSERT_TRUE(c.header.has_value());
  EXPECT_EQ(c.header->sweep_id, sweep_identity(a, "c0ffee").sweep_id);
  EXPECT_EQ(c.entries.size(), 1u);
  {
    results_log same(p, for_sweep(a, ka, true));
    EXPECT_EQ(same.existing().entries.size(), 1u);
  }
  try {
    results_log other(p, for_sweep(b, kb, true));
    ADD_FAILURE() << "another sweep's log was resumed";
  } catch (const input_error& e) {
    EXPECT_NE(std::string(e.what()).find("different sweep"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
  {
    results_log appended(p, for_sweep(b, kb, true, /*append=*/true));
    EXPECT_EQ(appended.existing().entries.size(), 1u);
  }
  EXPECT_EQ(read_results_log(p).header->sweep_id, sweep_identity(a, "c0ffee").sweep_id);  // kept by --append
  { std::ofstream(p, std::ios::trunc) << valid_entry("x").dump() << "\n"; }               // an older log: no header
  EXPECT_THROW(results_log(p, for_sweep(a, ka, true)), input_error);
}

TEST(results_log, lines_failing_the_schema_are_not_finished_results) {
  const std::string p = fresh_path("schema.log.jsonl");
  const std::vector<std::string> names{"a", "b", "c", "d", "e", "f"};
  const std::set<std::string> known(names.begin(), names.end());
  { results_log(p, for_sweep(names, known, false)).append(valid_entry("a")); }
  {
    std::ofstream f(p, std::ios::app);
    f << R"({"name":"b"})"
      << "\n"                                                     // nothing but a name
      << valid_entry("c", {{"status", "weird"}}).dump() << "\n"   // status not ok|skipped|failed
      << valid_entry("d", {{"time_ms", "fast"}}).dump() << "\n"   // a number field holds a string
      << valid_entry("zzz").dump() << "\n"                        // no configuration of the sweep
      << valid_entry("e", {{"B", -1}}).dump() << "\n"             // a negative size
      << std::string(100, '[') << std::string(100, ']') << "\n";  // deeper than 64 levels
  }
  results_log log(p, for_sweep(names, known, true));
  EXPECT_EQ(log.existing().invalid_lines, 5);
  EXPECT_EQ(log.existing().torn_lines, 1);
  EXPECT_EQ(log.existing().names, (std::set<std::string>{"a"}));
  EXPECT_NE(log.existing().first_invalid.find("field 'variant' is missing"), std::string::npos)
      << log.existing().first_invalid;
  const log_contents again = read_results_log(p);  // rewritten without them
  EXPECT_EQ(again.entries.size(), 1u);
  EXPECT_EQ(again.invalid_lines + again.torn_lines, 0);
  EXPECT_TRUE(again.header.has_value());
}

TEST(results_log, a_second_writer_fails_at_once_naming_the_holders_pid) {
  const std::string p = fresh_path("locked.log.jsonl");
  results_log first(p, false);
  try {
    results_log second(p, true);
    ADD_FAILURE() << "two writers on one log";
  } catch (const io_error& e) {
    EXPECT_NE(std::string(e.what()).find("pid " + std::to_string(::getpid())), std::string::npos) << e.what();
  }
}

TEST(results_log, a_failed_rewrite_keeps_the_old_log) {
  const std::string p = fresh_path("keep.log.jsonl");
  { results_log(p, false).append(valid_entry("a")); }
  { std::ofstream(p, std::ios::app) << "torn"; }
  const std::string before = slurp(p);
  std::filesystem::remove_all(p + ".tmp");
  std::filesystem::create_directory(p + ".tmp");  // the temp file cannot be created
  EXPECT_THROW(results_log(p, true), io_error);
  EXPECT_EQ(slurp(p), before);
  std::filesystem::remove_all(p + ".tmp");
}

// ---- lock files go with a normal end; a killed run's is stale ----

TEST(results_log, a_normal_end_removes_the_lock_file_a_killed_runs_stays_stale) {
  const std::string p = fresh_path("lockfile.log.jsonl");
  const std::string lock = p + ".lock";
  std::filesystem::remove(lock);
  {
    results_log log(p, false);
    EXPECT_TRUE(std::filesystem::exists(lock));
    log.append(valid_entry("a"));
    log.close();
    EXPECT_FALSE(std::filesystem::exists(lock));  // a run that ends normally leaves no lock file
  }
  {
    results_log log(p, true);  // the destructor alone (an error path) releases but keeps the file
  }
  EXPECT_TRUE(std::filesystem::exists(lock));
  // A killed run's lock file: its pid, no flock held (the kernel dropped it with the process).
  { std::ofstream(lock, std::ios::trunc) << "999999\n"; }
  {
    results_log log(p, true);  // taken over as stale
    EXPECT_EQ(log.existing().entries.size(), 1u);
    EXPECT_EQ(slurp(lock), std::to_string(::getpid()) + "\n");
    // Control: while this writer holds it, the same file is refused.
    EXPECT_THROW(results_log(p, true), io_error);
    log.close();
  }
  EXPECT_FALSE(std::filesystem::exists(lock));
}

// ---- crash isolation per row ----

namespace {

std::vector<configuration> two_rows_three_shapes() {
  sweep_axes a;
  a.variant = {"t_good", "t_nan"};
  a.seq = {16, 32, 48};
  a.head_dim = {16};
  a.heads = {2};
  return expand({"t", {{"g", a}}}, testing_rows::rows(), backend_kind::cpu);
}

sweep_options quiet_options() {
  sweep_options opt;
  opt.repetitions = 1;
  opt.rep_time_s = 1e-3;
  opt.quiet = true;
  return opt;
}

}  // namespace

TEST(row_quarantine, a_row_that_hung_in_the_log_is_skipped_with_the_reason_on_resume) {
  const auto configs = two_rows_three_shapes();
  ASSERT_EQ(configs.size(), 6u);  // t_good, t_nan per shape
  const std::string p = fresh_path("quarantine.log.jsonl");
  {
    results_log log(p, false);
    json hung = valid_entry(configs[1].name, {{"variant", "t_nan"},
                                              {"backend", "cpu"},
                                              {"status", "failed"},
                                              {"error_message", "timeout: the timed launches did not complete"}});
    hung[row_fault_field] = "timeout";
    log.append(hung);  // what a run that hit its deadline left
  }
  auto be = make_cpu_backend();
  results_log log(p, true);
  const sweep_totals t = run_sweep(*be, configs, &log, quiet_options());
  EXPECT_EQ(t.resumed, 1);
  EXPECT_EQ(t.quarantined, 2);  // t_nan's other two shapes
  EXPECT_EQ(t.ok, 3);           // t_good: every shape
  const log_contents c = read_results_log(p);
  ASSERT_EQ(c.entries.size(), 6u);
  for (const json& e : c.entries) {
    if (e["variant"] != "t_nan" || e["name"] == configs[1].name) continue;
    EXPECT_EQ(e["status"], "skipped") << e["name"];
    EXPECT_EQ(e["error_message"], "t_nan hung (timeout) on " + configs[1].name + ", see " + p);
    EXPECT_EQ(e[quarantined_by_field], configs[1].name);
  }
}

// The control: the same log without the row_fault mark runs the row again.
TEST(row_quarantine, without_the_mark_the_row_runs_again) {
  const auto configs = two_rows_three_shapes();
  const std::string p = fresh_path("no_quarantine.log.jsonl");
  {
    results_log log(p, false);
    log.append(valid_entry(
        configs[1].name,
        {{"variant", "t_nan"}, {"backend", "cpu"}, {"status", "failed"}, {"error_message", "launch failed"}}));
  }
  auto be = make_cpu_backend();
  results_log log(p, true);
  const sweep_totals t = run_sweep(*be, configs, &log, quiet_options());
  EXPECT_EQ(t.quarantined, 0);
  EXPECT_EQ(t.ok, 3);      // t_good
  EXPECT_EQ(t.failed, 2);  // t_nan runs again (its NaN output fails the entry)
}

TEST(row_quarantine, faults_in_another_log_and_sticky_errors_mark_rows) {
  auto be = make_cpu_backend();
  sweep_axes a;
  a.variant = {"t_good", "t_sticky"};
  a.seq = {16, 32};
  a.head_dim = {16};
  a.heads = {2};
  const auto configs = expand({"t", {{"g", a}}}, testing_rows::rows(), backend_kind::cpu);
  ASSERT_EQ(configs.size(), 4u);
  const std::string p = fresh_path("sticky_mark.log.jsonl");
  {
    results_log log(p, false);
    const sweep_totals t = run_sweep(*be, configs, &log, quiet_options());
    EXPECT_TRUE(t.sticky_error);
  }
  const log_contents first = read_results_log(p);
  ASSERT_EQ(first.entries.size(), 2u);  // t_good, then t_sticky failed and the process would end
  EXPECT_EQ(first.entries[1][row_fault_field], "device_error");
  std::map<std::string, row_fault_record> faults;
  collect_row_faults(first.entries, "smoke.json.log.jsonl", faults);
  ASSERT_EQ(faults.size(), 1u);
  EXPECT_EQ(faults.begin()->first, "cpu:t_sticky");
  // A later sweep given that log (--quarantine-from) skips t_sticky from the start.
  sweep_options opt = quiet_options();
  opt.quarantine = faults;
  const std::string q = fresh_path("quarantined_from.log.jsonl");
  results_log log(q, false);
  const sweep_totals t = run_sweep(*be, configs, &log, opt);
  EXPECT_FALSE(t.sticky_error);
  EXPECT_EQ(t.quarantined, 2);
  EXPECT_EQ(t.ok, 2);
  for (const json& e : read_results_log(q).entries)
    if (e["variant"] == "t_sticky")
      EXPECT_NE(e["error_message"].get<std::string>().find("crashed (sticky device error: test row: illegal address) "
                                                           "on " +
                                                           configs[1].name + ", see smoke.json.log.jsonl"),
                std::string::npos)
          << e["error_message"];
}

TEST(results_log, header_context_carries_ceilings_and_is_rewritten_when_it_lacks_them) {
  const std::string p = fresh_path("header_ctx.log.jsonl");
  const std::vector<std::string> names{"a"};
  const std::set<std::string> known(names.begin(), names.end());
  { results_log(p, for_sweep(names, known, false)).append(valid_entry("a")); }  // no ceilings (--no-ceilings)
  log_options o = for_sweep(names, known, true);
  o.header_context = {{"device", "d"}, {"ceilings", {{"measured", {{"bandwidth_gbps", 4300.5}}}}}};
  { results_log log(p, o); }
  const log_contents c = read_results_log(p);
  ASSERT_TRUE(c.header.has_value());
  EXPECT_EQ(c.header_context["ceilings"]["measured"]["bandwidth_gbps"], 4300.5);
  EXPECT_EQ(c.header_context["device"], "d");
  EXPECT_EQ(c.entries.size(), 1u);
}

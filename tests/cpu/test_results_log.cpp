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
  { results_log log(p, false); EXPECT_TRUE(log.existing().entries.empty()); }
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
  { std::ofstream(p, std::ios::app) << "not json\n" << valid_entry("c").dump() << "\n" << R"({"name": "d", "t)"; }
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
  { results_log log(p, false); EXPECT_TRUE(log.entries().empty()); }
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

// ---- issue 12: a resume that cannot be fooled ----

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
  EXPECT_NE(sweep_identity(a, "c").sweep_id, sweep_identity(a, "d").sweep_id);          // the build counts
  { results_log(p, for_sweep(a, ka, false)).append(valid_entry("x")); }
  EXPECT_TRUE(slurp(p).starts_with(R"({"context":{"attnbench_log":)"));
  const log_contents c = read_results_log(p);
  ASSERT_TRUE(c.header.has_value());
  EXPECT_EQ(c.header->sweep_id, sweep_identity(a, "c0ffee").sweep_id);
  EXPECT_EQ(c.entries.size(), 1u);
  { results_log same(p, for_sweep(a, ka, true)); EXPECT_EQ(same.existing().entries.size(), 1u); }
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
  { std::ofstream(p, std::ios::trunc) << valid_entry("x").dump() << "\n"; }  // an older log: no header
  EXPECT_THROW(results_log(p, for_sweep(a, ka, true)), input_error);
}

TEST(results_log, lines_failing_the_schema_are_not_finished_results) {
  const std::string p = fresh_path("schema.log.jsonl");
  const std::vector<std::string> names{"a", "b", "c", "d", "e", "f"};
  const std::set<std::string> known(names.begin(), names.end());
  { results_log(p, for_sweep(names, known, false)).append(valid_entry("a")); }
  {
    std::ofstream f(p, std::ios::app);
    f << R"({"name":"b"})" << "\n"                                         // nothing but a name
      << valid_entry("c", {{"status", "weird"}}).dump() << "\n"             // status not ok|skipped|failed
      << valid_entry("d", {{"time_ms", "fast"}}).dump() << "\n"             // a number field holds a string
      << valid_entry("zzz").dump() << "\n"                                  // no configuration of the sweep
      << valid_entry("e", {{"B", -1}}).dump() << "\n"                       // a negative size
      << std::string(100, '[') << std::string(100, ']') << "\n";            // deeper than 64 levels
  }
  results_log log(p, for_sweep(names, known, true));
  EXPECT_EQ(log.existing().invalid_lines, 5);
  EXPECT_EQ(log.existing().torn_lines, 1);
  EXPECT_EQ(log.existing().names, (std::set<std::string>{"a"}));
  EXPECT_NE(log.existing().first_invalid.find("field 'variant' is missing"), std::string::npos) << log.existing().first_invalid;
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

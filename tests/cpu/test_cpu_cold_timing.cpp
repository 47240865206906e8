// Cold-cache timing on the CPU: the LLC size read from sysfs and the eviction
// buffer rule (at least twice the LLC), one eviction per timed run and never inside the
// timed region (a fake clock that the eviction advances by a second), none with --hot,
// and the JSON context saying which. The negative control runs the same check on a
// backend that evicts inside its timed region.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <unistd.h>
#include <vector>

#include "harness/backend.hpp"
#include "harness/cache_eviction.hpp"
#include "harness/timing.hpp"

using namespace attnbench;
namespace fs = std::filesystem;

namespace {

constexpr std::int64_t mib = std::int64_t{1} << 20;

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / "attnbench_test_cold" / (name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

struct fake_cache {
  int index, level;
  const char* type;
  const char* size;
  const char* shared;
};

void write_cache(const fs::path& root, int cpu, const fake_cache& c) {
  const fs::path d = root / ("cpu" + std::to_string(cpu)) / "cache" / ("index" + std::to_string(c.index));
  fs::create_directories(d);
  std::ofstream(d / "level") << c.level << "\n";
  std::ofstream(d / "type") << c.type << "\n";
  std::ofstream(d / "size") << c.size << "\n";
  std::ofstream(d / "shared_cpu_list") << c.shared << "\n";
}

TEST(llc_size, reads_the_highest_data_level_from_sysfs) {
  const fs::path root = fresh_dir("shared_l3");
  for (int cpu : {0, 1}) {
    const std::string own = std::to_string(cpu);
    write_cache(root, cpu, {0, 1, "Data", "32K", own.c_str()});
    write_cache(root, cpu, {1, 1, "Instruction", "32K", own.c_str()});
    write_cache(root, cpu, {2, 2, "Unified", "1024K", own.c_str()});
    write_cache(root, cpu, {3, 3, "Unified", "32768K", "0-1"});
    write_cache(root, cpu, {4, 4, "Instruction", "1G", own.c_str()});  // never the LLC
  }
  const llc_info llc = last_level_cache(root.string(), {0, 1});
  EXPECT_EQ(llc.bytes, 32 * mib);
  EXPECT_EQ(llc.level, 3);
  EXPECT_EQ(llc.instances, 1);
  EXPECT_NE(llc.source.find("sysfs: 1 x 32 MiB L3"), std::string::npos) << llc.source;
  EXPECT_EQ(eviction_buffer_bytes(llc), static_cast<std::size_t>(64 * mib));
}

TEST(llc_size, sums_the_instances_the_threads_may_use) {
  const fs::path root = fresh_dir("two_l3");
  write_cache(root, 0, {0, 3, "Unified", "16M", "0"});
  write_cache(root, 1, {0, 3, "Unified", "16M", "1"});
  const llc_info llc = last_level_cache(root.string(), {0, 1});
  EXPECT_EQ(llc.bytes, 32 * mib);
  EXPECT_EQ(llc.instances, 2);
  EXPECT_EQ(last_level_cache(root.string(), {1}).bytes, 16 * mib);  // only the allowed CPUs
}

TEST(llc_size, falls_back_with_the_reason) {
  const fs::path root = fresh_dir("empty");
  const llc_info llc = last_level_cache(root.string(), {0});
  EXPECT_GT(llc.bytes, 0);
  EXPECT_EQ(llc.level, 0);
  EXPECT_TRUE(llc.source.starts_with("sysconf(_SC_LEVEL3_CACHE_SIZE)") || llc.source.starts_with("assumed 128 MiB"))
      << llc.source;
  EXPECT_NE(llc.source.find(root.string()), std::string::npos) << "names where it looked: " << llc.source;
  // A malformed size is not a cache size.
  write_cache(root, 0, {0, 3, "Unified", "lots", "0"});
  EXPECT_EQ(last_level_cache(root.string(), {0}).level, 0);
}

TEST(llc_size, buffer_is_twice_the_llc_in_whole_mib) {
  for (std::int64_t bytes : {std::int64_t{1}, mib, 32 * mib + 1, 7 * mib / 2, 320 * mib}) {
    llc_info llc;
    llc.bytes = bytes;
    const auto buf = static_cast<std::int64_t>(eviction_buffer_bytes(llc));
    EXPECT_GE(buf, 2 * bytes) << bytes;
    EXPECT_LT(buf, 2 * bytes + mib) << bytes;
    EXPECT_EQ(buf % mib, 0) << bytes;
  }
}

TEST(llc_size, this_machine_has_one) {
  const llc_info llc = last_level_cache();
  EXPECT_GT(llc.bytes, 0) << llc.source;
  EXPECT_FALSE(llc.source.empty());
}

// ---- one eviction per timed run, outside the timed region ----------------------------

struct fake_clock {
  double t = 0;
  std::string events;  // 'E' eviction, 'R' run, in order
};

class clock_runner final : public runner {
 public:
  explicit clock_runner(fake_clock& c) : c_(c) {}
  int runs = 0;
  void set_inputs(const host_inputs&) override {}
  void poison_outputs() override {}
  void run() override {
    c_.t += 1e-3;  // every run takes 1 ms
    c_.events += 'R';
    ++runs;
  }
  host_outputs get_outputs() override { return {}; }

 private:
  fake_clock& c_;
};

cpu_timing_hooks hooks_for(fake_clock& c) {
  return {.evict =
              [&c] {
                c.t += 1.0;
                c.events += 'E';
              },  // an eviction takes 1 s
          .now_s = [&c] { return c.t; }};
}

// The check: a cold sample of 1-ms runs must measure 1 ms, however long the eviction takes.
void expect_sample_times_the_run_alone(backend& be, fake_clock& c, int batch) {
  clock_runner r(c);
  c.events.clear();
  EXPECT_NEAR(be.timed_sample(r, batch, {}), 1e-3, 1e-9) << "the eviction was timed";
  std::string want;
  for (int i = 0; i < batch; ++i) want += "ER";
  EXPECT_EQ(c.events, want) << "one eviction before each run";
}

TEST(cpu_cold_timing, eviction_before_each_run_and_outside_the_timed_region) {
  fake_clock c;
  auto be = make_cpu_backend(hooks_for(c));
  EXPECT_TRUE(be->evicts_llc());
  expect_sample_times_the_run_alone(*be, c, 1);
  expect_sample_times_the_run_alone(*be, c, 4);
}

// Negative control: the same check on a backend that starts its clock before the eviction.
class evicts_inside_backend final : public backend {
 public:
  explicit evicts_inside_backend(fake_clock& c) : c_(c) {}
  backend_kind kind() const override { return backend_kind::cpu; }
  nlohmann::json context(bool) override { return nlohmann::json::object(); }
  std::int64_t free_memory_bytes() override { return std::int64_t{1} << 40; }
  bool manual_time() const override { return false; }
  double timed_sample(runner& r, int batch, const timing_options&) override {
    const double t0 = c_.t;
    for (int i = 0; i < batch; ++i) {
      c_.t += 1.0;
      c_.events += 'E';
      r.run();
    }
    return (c_.t - t0) / batch;
  }
  void synchronize() override {}
  void range_push(const std::string&) override {}
  void range_pop() override {}

 private:
  fake_clock& c_;
};

TEST(cpu_cold_timing, negative_control_an_eviction_inside_the_timed_region_is_caught) {
  fake_clock c;
  evicts_inside_backend be(c);
  ::testing::TestPartResultArray failures;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
    expect_sample_times_the_run_alone(be, c, 2);
  }
  ASSERT_GE(failures.size(), 1);
  EXPECT_NE(std::string(failures.GetTestPartResult(0).message()).find("the eviction was timed"), std::string::npos);
}

TEST(cpu_cold_timing, hot_samples_do_not_evict) {
  fake_clock c;
  auto be = make_cpu_backend(hooks_for(c));
  clock_runner r(c);
  timing_options hot;
  hot.hot = true;
  EXPECT_NEAR(be->timed_sample(r, 3, hot), 1e-3, 1e-9);
  EXPECT_EQ(c.events, "RRR");
}

TEST(cpu_cold_timing, time_runner_evicts_once_per_timed_run) {
  fake_clock c;
  auto be = make_cpu_backend(hooks_for(c));
  clock_runner r(c);
  const timing_result t = time_runner(*be, r, "cpu/cold", {.repetitions = 3, .hot = false, .rep_time_s = 2e-3}, 0);
  // Every run time_runner makes (the pilot included) is a sample with its own eviction.
  EXPECT_GT(r.runs, 3);
  EXPECT_EQ(std::count(c.events.begin(), c.events.end(), 'E'), r.runs);
  EXPECT_EQ(c.events.find("RR"), std::string::npos) << "a run without its eviction";
  ASSERT_EQ(t.rep_ms.size(), 3u);
  for (double ms : t.rep_ms) EXPECT_NEAR(ms, 1.0, 1e-9) << "reported time holds the eviction";
}

TEST(cpu_cold_timing, hot_time_runner_does_not_evict) {
  fake_clock c;
  auto be = make_cpu_backend(hooks_for(c));
  clock_runner r(c);
  time_runner(*be, r, "cpu/hot", {.repetitions = 2, .hot = true, .rep_time_s = 1e-4}, 0);
  EXPECT_GT(r.runs, 2);
  EXPECT_EQ(c.events.find('E'), std::string::npos);
}

// ---- the context says which --------------------------------------------------------------

TEST(cpu_cold_timing, backend_describes_its_eviction) {
  auto be = make_cpu_backend();
  const auto bytes = eviction_buffer_bytes(last_level_cache());
  EXPECT_EQ(be->cache_flush(false), "llc eviction per run (" + std::to_string(bytes >> 20) + " MiB buffer)");
  EXPECT_EQ(be->cache_flush(true), "none (--hot)");
  const auto info = be->context(false)["device_info"];
  EXPECT_EQ(info["llc_eviction_bytes"].get<std::int64_t>(), static_cast<std::int64_t>(bytes));
  EXPECT_GT(info["llc_bytes"].get<std::int64_t>(), 0);
  EXPECT_FALSE(info["llc_source"].get<std::string>().empty());
}

nlohmann::json sweep_context(const fs::path& dir, const std::string& extra) {
  const fs::path out = dir / "r.json";
  const std::string cmd = std::string(ATTNBENCH_BIN) +
                          " sweep --backend cpu --variant naive --seq 32 --heads 1 --head-dim 16 --reps 1"
                          " --rep-time 0.001 --no-ceilings --out " +
                          out.string() + " " + extra + " 2>/dev/null";
  FILE* p = ::popen(cmd.c_str(), "r");
  std::array<char, 512> buf{};
  while (p && std::fgets(buf.data(), buf.size(), p)) {
  }
  const int st = p ? ::pclose(p) : -1;
  EXPECT_EQ(st, 0) << cmd;
  std::ifstream f(out);
  const nlohmann::json j = nlohmann::json::parse(f, nullptr, false);
  if (j.is_discarded() || !j.contains("context")) return nlohmann::json::object();
  return j["context"];
}

TEST(cpu_cold_timing, sweep_json_context_records_the_mode) {
  const fs::path d = fresh_dir("sweep");
  const auto bytes = eviction_buffer_bytes(last_level_cache());
  const nlohmann::json cold = sweep_context(d, "");
  EXPECT_EQ(cold["timing"]["l2_flush"], "llc eviction per run (" + std::to_string(bytes >> 20) + " MiB buffer)");
  EXPECT_EQ(cold["device_info"]["llc_eviction_bytes"].get<std::int64_t>(), static_cast<std::int64_t>(bytes));
  const nlohmann::json hot = sweep_context(d, "--hot");
  EXPECT_EQ(hot["timing"]["l2_flush"], "none (--hot)");
}

}  // namespace

// The watchdog's polling loop against a fake clock and a fake device query
// (harness/device_watchdog.hpp; the cuda backend and the GPU tests wrap cudaEventQuery /
// cudaStreamQuery in it), the deadline rule, and the crash guard's record of a crash.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <csignal>
#include <fstream>
#include <stdexcept>

#include "harness/crash_guard.hpp"
#include "harness/device_watchdog.hpp"
#include "harness/json_read.hpp"

namespace attnbench {
namespace {

// A clock that only moves when the loop sleeps.
struct fake_clock {
  double now = 100;
  int sleeps = 0;
  double longest_pause = 0;
  wait_clock clock() {
    return {[this] { return now; },
            [this](double s) {
              ++sleeps;
              longest_pause = std::max(longest_pause, s);
              now += s;
            }};
  }
};

TEST(device_watchdog, a_device_that_never_finishes_times_out_at_the_deadline) {
  fake_clock fc;
  int polls = 0;
  const bool done = poll_until_done(
      [&] {
        ++polls;
        return poll_state::pending;
      },
      2.0, fc.clock());
  EXPECT_FALSE(done);
  EXPECT_NEAR(fc.now - 100, 2.0, 1e-9);  // waited exactly to the deadline, never beyond
  EXPECT_LE(fc.longest_pause, 1e-3);     // at most 1 ms between polls
  // 2000 polls spinning, then ~1 per ms for the 2 s: ~4000 in all.
  EXPECT_GT(polls, wait_spin_polls + 1900);
  EXPECT_LT(polls, wait_spin_polls + 2100);
}

// The negative control of the test above: the same loop on a device that finishes.
TEST(device_watchdog, a_device_that_finishes_is_no_timeout) {
  fake_clock fc;
  int polls = 0;
  EXPECT_TRUE(poll_until_done([&] { return ++polls < 50 ? poll_state::pending : poll_state::done; }, 2.0, fc.clock()));
  EXPECT_EQ(polls, 50);
  EXPECT_EQ(fc.now - 100, 0);  // within the spinning polls: no pause, seen at once
  EXPECT_EQ(fc.longest_pause, 0);
  fake_clock later;  // done after the spinning polls: then 20 us pauses doubling to 1 ms
  polls = 0;
  EXPECT_TRUE(poll_until_done([&] { return ++polls < wait_spin_polls + 8 ? poll_state::pending : poll_state::done; },
                              2.0, later.clock()));
  EXPECT_NEAR(later.now - 100, (20 + 40 + 80 + 160 + 320 + 640 + 1000 + 1000) * 1e-6, 1e-9);
  fake_clock first;
  EXPECT_TRUE(poll_until_done([] { return poll_state::done; }, 2.0, first.clock()));
  EXPECT_EQ(first.sleeps, 0);  // done at once: no pause at all
}

TEST(device_watchdog, work_that_ends_at_the_deadline_is_no_timeout) {
  fake_clock fc;
  EXPECT_TRUE(
      poll_until_done([&] { return fc.now - 100 >= 1.0 ? poll_state::done : poll_state::pending; }, 1.0, fc.clock()));
}

TEST(device_watchdog, a_device_error_propagates) {
  fake_clock fc;
  EXPECT_THROW(poll_until_done([]() -> poll_state { throw std::runtime_error("illegal address"); }, 1.0, fc.clock()),
               std::runtime_error);
}

TEST(device_watchdog, deadline_is_the_floor_or_50x_the_model_bound) {
  // H200's datasheet peaks (harness/datasheet.cpp): bf16 989.5 TFLOP/s, 4800 GB/s.
  const nlohmann::json peaks = {{"tflops", {{"bf16", 989.5}, {"fp32", 66.9}}}, {"bandwidth_gbps", 4800}};
  const model_figures compute_bound{1e15, 2e15, 1e9};  // 2e15 executed FLOPs: 2.02 s at 989.5 TFLOP/s
  const double b = model_bound_s(compute_bound, dtype::bf16, peaks);
  EXPECT_NEAR(b, 2e15 / 989.5e12, 1e-9);
  const model_figures memory_bound{1e9, 1e9, 4.8e12};  // 4.8e12 bytes: 1 s at 4800 GB/s
  EXPECT_NEAR(model_bound_s(memory_bound, dtype::bf16, peaks), 1.0, 1e-12);
  // No peak for e4m3 here: the slowest listed (fp32), so the bound errs long.
  EXPECT_NEAR(model_bound_s(compute_bound, dtype::e4m3, peaks), 2e15 / 66.9e12, 1e-9);
  EXPECT_EQ(model_bound_s(compute_bound, dtype::bf16, nlohmann::json()), 0);  // the CPU: no peaks

  const device_deadline tiny{10, 50, 1e-4};  // 0.1 ms kernel: the floor
  EXPECT_EQ(tiny.for_launches(1), 10);
  EXPECT_EQ(tiny.for_launches(1000), 10);  // 1000 x 0.1 ms x 50 = 5 s, still under the floor
  const device_deadline big{10, 50, b};
  EXPECT_NEAR(big.for_launches(1), 50 * b, 1e-9);
  EXPECT_NEAR(big.for_launches(2), 100 * b, 1e-9);
  EXPECT_NE(big.describe(2).find("50 x 2.02 s model bound x 2 launches"), std::string::npos) << big.describe(2);
}

TEST(device_watchdog, wait_floor_from_the_environment) {
  ::setenv("ATTNBENCH_WAIT_TIMEOUT_S", "2.5", 1);
  EXPECT_EQ(wait_floor_from_env(), 2.5);
  for (const char* bad : {"0", "-1", "abc", "1s", "inf"}) {
    ::setenv("ATTNBENCH_WAIT_TIMEOUT_S", bad, 1);
    try {
      wait_floor_from_env();
      ADD_FAILURE() << bad << " accepted";
    } catch (const input_error& e) {
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
  ::unsetenv("ATTNBENCH_WAIT_TIMEOUT_S");
  EXPECT_EQ(wait_floor_from_env(), default_wait_floor_s);
}

// The crash guard in a child process: the armed entry reaches the file, with the signal,
// and the child still dies of that signal. Control: disarmed, a crash writes nothing.
int crash_child(const std::string& path, bool armed) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_TRUNC, 0644);
    crash_guard g(fd);
    g.arm(R"({"name": "x/cpu", "status": "failed", "error_message": "crashed: signal @SIGNAL@"})"
          "\n",
          "test crash @SIGNAL@\n");
    if (!armed) g.disarm();
    std::raise(SIGSEGV);
    ::_exit(0);  // not reached
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

std::string slurp(const std::string& p) {
  std::ifstream f(p);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

TEST(crash_guard, a_crash_leaves_its_entry_and_still_kills) {
  const std::string p = ::testing::TempDir() + "crash_guard.jsonl";
  const int status = crash_child(p, true);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGSEGV);
  const std::string text = slurp(p);
  EXPECT_EQ(text,
            "\n{\"name\": \"x/cpu\", \"status\": \"failed\", \"error_message\": \"crashed: signal 11 (SIGSEGV)\"}\n");
  EXPECT_FALSE(parse_json_text(text.substr(1, text.size() - 2)).is_discarded());
  EXPECT_EQ(signal_text(SIGABRT), "6 (SIGABRT)");
}

TEST(crash_guard, disarmed_writes_nothing) {
  const std::string p = ::testing::TempDir() + "crash_guard_disarmed.jsonl";
  const int status = crash_child(p, false);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGSEGV);
  EXPECT_EQ(slurp(p), "");
}

}  // namespace
}  // namespace attnbench

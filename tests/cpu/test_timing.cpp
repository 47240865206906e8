// The timing loop against a counting manual-time backend:
// in the default cold mode every timed launch gets its own sample, so the
// backend flushes L2 before each one; only --hot batches short launches.
#include <gtest/gtest.h>

#include <vector>

#include "harness/timing.hpp"

using namespace attnbench;

namespace {

struct sample_call {
  int batch;
  bool hot;
};

// A GPU-like backend whose samples are 1 us: short enough that hot mode batches.
class counting_backend final : public backend {
 public:
  std::vector<sample_call> calls;
  backend_kind kind() const override { return backend_kind::cuda; }
  nlohmann::json context(bool) override { return nlohmann::json::object(); }
  std::int64_t free_memory_bytes() override { return std::int64_t{1} << 40; }
  bool manual_time() const override { return true; }
  double timed_sample(runner& r, int batch, const timing_options& opt) override {
    calls.push_back({batch, opt.hot});
    for (int i = 0; i < batch; ++i) r.run();
    return 1e-6;
  }
  void synchronize() override {}
  void range_push(const std::string&) override {}
  void range_pop() override {}
};

class counting_runner final : public runner {
 public:
  int runs = 0;
  void set_inputs(const host_inputs&) override {}
  void poison_outputs() override {}
  void run() override { ++runs; }
  host_outputs get_outputs() override { return {}; }
};

TEST(timing, cold_samples_hold_one_launch_each) {
  counting_backend be;
  counting_runner r;
  const timing_result t = time_runner(be, r, "cold/case", {.repetitions = 3, .hot = false, .rep_time_s = 1e-4}, 0);
  ASSERT_GT(be.calls.size(), 3u);
  for (const auto& c : be.calls) {
    EXPECT_EQ(c.batch, 1);
    EXPECT_FALSE(c.hot);
  }
  EXPECT_EQ(t.batch, 1);
  // Two untimed warm-up launches, then exactly one launch per sample.
  EXPECT_EQ(r.runs, 2 + static_cast<int>(be.calls.size()));
}

TEST(timing, hot_samples_batch_short_launches) {
  counting_backend be;
  counting_runner r;
  const timing_result t = time_runner(be, r, "hot/case", {.repetitions = 3, .hot = true, .rep_time_s = 1e-4}, 0);
  EXPECT_GE(t.batch, 50);  // >= 50 us per sample at 1 us per launch
  EXPECT_LE(t.batch, 51);
  ASSERT_GT(be.calls.size(), 1u);
  EXPECT_EQ(be.calls.front().batch, 1);  // the pilot
  for (std::size_t i = 1; i < be.calls.size(); ++i) {
    EXPECT_EQ(be.calls[i].batch, t.batch);
    EXPECT_TRUE(be.calls[i].hot);
  }
}

}  // namespace

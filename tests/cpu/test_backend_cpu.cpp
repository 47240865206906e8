#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "harness/backend.hpp"
#include "harness/host_info.hpp"
#include "harness_test_rows.hpp"

using namespace attnbench;

TEST(backend_cpu, basics) {
  auto be = make_cpu_backend();
  EXPECT_EQ(be->kind(), backend_kind::cpu);
  EXPECT_FALSE(be->manual_time());
  EXPECT_GT(be->free_memory_bytes(), 0);
  EXPECT_GT(host_available_bytes(), 0);
  EXPECT_FALSE(cpu_model_name().empty());
  be->range_push("x");
  be->range_pop();
  be->synchronize();
  const auto c = be->context(false);
  EXPECT_TRUE(c["device"].is_string());
  EXPECT_GE(c["device_info"]["threads"].get<int>(), 1);
  EXPECT_TRUE(c["ceilings"].empty());
}

TEST(backend_cpu, measured_ceilings) {
  auto be = make_cpu_backend();
  const auto c = be->context(true);
  const auto& m = c["ceilings"]["measured"];
  EXPECT_GT(m["bandwidth_gbps"].get<double>(), 0.1);
  EXPECT_GT(m["tflops"]["fp32"].get<double>(), 1e-4);
  EXPECT_FALSE(c["ceilings"].contains("theoretical"));
  // The fp32 ceiling is the best size measured, and says which.
  const auto& how = m["fp32_sgemm"];
  double best = 0;
  for (const auto& [n, tflops] : how["tflops_by_n"].items()) best = std::max(best, tflops.get<double>());
  EXPECT_GE(how["tflops_by_n"].size(), 2u);
  EXPECT_EQ(m["tflops"]["fp32"].get<double>(), best);
  EXPECT_EQ(how["tflops_by_n"][std::to_string(how["n"].get<int>())].get<double>(), best);
  EXPECT_GE(how["threads"].get<int>(), 1);
  EXPECT_FALSE(how["library"].get<std::string>().empty());
}

TEST(backend_cpu, timed_sample_runs_the_batch) {
  problem p;
  p.H = p.Hkv = 1;
  p.Nq = p.Nkv = 8;
  p.d = 8;
  auto be = make_cpu_backend();
  auto r = testing_rows::row("t_good")->make(p);
  r->set_inputs(make_inputs(p));
  r->poison_outputs();
  EXPECT_GE(be->timed_sample(*r, 3, {}), 0.0);
  EXPECT_FALSE(std::isnan(r->get_outputs().o[0]));
}

TEST(backend_cpu, best_available_backend_gives_a_reason_without_a_gpu) {
  std::string why;
  const backend_kind k = best_available_backend(&why);
  if (k == backend_kind::cpu) EXPECT_FALSE(why.empty());
}

// The cuda backend (harness/cuda): the JSON context's device_info / ceilings
// keys (docs/json_schema.md), plausible measured ceilings, event timing,
// free memory, NVTX ranges. Without a device make_cuda_backend() must throw
// a backend_error carrying the reason (that one runs everywhere).
#include <gtest/gtest.h>

#include <cmath>

#include "harness/backend.hpp"
#include "tests/gpu/cuda_cases.hpp"

namespace attnbench::testing {
namespace {

TEST(CudaBackendHost, NoDeviceGivesTheReason) {
  if (no_device_reason().empty()) GTEST_SKIP() << "a device is present; covered by the GPU tests";
  try {
    make_cuda_backend();
    ADD_FAILURE() << "make_cuda_backend() succeeded without a device";
  } catch (const backend_error& e) {
    EXPECT_NE(std::string(e.what()).find("CUDA"), std::string::npos) << e.what();
  }
}

TEST(CudaBackend, ContextHasDeviceInfoAndPlausibleCeilings) {
  ATTN_REQUIRE_GPU();
  auto be = make_cuda_backend();
  EXPECT_EQ(be->kind(), backend_kind::cuda);
  EXPECT_TRUE(be->manual_time());
  const nlohmann::json c = be->context(true);
  const nlohmann::json& info = c.at("device_info");
  for (const char* k : {"name", "compute_capability", "sm_count", "sm_clock_mhz", "mem_clock_mhz", "bus_width_bits",
                        "l2_bytes", "mem_bytes", "driver_version", "runtime_version", "cublas_version"})
    EXPECT_TRUE(info.contains(k)) << k;
  EXPECT_GT(info.at("sm_count").get<int>(), 0);
  EXPECT_GT(info.at("l2_bytes").get<std::int64_t>(), 0);
  EXPECT_EQ(c.at("device").get<std::string>(), info.at("name").get<std::string>());

  const nlohmann::json& theo = c.at("ceilings").at("theoretical");
  const nlohmann::json& meas = c.at("ceilings").at("measured");
  const double bw = meas.at("bandwidth_gbps").get<double>();
  const double bw_theo = theo.at("bandwidth_gbps").get<double>();
  EXPECT_GT(bw, 0.3 * bw_theo) << "copy bandwidth far below the memory's";
  EXPECT_LT(bw, 1.1 * bw_theo) << "copy bandwidth above the memory's: L2 measured?";
  for (const char* t : {"fp32", "tf32", "fp16", "bf16"}) {
    ASSERT_TRUE(meas.at("tflops").contains(t)) << t;
    const double v = meas.at("tflops").at(t).get<double>();
    EXPECT_GT(v, 0.1) << t;
    if (theo.contains("tflops")) {
      const double peak = theo.at("tflops").at(t).get<double>();
      EXPECT_LT(v, 1.1 * peak) << t << " measured above the theoretical peak";
      EXPECT_GT(v, 0.2 * peak) << t;
    }
  }
  if (theo.contains("tflops"))  // tensor cores beat CUDA cores
    EXPECT_GT(meas.at("tflops").at("bf16").get<double>(), meas.at("tflops").at("fp32").get<double>());
}

TEST(CudaBackend, TimedSamplesArePositiveAndBatched) {
  ATTN_REQUIRE_GPU();
  auto be = make_cuda_backend();
  const variant* v = find_variant("cublas_unfused", backend_kind::cuda);
  ASSERT_NE(v, nullptr);
  const problem p = make_problem({1, 8, 2, 512, 512, 64}, dtype::bf16, "causal");
  auto r = v->make(p);
  r->set_inputs(make_inputs(p));
  for (bool hot : {false, true}) {
    timing_options opt;
    opt.hot = hot;
    be->range_push(v->benchmark_name(p));
    const double one = be->timed_sample(*r, 1, opt);
    const double ten = be->timed_sample(*r, 10, opt);
    be->range_pop();
    EXPECT_TRUE(std::isfinite(one) && one > 0 && one < 1.0) << one;
    EXPECT_TRUE(std::isfinite(ten) && ten > 0 && ten < 1.0) << ten;
    EXPECT_LT(ten, 3 * one) << "per-launch time of a batch should not exceed a single launch's";
  }
  be->synchronize();
  const std::int64_t free = be->free_memory_bytes();
  EXPECT_GT(free, 0);
  EXPECT_LT(free, be->context(false).at("device_info").at("mem_bytes").get<std::int64_t>());
  EXPECT_FALSE(be->context(false).at("ceilings").contains("measured"));
}

}  // namespace
}  // namespace attnbench::testing

// The exp roof's ceilings: the datasheet's exp rate (SMs x 16 x the clock of its
// tensor figures), the theoretical rate of other GPUs, the CPU measurement (the kernels' own
// exp in checked chains; ~0.2 s here), and how they enter a backend's context
// (add_exp_ceilings). Controls: the chain check rejects results of another
// step count; a context that already has an exp rate is not measured again.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "harness/datasheet.hpp"
#include "harness/exp_ceiling.hpp"
#include "kernels/cpu/exp_throughput.hpp"

namespace attnbench {
namespace {

using nlohmann::json;

TEST(ExpCeiling, DatasheetRateIsSmsTimes16TimesTheTensorClock) {
  const datasheet_part* h200 = find_datasheet("NVIDIA H200");
  ASSERT_NE(h200, nullptr);
  EXPECT_DOUBLE_EQ(datasheet_exps_per_s(*h200), 132 * 16 * 1830e6);  // 3.865e12, the FA3 paper's 3.9 T/s
  // The clock is the one the dense bf16 figure holds at: SMs x 4096 (sm_90) or 2048 (A100) x clock.
  for (const char* name :
       {"NVIDIA H200 NVL", "NVIDIA H200", "NVIDIA H100 NVL", "NVIDIA H100 PCIe", "NVIDIA H100 80GB HBM3",
        "NVIDIA A100-SXM4-80GB", "NVIDIA A100-SXM4-40GB", "NVIDIA A100 80GB PCIe"}) {
    const datasheet_part* d = find_datasheet(name);
    ASSERT_NE(d, nullptr) << name;
    const double per_clock = d->fp8 > 0 ? 4096 : 2048;
    EXPECT_NEAR(d->sms * per_clock * d->clock_mhz * 1e6 / 1e12, d->bf16, d->bf16 * 0.003) << name;
  }
}

TEST(ExpCeiling, TheoreticalRateOfKnownAndOtherGpusAndNoneForCpus) {
  const json h200 = theoretical_exp_ceiling({{"device", "NVIDIA H200"}});
  EXPECT_DOUBLE_EQ(h200["exps_per_s"].get<double>(), 132 * 16 * 1830e6);
  EXPECT_NE(h200["exp_source"].get<std::string>().find("1830 MHz"), std::string::npos);
  const json other = theoretical_exp_ceiling(
      {{"device", "NVIDIA RTX 6000 Ada"},
       {"device_info", {{"compute_capability", "8.9"}, {"sm_count", 142}, {"sm_clock_mhz", 2505.0}}}});
  EXPECT_DOUBLE_EQ(other["exps_per_s"].get<double>(), 142 * 16 * 2505e6);
  EXPECT_NE(other["exp_source"].get<std::string>().find("upper bound"), std::string::npos);
  EXPECT_TRUE(theoretical_exp_ceiling(
                  {{"device", "NVIDIA B200"},
                   {"device_info", {{"compute_capability", "10.0"}, {"sm_count", 148}, {"sm_clock_mhz", 1965.0}}}})
                  .is_null());  // not assumed
  EXPECT_TRUE(theoretical_exp_ceiling({{"device", "Intel(R) Xeon(R)"}, {"device_info", {{"threads", 2}}}}).is_null());
}

TEST(ExpCeiling, CpuChainsAreCheckedAndTheControlFails) {
  const cpu::exp_chains_result r = cpu::run_exp_chains(50, 2);
  EXPECT_EQ(r.first_wrong, -1) << r.path;
  EXPECT_EQ(r.exps, 2 * cpu::exp_chain_lanes * 50);
  // The same chains run by hand: 5 steps checked as 5 pass, as 6 fail (not converged yet).
  std::vector<float> x(cpu::exp_chain_lanes);
  for (int c = 0; c < cpu::exp_chain_lanes; ++c) {
    x[c] = cpu::exp_chain_start(c);
    for (int s = 0; s < 5; ++s) x[c] = -std::exp(x[c]);
  }
  EXPECT_EQ(cpu::exp_chains_first_wrong(x.data(), cpu::exp_chain_lanes, 5), -1);
  EXPECT_EQ(cpu::exp_chains_first_wrong(x.data(), cpu::exp_chain_lanes, 6), 0);
}

TEST(ExpCeiling, CpuMeasurementRecordsTheRateAndHow) {
  const json m = measure_exp_ceiling_cpu();
  ASSERT_TRUE(m["exps_per_s"].is_number()) << m.dump();
  EXPECT_GT(m["exps_per_s"].get<double>(), 1e7);
  EXPECT_GT(m["exp_method"]["steps"].get<std::int64_t>(), 0);
  EXPECT_NE(m["exp_method"]["function"].get<std::string>().find("exp_approx"), std::string::npos);
}

// add_exp_ceilings: what make_context and `attnbench ceilings` add to a backend's context.
TEST(ExpCeiling, ContextsGetTheExpCeilings) {
  json cpu = {{"device", "stub"}, {"ceilings", json::object()}};
  add_exp_ceilings(cpu, backend_kind::cpu, false);
  EXPECT_FALSE(cpu["ceilings"].contains("measured"));     // nothing measured unless asked
  EXPECT_FALSE(cpu["ceilings"].contains("theoretical"));  // CPUs have no theoretical rate
  cpu["ceilings"]["measured"] = {{"bandwidth_gbps", 1.0}};
  add_exp_ceilings(cpu, backend_kind::cpu, true);
  EXPECT_DOUBLE_EQ(cpu["ceilings"]["measured"]["bandwidth_gbps"].get<double>(), 1.0);
  EXPECT_TRUE(cpu["ceilings"]["measured"]["exps_per_s"].is_number());
  // Control: an exp rate already there (the cpu backend measured it, or --ceilings-from) stays.
  json given = {{"ceilings", {{"measured", {{"exps_per_s", 123.0}}}}}};
  add_exp_ceilings(given, backend_kind::cpu, true);
  EXPECT_DOUBLE_EQ(given["ceilings"]["measured"]["exps_per_s"].get<double>(), 123.0);
  // A CUDA context gets the theoretical rate without measuring; without the module's
  // measurement registered (this binary) nothing measured is invented.
  json gpu = {{"device", "NVIDIA H100 80GB HBM3"}, {"ceilings", {{"theoretical", {{"bandwidth_gbps", 3350}}}}}};
  add_exp_ceilings(gpu, backend_kind::cuda, false);
  EXPECT_DOUBLE_EQ(gpu["ceilings"]["theoretical"]["exps_per_s"].get<double>(), 132 * 16 * 1830e6);
  EXPECT_DOUBLE_EQ(gpu["ceilings"]["theoretical"]["bandwidth_gbps"].get<double>(), 3350);
  add_exp_ceilings(gpu, backend_kind::cuda, true);
  EXPECT_FALSE(gpu["ceilings"].contains("measured"));
}

}  // namespace
}  // namespace attnbench

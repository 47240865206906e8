// Datasheet peaks of the GPUs attnbench knows by name: the theoretical
// ceilings of the roofline, named by part (docs/json_schema.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

namespace attnbench {

// Dense (no sparsity) figures in TFLOP/s and GB/s; tensor-core rates with
// fp32 accumulation. They assume the tensor boost clock (1830 MHz on H100 and
// H200), not the maximum clock the driver reports (1980 MHz). fp8 is the FP8
// (e4m3) tensor rate, 0 for parts without FP8 tensor cores (A100).
struct datasheet_part {
  const char* name_contains;  // matched against the driver's device name
  const char* part;
  double fp32, tf32, fp16, bf16, bandwidth_gbps, fp8;
  // SMs, and the SM clock at which the dense bf16 figure holds (bf16 = SMs x tensor ops
  // per clock x clock: 4096 on sm_90, 2048 on sm_80): the clock of the exp roof.
  int sms;
  double clock_mhz;
};

// Exponentials per second of the multi-function units (16 exp2 per clock per SM on
// sm_80 and sm_90, the FA3 paper's 3.9 T/s on H100 SXM5) at the part's clock above.
inline constexpr double mufu_exp2_per_clock_per_sm = 16;
double datasheet_exps_per_s(const datasheet_part& d);

// The first row whose name_contains is in `device_name` (more specific names
// first), or nullptr.
const datasheet_part* find_datasheet(std::string_view device_name);

// The part's peaks as the context's ceilings.theoretical.tflops, keyed by the
// dtype names entries carry: fp32, tf32, fp16, bf16 and, where the part has
// FP8 tensor cores, e4m3.
nlohmann::json datasheet_tflops(const datasheet_part& d);

}  // namespace attnbench

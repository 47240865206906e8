#include "harness/datasheet.hpp"

namespace attnbench {

namespace {

// fp8: NVIDIA's H100 and H200 datasheets give "FP8 Tensor Core" with
// sparsity (SXM 3,958, NVL 3,341, H100 PCIe 3,026 TFLOPS); dense is half.
// A100 has no FP8 tensor cores: 0, and the context gives no e4m3 peak.
// SMs and clock: bf16 = SMs x 4096 (sm_90; A100 2048) x clock, the clock rounded to
// 5 MHz: 132 x 4096 x 1830 MHz = 989.4 (SXM), 132 x 4096 x 1545 = 835.3 (NVL),
// 114 x 4096 x 1620 = 756.4 (H100 PCIe), 108 x 2048 x 1410 = 311.9 (A100); the exp
// roof is taken at the same clock, so exp / tensor = 16 / 4096 (sm_90) as on the chip.
constexpr datasheet_part datasheet_table[] = {
    {"H200 NVL", "NVIDIA H200 NVL", 60, 417.5, 835.5, 835.5, 4800, 1670.5, 132, 1545},
    {"H200", "NVIDIA H200 SXM", 67, 494.7, 989.4, 989.4, 4800, 1979, 132, 1830},
    {"H100 NVL", "NVIDIA H100 NVL", 60, 417.5, 835.5, 835.5, 3900, 1670.5, 132, 1545},
    {"H100 PCIe", "NVIDIA H100 PCIe", 51, 378, 756, 756, 2000, 1513, 114, 1620},
    {"H100", "NVIDIA H100 SXM5", 67, 494.7, 989.4, 989.4, 3350, 1979, 132, 1830},
    {"A100-SXM4-80GB", "NVIDIA A100 SXM4 80GB", 19.5, 156, 312, 312, 2039, 0, 108, 1410},
    {"A100-SXM4-40GB", "NVIDIA A100 SXM4 40GB", 19.5, 156, 312, 312, 1555, 0, 108, 1410},
    {"A100 80GB PCIe", "NVIDIA A100 PCIe 80GB", 19.5, 156, 312, 312, 1935, 0, 108, 1410},
};

}  // namespace

const datasheet_part* find_datasheet(std::string_view name) {
  for (const auto& d : datasheet_table)
    if (name.find(d.name_contains) != std::string_view::npos) return &d;
  return nullptr;
}

nlohmann::json datasheet_tflops(const datasheet_part& d) {
  nlohmann::json t = {{"fp32", d.fp32}, {"tf32", d.tf32}, {"fp16", d.fp16}, {"bf16", d.bf16}};
  if (d.fp8 > 0) t["e4m3"] = d.fp8;
  return t;
}

double datasheet_exps_per_s(const datasheet_part& d) { return d.sms * mufu_exp2_per_clock_per_sm * d.clock_mhz * 1e6; }

}  // namespace attnbench

// Datasheet peaks of the GPUs attnbench knows by name: the theoretical
// ceilings of the roofline, named by part (docs/json_schema.md).
#pragma once

#include <string_view>

namespace attnbench {

// Dense (no sparsity) figures in TFLOP/s and GB/s; tensor-core rates with
// fp32 accumulation. They assume the tensor boost clock (1830 MHz on H100 and
// H200), not the maximum clock the driver reports (1980 MHz).
struct datasheet_part {
  const char* name_contains;  // matched against the driver's device name
  const char* part;
  double fp32, tf32, fp16, bf16, bandwidth_gbps;
};

// The first row whose name_contains is in `device_name` (more specific names
// first), or nullptr.
const datasheet_part* find_datasheet(std::string_view device_name);

}  // namespace attnbench

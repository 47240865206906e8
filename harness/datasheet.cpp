#include "harness/datasheet.hpp"

namespace attnbench {

namespace {

constexpr datasheet_part datasheet_table[] = {
    {"H200 NVL", "NVIDIA H200 NVL", 60, 417.5, 835.5, 835.5, 4800},
    {"H200", "NVIDIA H200 SXM", 67, 494.7, 989.4, 989.4, 4800},
    {"H100 NVL", "NVIDIA H100 NVL", 60, 417.5, 835.5, 835.5, 3900},
    {"H100 PCIe", "NVIDIA H100 PCIe", 51, 378, 756, 756, 2000},
    {"H100", "NVIDIA H100 SXM5", 67, 494.7, 989.4, 989.4, 3350},
    {"A100-SXM4-80GB", "NVIDIA A100 SXM4 80GB", 19.5, 156, 312, 312, 2039},
    {"A100-SXM4-40GB", "NVIDIA A100 SXM4 40GB", 19.5, 156, 312, 312, 1555},
    {"A100 80GB PCIe", "NVIDIA A100 PCIe 80GB", 19.5, 156, 312, 312, 1935},
};

}  // namespace

const datasheet_part* find_datasheet(std::string_view name) {
  for (const auto& d : datasheet_table)
    if (name.find(d.name_contains) != std::string_view::npos) return &d;
  return nullptr;
}

}  // namespace attnbench

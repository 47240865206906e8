// Theoretical ceilings by part name (issue 9, defect 2): the datasheet's
// dense figures at the tensor boost clock, not ops/clock x the max clock.
#include <gtest/gtest.h>

#include "harness/datasheet.hpp"

namespace attnbench {
namespace {

TEST(Datasheet, H200AndH100UseTheDatasheetNotTheMaxClock) {
  const datasheet_part* h200 = find_datasheet("NVIDIA H200");
  ASSERT_NE(h200, nullptr);
  EXPECT_DOUBLE_EQ(h200->bf16, 989.4);
  EXPECT_DOUBLE_EQ(h200->bandwidth_gbps, 4800);
  // 4096 dense bf16 ops/clock/SM x 132 SMs x 1980 MHz would be ~1070 TFLOP/s.
  EXPECT_LT(h200->bf16, 4096.0 * 132 * 1.98e9 / 1e12 * 0.95);
  const datasheet_part* sxm = find_datasheet("NVIDIA H100 80GB HBM3");
  ASSERT_NE(sxm, nullptr);
  EXPECT_STREQ(sxm->part, "NVIDIA H100 SXM5");
  EXPECT_DOUBLE_EQ(sxm->bandwidth_gbps, 3350);
}

TEST(Datasheet, MoreSpecificNamesWinAndUnknownPartsHaveNone) {
  ASSERT_NE(find_datasheet("NVIDIA H100 PCIe"), nullptr);
  EXPECT_STREQ(find_datasheet("NVIDIA H100 PCIe")->part, "NVIDIA H100 PCIe");
  EXPECT_STREQ(find_datasheet("NVIDIA H200 NVL")->part, "NVIDIA H200 NVL");
  EXPECT_EQ(find_datasheet("NVIDIA GeForce RTX 4090"), nullptr);
  EXPECT_EQ(find_datasheet(""), nullptr);
}

}  // namespace
}  // namespace attnbench

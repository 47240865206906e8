// Theoretical ceilings by part name: the datasheet's
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

// FP8 (e4m3) dense peaks: the datasheets give FP8 with sparsity
// (H100/H200 SXM 3,958, NVL 3,341, H100 PCIe 3,026 TFLOPS); dense is half,
// about twice bf16. A100 has no FP8: 0, so the context gives no e4m3 key.
TEST(Datasheet, Fp8DensePeaksAreHalfTheSparsityFigures) {
  const struct {
    const char* name;
    double fp8;
  } parts[] = {{"NVIDIA H200", 1979},
               {"NVIDIA H100 80GB HBM3", 1979},
               {"NVIDIA H200 NVL", 1670.5},
               {"NVIDIA H100 NVL", 1670.5},
               {"NVIDIA H100 PCIe", 1513}};
  for (const auto& part : parts) {
    const datasheet_part* d = find_datasheet(part.name);
    ASSERT_NE(d, nullptr) << part.name;
    EXPECT_DOUBLE_EQ(d->fp8, part.fp8) << part.name;
    EXPECT_NEAR(d->fp8 / d->bf16, 2.0, 0.01) << part.name;  // not the sparsity figure (4x)
  }
  for (const char* a100 : {"NVIDIA A100-SXM4-80GB", "NVIDIA A100-SXM4-40GB", "NVIDIA A100 80GB PCIe"}) {
    ASSERT_NE(find_datasheet(a100), nullptr) << a100;
    EXPECT_EQ(find_datasheet(a100)->fp8, 0) << a100;
  }
}

// The context's ceilings.theoretical.tflops: keyed by the entries' dtype names,
// e4m3 where the part has FP8 (the report picks the peak by the entry's dtype).
TEST(Datasheet, TheoreticalTflopsCarryE4m3WhereThePartHasFp8) {
  const nlohmann::json h200 = datasheet_tflops(*find_datasheet("NVIDIA H200"));
  EXPECT_EQ(h200.value("e4m3", 0.0), 1979);
  EXPECT_EQ(h200.value("bf16", 0.0), 989.4);
  EXPECT_EQ(h200.size(), 5u);
  const nlohmann::json a100 = datasheet_tflops(*find_datasheet("NVIDIA A100-SXM4-80GB"));
  EXPECT_FALSE(a100.contains("e4m3"));
  EXPECT_EQ(a100.size(), 4u);
}

}  // namespace
}  // namespace attnbench

// The fp16/bf16 tolerance rule of the GPU tests (tests/gpu/tolerance.hpp),
// on the CPU: min(2 x baseline + 1e-6, fixed bound per
// dtype), and a baseline beyond the fixed bound is reported as suspect.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tests/gpu/tolerance.hpp"

namespace attnbench::testing {
namespace {

TEST(ToleranceCap, TwiceTheBaselineBelowTheCap) {
  const low_precision_tolerance t = low_precision_tolerance_for(dtype::fp16, 3e-4);
  EXPECT_DOUBLE_EQ(t.bound, 2 * 3e-4 + 1e-6);
  EXPECT_TRUE(t.baseline_within_cap);
  EXPECT_DOUBLE_EQ(low_precision_tolerance_for(dtype::bf16, 2e-3).bound, 4e-3 + 1e-6);
}

TEST(ToleranceCap, CappedPerDtype) {
  // A baseline just under the cap: twice it would exceed the cap, the cap wins.
  const low_precision_tolerance h = low_precision_tolerance_for(dtype::fp16, 1.5e-3);
  EXPECT_DOUBLE_EQ(h.bound, fixed_bound(dtype::fp16));
  EXPECT_TRUE(h.baseline_within_cap);
  const low_precision_tolerance b = low_precision_tolerance_for(dtype::bf16, 1.2e-2);
  EXPECT_DOUBLE_EQ(b.bound, fixed_bound(dtype::bf16));
  EXPECT_TRUE(b.baseline_within_cap);
  EXPECT_LT(fixed_bound(dtype::fp16), fixed_bound(dtype::bf16));
}

TEST(ToleranceCap, WrongButFiniteBaselineFails) {
  // The defect the rule exists for: a baseline that is itself wrong (0.3)
  // must not widen the bound, and must be reported.
  for (dtype t : {dtype::fp16, dtype::bf16}) {
    const low_precision_tolerance w = low_precision_tolerance_for(t, 0.3);
    EXPECT_FALSE(w.baseline_within_cap) << to_string(t);
    EXPECT_DOUBLE_EQ(w.bound, fixed_bound(t)) << to_string(t);
  }
  EXPECT_FALSE(low_precision_tolerance_for(dtype::fp16, fixed_bound(dtype::fp16) * 1.01).baseline_within_cap);
  EXPECT_TRUE(low_precision_tolerance_for(dtype::fp16, fixed_bound(dtype::fp16)).baseline_within_cap);
}

TEST(ToleranceCap, NonFiniteBaselineFails) {
  for (double x : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(), -1.0}) {
    const low_precision_tolerance w = low_precision_tolerance_for(dtype::bf16, x);
    EXPECT_FALSE(w.baseline_within_cap) << x;
    EXPECT_DOUBLE_EQ(w.bound, fixed_bound(dtype::bf16)) << x;
  }
}

}  // namespace
}  // namespace attnbench::testing

#include <gtest/gtest.h>

#include "harness/mask.hpp"
#include "harness/problem.hpp"

using namespace attnbench;

TEST(problem, mask_round_trip) {
  for (const char* s : {"none", "causal", "local:255,0", "local:4,4+global:16", "causal+global:2"})
    EXPECT_EQ(to_string(parse_mask(s)), s);
  EXPECT_EQ(to_string(parse_mask("global:3")), "none+global:3");
}

#include <gtest/gtest.h>

#include "core/mask.hpp"
#include "core/problem.hpp"

using namespace attnbench;

TEST(problem, mask_round_trip) {
  for (const char* s : {"none", "causal", "local:255,0", "local:4,4+global:16", "causal+global:2"})
    EXPECT_EQ(to_string(parse_mask(s)), s);
  EXPECT_EQ(to_string(parse_mask("global:3")), "none+global:3");
  const mask_spec m = parse_mask("local:7,2+global:5");
  EXPECT_EQ(m.kind, mask_kind::local);
  EXPECT_EQ(m.left, 7);
  EXPECT_EQ(m.right, 2);
  EXPECT_EQ(m.global, 5);
}

TEST(problem, bad_masks_name_the_value) {
  for (const char* s :
       {"", "causl", "local:5", "local:a,1", "local:-1,0", "causal+global:0", "causal+glob:3", "local:1,2,3"}) {
    try {
      parse_mask(s);
      ADD_FAILURE() << "accepted '" << s << "'";
    } catch (const input_error& e) {
      EXPECT_NE(std::string(e.what()).find(s), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    }
  }
}

TEST(problem, dtype_parse) {
  EXPECT_EQ(parse_dtype("bf16"), dtype::bf16);
  EXPECT_EQ(dtype_bytes(dtype::fp16), 2);
  EXPECT_EQ(dtype_bytes(dtype::fp32), 4);
  EXPECT_THROW(parse_dtype("fp8"), input_error);
}

static std::string validation_error(problem p) {
  try {
    validate(p);
  } catch (const input_error& e) {
    return e.what();
  }
  return {};
}

TEST(problem, validate_names_the_bad_value) {
  problem ok;
  ok.H = 8;
  ok.Hkv = 2;
  EXPECT_EQ(validation_error(ok), "");
  problem p = ok;
  p.Hkv = 3;
  EXPECT_NE(validation_error(p).find("Hkv=3"), std::string::npos);
  p = ok;
  p.Nq = 0;
  EXPECT_NE(validation_error(p).find("Nq"), std::string::npos);
  p = ok;
  p.d = 300;
  EXPECT_NE(validation_error(p).find("d=300"), std::string::npos);
  p = ok;
  p.Br = 48;
  EXPECT_NE(validation_error(p).find("Br=48"), std::string::npos);
  p = ok;
  p.Bc = 512;
  EXPECT_NE(validation_error(p).find("Bc=512"), std::string::npos);
}

// Sizes that would overflow 64-bit size and byte arithmetic, or
// spin the per-row models, are refused by name; masks bounds likewise.
TEST(problem, sizes_beyond_the_limits_name_the_value) {
  problem ok;
  problem p = ok;
  p.B = 2305843009213693952;  // B*H*Nq*d wraps to 0 in 64 bits
  p.Nq = p.Nkv = 8;
  EXPECT_NE(validation_error(p).find("B (batch) = 2305843009213693952 exceeds"), std::string::npos)
      << validation_error(p);
  p = ok;
  p.Nq = 4611686018427387904;
  EXPECT_NE(validation_error(p).find("Nq (query length) = 4611686018427387904"), std::string::npos);
  p = ok;
  p.Nkv = max_seq + 1;
  EXPECT_NE(validation_error(p).find("Nkv (key length)"), std::string::npos);
  p = ok;
  p.B = max_batch;
  p.H = p.Hkv = max_heads;
  p.Nq = p.Nkv = max_seq;
  EXPECT_NE(validation_error(p).find("B*H*Nq*Nkv"), std::string::npos);
  p = ok;
  p.Nq = p.Nkv = max_seq;
  EXPECT_EQ(validation_error(p), "");
}

TEST(problem, mask_bounds_beyond_the_limit_name_the_value) {
  for (const char* m : {"local:0,9223372036854775807", "local:9223372036854775807,0",
                        "causal+global:9223372036854775807", "local:0,1099511627777"}) {
    try {
      parse_mask(m);
      ADD_FAILURE() << m << " accepted";
    } catch (const input_error& e) {
      EXPECT_NE(std::string(e.what()).find("exceeds the largest accepted 1099511627776"), std::string::npos)
          << e.what();
    }
  }
  EXPECT_EQ(parse_mask("local:0,1099511627776").right, max_mask_param);
  problem p;
  p.mask.kind = mask_kind::local;
  p.mask.right = max_mask_param + 1;  // built without parse_mask
  EXPECT_NE(validation_error(p).find("local window R"), std::string::npos);
  // At the bound, window arithmetic stays exact: every key is visible.
  p.mask.right = max_mask_param;
  p.mask.left = max_mask_param;
  p.Nq = 5;
  p.Nkv = 9;
  for (std::int64_t i = 0; i < p.Nq; ++i) EXPECT_EQ(visible_keys(p, i), p.Nkv);
}

TEST(problem, benchmark_name_encodes_every_axis) {
  problem p;
  p.B = 1;
  p.H = 8;
  p.Hkv = 2;
  p.Nq = 1024;
  p.Nkv = 1024;
  p.d = 64;
  p.mask = parse_mask("causal");
  EXPECT_EQ(benchmark_name("flash2", "cpu", p),
            "flash2/cpu/fp32/B:1/H:8/Hkv:2/Nq:1024/Nkv:1024/d:64/mask:causal/Br:64/Bc:64");
}

TEST(problem, parse_positive) {
  EXPECT_EQ(parse_positive("12", "--seq"), 12);
  EXPECT_THROW(parse_positive("0", "--seq"), input_error);
  EXPECT_THROW(parse_positive("12x", "--seq"), input_error);
}

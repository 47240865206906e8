// The fp64 reference against cases computed by hand: equal keys give uniform
// weights, one-hot scores pick one value row, rows without a visible key give
// zeros and lse -inf, GQA head mapping, linear attention with phi = elu + 1.
#include <gtest/gtest.h>

#include <cmath>

#include "harness/tensors.hpp"
#include "kernels/reference/attention_reference.hpp"

using namespace attnbench;

namespace {

host_inputs zeros(std::int64_t H, std::int64_t Hkv, std::int64_t Nq, std::int64_t Nkv, const char* mask,
                  std::int64_t d = 8) {
  problem p;
  p.H = H;
  p.Hkv = Hkv;
  p.Nq = Nq;
  p.Nkv = Nkv;
  p.d = d;
  p.mask = parse_mask(mask);
  return {p, std::vector<float>(p.q_elems()), std::vector<float>(p.kv_elems()), std::vector<float>(p.kv_elems())};
}

// V[j][c] = 10 j + c (head hkv adds 1000 hkv), so averages are easy to write.
void value_ramp(host_inputs& in) {
  const problem& p = in.p;
  for (std::int64_t h = 0; h < p.Hkv; ++h)
    for (std::int64_t j = 0; j < p.Nkv; ++j)
      for (std::int64_t c = 0; c < p.d; ++c) in.v[(h * p.Nkv + j) * p.d + c] = float(1000 * h + 10 * j + c);
}

TEST(reference, equal_keys_give_uniform_weights) {
  host_inputs in = zeros(1, 1, 4, 4, "causal");
  for (float& x : in.q) x = 0.5f;
  for (float& x : in.k) x = 1.0f;  // every score 0.5 * 8 / sqrt(8) = sqrt(2)
  value_ramp(in);
  const auto ref = reference_softmax(in, all_rows(in.p));
  for (std::int64_t i = 0; i < 4; ++i) {
    // Causal, square: row i averages keys 0..i -> 10 * i / 2 + c.
    for (std::int64_t c = 0; c < 8; ++c) EXPECT_NEAR(ref.o[i * 8 + c], 5.0 * i + c, 1e-12);
    EXPECT_NEAR(ref.lse[i], std::sqrt(2.0) + std::log(i + 1.0), 1e-12);
  }
}

TEST(reference, one_hot_scores_pick_one_value) {
  // k_j = 100 e_j, q_i = 10 e_(7 - i): the score of key 7 - i is 1000/sqrt(8),
  // every other score is 0, so the weights are one-hot to within exp(-353).
  host_inputs in = zeros(1, 1, 8, 8, "none");
  for (std::int64_t j = 0; j < 8; ++j) in.k[j * 8 + j] = 100.0f;
  for (std::int64_t i = 0; i < 8; ++i) in.q[i * 8 + (7 - i)] = 10.0f;
  value_ramp(in);
  const auto ref = reference_softmax(in, all_rows(in.p));
  for (std::int64_t i = 0; i < 8; ++i)
    for (std::int64_t c = 0; c < 8; ++c) EXPECT_NEAR(ref.o[i * 8 + c], 10.0 * (7 - i) + c, 1e-9);
}

TEST(reference, rows_without_visible_key_are_zero) {
  // Causal, Nq = 3, Nkv = 1: i' = i - 2, only row 2 sees key 0.
  host_inputs in = zeros(1, 1, 3, 1, "causal");
  value_ramp(in);
  const auto ref = reference_softmax(in, all_rows(in.p));
  for (std::int64_t i = 0; i < 2; ++i) {
    EXPECT_TRUE(std::isinf(ref.lse[i]) && ref.lse[i] < 0);
    for (std::int64_t c = 0; c < 8; ++c) EXPECT_EQ(ref.o[i * 8 + c], 0.0);
  }
  EXPECT_DOUBLE_EQ(ref.o[2 * 8 + 3], 3.0);
  EXPECT_DOUBLE_EQ(ref.lse[2], 0.0);
}

TEST(reference, local_window_and_global_tokens) {
  // local:0,0+global:1 on 4x4 with equal scores: row 0 averages all keys,
  // row i > 0 averages keys 0 and i.
  host_inputs in = zeros(1, 1, 4, 4, "local:0,0+global:1");
  value_ramp(in);
  const auto ref = reference_softmax(in, all_rows(in.p));
  EXPECT_NEAR(ref.o[0], 15.0, 1e-12);
  for (std::int64_t i = 1; i < 4; ++i) EXPECT_NEAR(ref.o[i * 8], 5.0 * i, 1e-12);
  EXPECT_NEAR(ref.lse[3], std::log(2.0), 1e-12);
}

TEST(reference, query_head_reads_its_kv_group) {
  // H = 4, Hkv = 2: heads 0, 1 read KV head 0; heads 2, 3 read KV head 1.
  host_inputs in = zeros(4, 2, 1, 3, "none");
  value_ramp(in);
  const auto ref = reference_softmax(in, all_rows(in.p));
  EXPECT_NEAR(ref.o[1 * 8], 10.0, 1e-12);    // mean of 0, 10, 20
  EXPECT_NEAR(ref.o[3 * 8], 1010.0, 1e-12);  // + 1000 for KV head 1
}

TEST(reference, selected_rows_equal_full_rows) {
  problem p;
  p.B = 2;
  p.H = 2;
  p.Nq = 9;
  p.Nkv = 13;
  p.d = 16;
  p.mask = parse_mask("local:2,3+global:1");
  const host_inputs in = make_inputs(p, 9);
  const auto full = reference_softmax(in, all_rows(p));
  const std::vector<std::int64_t> some = {0, 5, 17, 35};
  const auto part = reference_softmax(in, some);
  for (std::size_t r = 0; r < some.size(); ++r) {
    EXPECT_EQ(part.lse[r], full.lse[some[r]]);
    for (std::int64_t c = 0; c < p.d; ++c) EXPECT_EQ(part.o[r * p.d + c], full.o[some[r] * p.d + c]);
  }
}

TEST(reference, linear_attention_by_hand) {
  // q = 0 -> phi(q) = 1; k_0 = 0 -> phi = 1; k_1 = 1 -> phi = 2; k_2 = -1 -> phi = 1/e.
  // Weights phi(q).phi(k_j) = 8, 16, 8/e.
  host_inputs in = zeros(1, 1, 3, 3, "none");
  for (std::int64_t c = 0; c < 8; ++c) {
    in.k[1 * 8 + c] = 1.0f;
    in.k[2 * 8 + c] = -1.0f;
  }
  value_ramp(in);
  const double w2 = 1.0 / std::exp(1.0);
  const double all = (0.0 + 2.0 * 10 + w2 * 20) / (1 + 2 + w2);  // column 0
  auto ref = reference_linear(in, all_rows(in.p));
  for (std::int64_t i = 0; i < 3; ++i) EXPECT_NEAR(ref.o[i * 8], all, 1e-12);
  EXPECT_NEAR(ref.o[5], all + 5, 1e-12);
  EXPECT_TRUE(ref.lse.empty());
  // Causal, square: row 0 sees key 0 (v_0), row 1 keys 0 and 1 ((v_0 + 2 v_1) / 3).
  in.p.mask = parse_mask("causal");
  ref = reference_linear(in, all_rows(in.p));
  EXPECT_NEAR(ref.o[0], 0.0, 1e-12);
  EXPECT_NEAR(ref.o[8], 20.0 / 3, 1e-12);
  EXPECT_NEAR(ref.o[16], all, 1e-12);
  // Causal, Nq > Nkv: a row before the first key is zeros.
  host_inputs z = zeros(1, 1, 3, 1, "causal");
  value_ramp(z);
  ref = reference_linear(z, all_rows(z.p));
  EXPECT_EQ(ref.o[0], 0.0);
  EXPECT_NEAR(ref.o[2 * 8 + 1], 1.0, 1e-12);
  // Local windows are not defined for linear attention.
  z.p.mask = parse_mask("local:1,1");
  EXPECT_THROW(reference_linear(z, all_rows(z.p)), input_error);
}

}  // namespace

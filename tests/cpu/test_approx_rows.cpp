// The approximation rows (docs/approximations.md) against the fp64 evaluation of the same
// approximation on the shapes each claims: ragged lengths, Nq != Nkv, Nq = 1, GQA, more
// keys than the projected length. Outputs are poisoned before each run. Negative
// controls: a kernel with a planted defect (cpu::planted_defect) must fail the same check.
#include <gtest/gtest.h>

#include <cmath>

#include "harness/tensors.hpp"
#include "kernels/cpu/cpu_common.hpp"
#include "kernels/models/models.hpp"
#include "kernels/reference/approx_params.hpp"
#include "kernels/reference/attention_reference.hpp"

using namespace attnbench;

namespace {

problem shape(std::int64_t h, std::int64_t hkv, std::int64_t nq, std::int64_t nkv, std::int64_t d,
              std::int64_t tile = 16) {
  problem p;
  p.H = h;
  p.Hkv = hkv;
  p.Nq = nq;
  p.Nkv = nkv;
  p.d = d;
  p.Br = p.Bc = tile;
  validate(p);
  return p;
}

error_report check(runner& r, const host_inputs& in, attention_math m) {
  r.set_inputs(in);
  r.poison_outputs();
  r.run();
  const host_outputs out = r.get_outputs();
  const auto rows = all_rows(in.p);
  const reference_rows ref = reference_for(m, in, rows);
  return compare_rows(in.p, out.o, out.lse, rows, ref.o, ref.lse);
}

const std::vector<problem>& linformer_shapes() {
  static const std::vector<problem> s = {shape(2, 2, 37, 37, 16), shape(4, 2, 50, 83, 32),
                                         shape(3, 1, 1, 70, 16),                                 // Nq = 1, GQA 3:1
                                         shape(2, 1, 83, 50, 8),  shape(2, 2, 20, 300, 16, 32),  // Nkv > k = 256
                                         shape(1, 1, 5, 1, 8),    shape(8, 2, 64, 64, 64, 64)};
  return s;
}

TEST(linformer, matches_the_fp64_linformer_on_every_shape) {
  const variant& v = *find_variant("linformer", backend_kind::cpu);
  for (const problem& p : linformer_shapes()) {
    ASSERT_TRUE(v.supports(p).ok) << v.benchmark_name(p);
    auto r = v.make(p);
    const error_report e = check(*r, make_inputs(p, 11), attention_math::linformer);
    EXPECT_TRUE(e.ok(1e-5)) << v.benchmark_name(p) << ": rel_l2 " << e.rel_l2 << ", nonfinite " << e.nonfinite;
    EXPECT_LT(e.lse_max_abs, 1e-4) << v.benchmark_name(p);
  }
}

// k = min(256, Nkv): projecting 300 keys to 256, 70 keys to 70.
TEST(linformer, projected_length_is_256_or_every_key) {
  EXPECT_EQ(linformer_k(shape(1, 1, 4, 300, 8)), 256);
  EXPECT_EQ(linformer_k(shape(1, 1, 4, 70, 8)), 70);
  const linformer_projections a = make_linformer_projections(70, 70), b = make_linformer_projections(70, 70);
  EXPECT_EQ(a.e, b.e);  // seeded: the reference sees the kernel's E
  EXPECT_NE(a.e, a.f);  // separate projections for K and V
}

// Control: E read transposed (square at Nkv = k = 64) fails the same check on the same shapes.
TEST(linformer, control_transposed_projection_fails_the_check) {
  for (const problem& p : {shape(2, 2, 37, 64, 16), shape(3, 1, 1, 64, 16)}) {
    auto good = cpu::make_linformer_runner(p, true);
    auto bad = cpu::make_linformer_runner(p, true, cpu::planted_defect::linformer_projection_transposed);
    const host_inputs in = make_inputs(p, 12);
    EXPECT_TRUE(check(*good, in, attention_math::linformer).ok(1e-5));
    const error_report e = check(*bad, in, attention_math::linformer);
    EXPECT_FALSE(e.ok(1e-5)) << "rel_l2 " << e.rel_l2;
    EXPECT_GT(e.rel_l2, 1e-2);
  }
}

// Masks are refused with the reason; the refusal names the mask.
TEST(linformer, refuses_masks) {
  const variant& v = *find_variant("linformer", backend_kind::cpu);
  for (const char* m : {"causal", "local:4,0", "global:2"}) {
    problem p = shape(2, 2, 40, 40, 16);
    p.mask = parse_mask(m);
    const support s = v.supports(p);
    EXPECT_FALSE(s.ok) << m;
    EXPECT_NE(s.reason.find("none only"), std::string::npos) << s.reason;
  }
}

// The approximation is one: its distance to exact softmax attention is far above the
// tolerance of the check against itself (so the check is not merely exact attention).
TEST(linformer, differs_from_exact_attention) {
  const problem p = shape(2, 2, 40, 90, 16);
  auto r = find_variant("linformer", backend_kind::cpu)->make(p);
  const host_inputs in = make_inputs(p, 13);
  const error_report exact = check(*r, in, attention_math::softmax);
  EXPECT_GT(exact.rel_l2, 1e-2);
}

}  // namespace

namespace {

// The counted bytes hold the projection pass (E, F, K, V read, K-bar and V-bar written):
// a model of flash2 over the k projected keys alone is short by exactly that share.
TEST(linformer, counted_bytes_include_the_projection_pass) {
  const problem p = shape(4, 2, 50, 83, 32);
  auto r = find_variant("linformer", backend_kind::cpu)->make(p);
  r->set_inputs(make_inputs(p, 14));
  r->run();
  const double attention_only = model_bytes_flash2(linformer_reduced_problem(p));
  EXPECT_NE(r->counted_bytes(), static_cast<std::int64_t>(attention_only));
  EXPECT_EQ(r->counted_bytes(), static_cast<std::int64_t>(attention_only + model_linformer_projection_bytes(p)));
  // 2 KV heads x (2 x 83 x 83 x 4 (E, F) + 2 x 83 x 32 x 4 (K, V) + 2 x 83 x 32 x 4 (K-bar, V-bar))
  EXPECT_EQ(model_linformer_projection_bytes(p), 2.0 * (2 * 83 * 83 * 4 + 4 * 83 * 32 * 4));
}

}  // namespace

namespace {

problem masked(problem p, const char* mask) {
  p.mask = parse_mask(mask);
  validate(p);
  return p;
}

host_inputs scaled_inputs(const problem& p, std::uint64_t seed, float qk_scale) {
  host_inputs in = make_inputs(p, seed);
  for (float& x : in.q) x *= qk_scale;
  for (float& x : in.k) x *= qk_scale;
  return in;
}

const std::vector<problem>& performer_shapes() {
  static const std::vector<problem> s = {shape(2, 2, 37, 37, 16),
                                         masked(shape(2, 2, 37, 37, 16), "causal"),
                                         shape(3, 1, 1, 70, 16),
                                         masked(shape(3, 1, 1, 70, 16), "causal"),  // Nq = 1, GQA 3:1
                                         masked(shape(4, 2, 83, 50, 8), "causal"),  // rows without keys
                                         masked(shape(2, 1, 50, 83, 32, 32), "causal"),
                                         shape(2, 1, 50, 83, 32, 32),
                                         masked(shape(2, 2, 64, 64, 64, 64), "causal")};
  return s;
}

TEST(performer, matches_the_fp64_performer_on_every_shape) {
  const variant& v = *find_variant("performer", backend_kind::cpu);
  for (const problem& p : performer_shapes()) {
    ASSERT_TRUE(v.supports(p).ok) << v.benchmark_name(p);
    auto r = v.make(p);
    const error_report e = check(*r, make_inputs(p, 21), attention_math::performer);
    EXPECT_TRUE(e.ok(1e-5)) << v.benchmark_name(p) << ": rel_l2 " << e.rel_l2 << ", nonfinite " << e.nonfinite;
  }
}

// Large |q|, |k| (x 10: |x~|^2 / 2 ~ 200 at d = 16) underflow every exp(omega^T x~ - |x~|^2 / 2)
// in fp32 unless the stabilisers take the max out: the stabilised kernel still matches
// fp64, the kernel without them fails the same check (0 / 0).
TEST(performer, control_without_stabilisers_fails_the_check) {
  for (const problem& p : {shape(2, 1, 40, 70, 16), masked(shape(2, 1, 40, 70, 16), "causal")}) {
    const host_inputs in = scaled_inputs(p, 22, 10.0f);
    auto good = cpu::make_performer_runner(p, false);
    auto bad = cpu::make_performer_runner(p, false, cpu::planted_defect::performer_no_stabiliser);
    const error_report g = check(*good, in, attention_math::performer);
    EXPECT_TRUE(g.ok(1e-5)) << to_string(p.mask) << ": rel_l2 " << g.rel_l2 << ", nonfinite " << g.nonfinite;
    EXPECT_FALSE(check(*bad, in, attention_math::performer).ok(1e-5)) << to_string(p.mask);
  }
}

// omega: rows of one block of d orthogonal, across blocks not; every row non-zero.
TEST(performer, features_are_block_orthogonal) {
  const std::int64_t d = 16, m = 256;
  const std::vector<float> w = make_performer_features(m, d);
  EXPECT_EQ(w, make_performer_features(m, d));  // seeded, never redrawn
  auto cosine = [&](std::int64_t f, std::int64_t g) {
    double fg = 0, ff = 0, gg = 0;
    for (std::int64_t c = 0; c < d; ++c) {
      fg += double(w[f * d + c]) * w[g * d + c];
      ff += double(w[f * d + c]) * w[f * d + c];
      gg += double(w[g * d + c]) * w[g * d + c];
    }
    return std::abs(fg) / std::sqrt(ff * gg);
  };
  double within = 0, across = 0;
  for (std::int64_t f = 0; f < m; ++f)
    for (std::int64_t g = f + 1; g < m; ++g)
      (f / d == g / d ? within : across) = std::max(f / d == g / d ? within : across, cosine(f, g));
  EXPECT_LT(within, 1e-6);
  EXPECT_GT(across, 0.1);  // control: the test would see non-orthogonal rows
}

// FAVOR+'s variance grows with |q| |k|: closer to exact attention at a quarter of the norm,
// and an approximation (not exact) at both.
TEST(performer, distance_to_exact_attention_shrinks_with_the_norms) {
  const problem p = shape(2, 2, 40, 90, 16);
  auto r = find_variant("performer", backend_kind::cpu)->make(p);
  const double full = check(*r, scaled_inputs(p, 23, 1.0f), attention_math::softmax).rel_l2;
  const double quarter = check(*r, scaled_inputs(p, 23, 0.25f), attention_math::softmax).rel_l2;
  EXPECT_LT(quarter, full);
  EXPECT_GT(quarter, 1e-4);
}

// Causal Performer on masks it does not define: refused with the mask named.
TEST(performer, refuses_local_and_global_masks) {
  const variant& v = *find_variant("performer", backend_kind::cpu);
  for (const char* m : {"local:4,0", "global:2", "causal+global:3"}) {
    const support s = v.supports(masked(shape(2, 2, 40, 40, 16), m));
    EXPECT_FALSE(s.ok) << m;
    EXPECT_NE(s.reason.find(m), std::string::npos) << s.reason;
  }
}

}  // namespace

namespace {

const std::vector<problem>& additive_shapes() {
  static const std::vector<problem> s = {shape(1, 1, 1, 70, 16),
                                         masked(shape(8, 2, 1, 130, 32), "causal"),  // the decoder step
                                         shape(2, 2, 37, 37, 16),
                                         masked(shape(2, 2, 37, 37, 16), "causal"),  // Nq = Nkv
                                         masked(shape(4, 2, 83, 50, 8), "causal"),
                                         masked(shape(2, 1, 50, 83, 32, 32), "local:5,3+global:2")};
  return s;
}

TEST(additive, matches_the_fp64_additive_attention_on_every_shape) {
  const variant& v = *find_variant("additive", backend_kind::cpu);
  for (const problem& p : additive_shapes()) {
    ASSERT_TRUE(v.supports(p).ok) << v.benchmark_name(p);
    auto r = v.make(p);
    const error_report e = check(*r, make_inputs(p, 31), attention_math::additive);
    EXPECT_TRUE(e.ok(1e-5)) << v.benchmark_name(p) << ": rel_l2 " << e.rel_l2 << ", nonfinite " << e.nonfinite;
    EXPECT_LT(e.lse_max_abs, 1e-4) << v.benchmark_name(p);
  }
}

// Control: tanh replaced by the identity (the score becomes v^T (W q + U k)) fails the check.
TEST(additive, control_tanh_as_identity_fails_the_check) {
  for (const problem& p : {shape(1, 1, 1, 70, 16), masked(shape(2, 2, 37, 37, 16), "causal")}) {
    auto bad = cpu::make_additive_runner(p, true, cpu::planted_defect::additive_tanh_identity);
    const error_report e = check(*bad, make_inputs(p, 32), attention_math::additive);
    EXPECT_FALSE(e.ok(1e-5)) << "rel_l2 " << e.rel_l2;
  }
}

// A tanh per width element of every computed score beside the softmax's exps: at a = d the
// exp roof's count is (d + 1) per score plus the rescales; causal 40 x 40 at d 8 with 16 x 16
// tiles computes 16 x 16 + 16 x 32 + 8 x 40 = 1088 scores (flash2's walk).
TEST(additive, exps_count_a_tanh_per_width_element) {
  problem p = masked(shape(1, 1, 40, 40, 8), "causal");
  const model_figures f = model_additive(p);
  EXPECT_EQ(f.exps, model_exps_flash2(p) + 8.0 * 1088);
  auto r = find_variant("additive", backend_kind::cpu)->make(p);
  r->set_inputs(make_inputs(p, 33));
  r->run();
  EXPECT_EQ(r->counted_exps(), static_cast<std::int64_t>(f.exps));
}

}  // namespace

// The Routing Transformer row (kernels/cpu/routing.cpp, docs/approximations.md) against the
// fp64 evaluation of the same routing and attention (its own routing code, the same float
// centroids) on ragged shapes, Nq != Nkv both ways, Nq = 1, GQA, both masks it claims (causal
// with rows that see no key); refusal of the masks it cannot do; a negative control (the
// queries of cluster c attending to cluster c + 1's keys) that must fail the same check;
// the phases: timed apart and modeled apart, their sum the row's model. The counted bytes
// and exps are held to the model by test_counted_bytes.cpp and test_counted_exps.cpp.
#include <gtest/gtest.h>

#include "harness/tensors.hpp"
#include "kernels/cpu/cpu_common.hpp"
#include "kernels/models/models.hpp"
#include "kernels/reference/approx_params.hpp"
#include "kernels/reference/attention_reference.hpp"

using namespace attnbench;

namespace {

problem shape(std::int64_t h, std::int64_t hkv, std::int64_t nq, std::int64_t nkv, std::int64_t d,
              const char* mask = "none") {
  problem p;
  p.H = h;
  p.Hkv = hkv;
  p.Nq = nq;
  p.Nkv = nkv;
  p.d = d;
  p.Br = p.Bc = 16;
  p.mask = parse_mask(mask);
  validate(p);
  return p;
}

error_report check(runner& r, const host_inputs& in) {
  r.set_inputs(in);
  r.poison_outputs();
  r.run();
  const host_outputs out = r.get_outputs();
  const auto rows = all_rows(in.p);
  const reference_rows ref = reference_for(attention_math::routing, in, rows);
  return compare_rows(in.p, out.o, {}, rows, ref.o, {});
}

std::vector<problem> shapes() {
  std::vector<problem> s;
  for (const char* m : {"none", "causal"})
    for (const problem& p :
         {shape(2, 2, 37, 37, 16, m), shape(4, 2, 50, 83, 32, m), shape(3, 1, 1, 70, 16, m),  // Nq = 1, GQA 3:1
          shape(2, 1, 83, 50, 8, m),  // Nq > Nkv: causal rows that see no key
          shape(1, 1, 5, 1, 8, m), shape(8, 2, 64, 64, 64, m), shape(2, 2, 300, 300, 16, m)})
      s.push_back(p);
  return s;
}

TEST(routing, matches_the_fp64_routing_on_every_shape_and_mask) {
  const variant& v = *find_variant("routing", backend_kind::cpu);
  for (const problem& p : shapes()) {
    ASSERT_TRUE(v.supports(p).ok) << v.benchmark_name(p);
    auto r = v.make(p);
    const error_report e = check(*r, make_inputs(p, 41));
    EXPECT_TRUE(e.ok(1e-5)) << v.benchmark_name(p) << ": rel_l2 " << e.rel_l2 << ", nonfinite " << e.nonfinite;
  }
}

TEST(routing, clusters_are_the_root_of_nkv_and_windows_cover_every_token) {
  EXPECT_EQ(routing_shape_of(shape(1, 1, 512, 512, 8)).clusters, 23);  // round(22.6)
  EXPECT_EQ(routing_shape_of(shape(1, 1, 512, 512, 8)).wk, 23);        // ceil(512 / 23)
  EXPECT_EQ(routing_shape_of(shape(1, 1, 1, 2048, 8)).clusters, 45);
  EXPECT_EQ(routing_shape_of(shape(1, 1, 1, 2048, 8)).wq, 1);
  EXPECT_EQ(routing_shape_of(shape(1, 1, 1, 2048, 8)).wk, 46);
  EXPECT_EQ(routing_shape_of(shape(1, 1, 5, 1, 8)).clusters, 1);
  const std::vector<float> mu = make_routing_centroids(7, 16);
  for (std::int64_t c = 0; c < 7; ++c) {
    double n = 0;
    for (std::int64_t e = 0; e < 16; ++e) n += double(mu[c * 16 + e]) * mu[c * 16 + e];
    EXPECT_NEAR(n, 1.0, 1e-6) << c;
  }
  EXPECT_EQ(mu, make_routing_centroids(7, 16));  // fixed seed
}

TEST(routing, refuses_masks_other_than_none_and_causal) {
  const variant& v = *find_variant("routing", backend_kind::cpu);
  for (const char* m : {"local:4,0", "global:2", "causal+global:3"}) {
    const problem p = shape(2, 2, 40, 40, 16, m);
    const support s = v.supports(p);
    EXPECT_FALSE(s.ok) << m;
    EXPECT_FALSE(s.reason.empty()) << m;
    EXPECT_THROW(reference_for(attention_math::routing, make_inputs(p, 1), all_rows(p)), input_error) << m;
  }
}

// Negative control: queries attending to the next cluster's keys fail the check the row passes.
// Not at Nq = 1: the one query is every cluster's top 1, so the shift only reorders the mean.
TEST(routing, control_wrong_cluster_fails_the_check) {
  for (const problem& p : {shape(2, 2, 37, 37, 16), shape(4, 2, 50, 83, 32, "causal"), shape(8, 2, 64, 64, 64)}) {
    const host_inputs in = make_inputs(p, 43);
    auto good = cpu::make_routing_runner(p, false);
    auto bad = cpu::make_routing_runner(p, false, cpu::planted_defect::routing_wrong_cluster);
    EXPECT_TRUE(check(*good, in).ok(1e-5));
    const error_report e = check(*bad, in);
    EXPECT_FALSE(e.ok(1e-5)) << "rel_l2 " << e.rel_l2;
    EXPECT_GT(e.rel_l2, 1e-2);
  }
}

// It is an approximation: far from exact attention, beyond the check's tolerance.
TEST(routing, differs_from_exact_attention) {
  const problem p = shape(2, 2, 60, 90, 16);
  auto r = find_variant("routing", backend_kind::cpu)->make(p);
  const host_inputs in = make_inputs(p, 47);
  r->set_inputs(in);
  r->run();
  const auto rows = all_rows(p);
  const reference_rows exact = reference_for(attention_math::softmax, in, rows);
  const error_report e = compare_rows(p, r->get_outputs().o, {}, rows, exact.o, {});
  EXPECT_GT(e.rel_l2, 0.1);
}

// Both phases are timed by the runner (summed over runs) and modeled; the phases sum to the model.
TEST(routing, phases_are_timed_and_modeled_apart) {
  const problem p = shape(2, 2, 300, 300, 16, "causal");
  const variant& v = *find_variant("routing", backend_kind::cpu);
  auto r = v.make(p);
  r->set_inputs(make_inputs(p, 3));
  EXPECT_TRUE(r->phase_times().empty() || r->phase_times()[0].seconds == 0);
  r->run();
  r->run();
  const std::vector<phase_time> t = r->phase_times();
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].name, "routing");
  EXPECT_EQ(t[1].name, "attention");
  EXPECT_GT(t[0].seconds, 0);
  EXPECT_GT(t[1].seconds, 0);
  const std::vector<model_phase> m = v.model_phases(p);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].name, "routing");
  EXPECT_EQ(m[1].name, "attention");
  const model_figures sum = v.model(p);
  EXPECT_EQ(m[0].figures.bytes + m[1].figures.bytes, sum.bytes);
  EXPECT_EQ(m[0].figures.flops + m[1].figures.flops, sum.flops);
  // By hand: c = 17, w = 18; routing 2 d c (Hkv Nkv + H Nq) = 2*16*17*1200, attention 4 d w^2 c H.
  EXPECT_EQ(m[0].figures.flops, 2.0 * 16 * 17 * 1200);
  EXPECT_EQ(m[1].figures.flops, 4.0 * 16 * 18 * 18 * 17 * 2);
  EXPECT_EQ(m[1].figures.exps, 18.0 * 18 * 17 * 2);
  EXPECT_EQ(m[0].figures.exps, 0);
}

}  // namespace

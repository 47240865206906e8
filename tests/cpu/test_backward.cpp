// The backward pass (docs/backward.md): the fp64 reference against finite
// differences of the fp64 forward; every CPU row claiming bwd against that
// reference (ragged lengths, Nq != Nkv both ways, every mask the row takes (the sparse terms
// and per-head layouts for flash2 and sparse), GQA,
// rows and keys without a visible partner, length 1), bwd and fwd_bwd, from
// poisoned gradients, run twice (no accumulation across runs); bytes and exps
// counted by the kernels equal the model; validation rejects wrong gradients.
// Each check has a negative control that must fail.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <omp.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include "core/block_layout.hpp"
#include "core/mask.hpp"
#include "harness/backend.hpp"
#include "harness/json_output.hpp"
#include "harness/run_result.hpp"
#include "harness/tensors.hpp"
#include "harness/validation.hpp"
#include "kernels/cpu/cpu_common.hpp"
#include "kernels/models/models.hpp"
#include "kernels/reference/attention_reference.hpp"
#include "kernels/reference/backward_reference.hpp"
#include "kernels/registry.hpp"

using namespace attnbench;

namespace {

constexpr const char* masks[] = {"none",     "causal",           "local:5,0",         "local:2,40",
                                 "global:4", "causal+global:20", "local:0,0+global:1"};
// The sparse terms, for the rows that claim them (flash2 through its element mask over the
// covering walk, sparse through the exact key-tile lists transposed).
constexpr const char* sparse_masks[] = {"causal+random:16,2", "strided:6,5", "local:3,0+random:16,1,7",
                                        "global:2+strided:4,3"};

host_inputs backward_inputs(const problem& p, std::uint64_t seed) {
  host_inputs in = make_inputs(p, seed);
  in.d_o = make_grad_output(p, seed + 1);
  return in;
}

std::vector<std::int64_t> all_kv_rows(const problem& p) {
  std::vector<std::int64_t> r(static_cast<std::size_t>(p.B * p.Hkv * p.Nkv));
  for (std::size_t x = 0; x < r.size(); ++x) r[x] = static_cast<std::int64_t>(x);
  return r;
}

double rel_l2(std::span<const float> got, std::span<const double> want) {
  double num = 0, den = 0;
  for (std::size_t x = 0; x < want.size(); ++x) {
    if (!std::isfinite(got[x])) return NAN;
    num += (got[x] - want[x]) * (got[x] - want[x]);
    den += want[x] * want[x];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

// L = sum(O * dO) in fp64 from the forward reference.
double loss(const host_inputs& in) {
  const auto rows = all_rows(in.p);
  const reference_rows r = reference_softmax(in, rows);
  double l = 0;
  for (std::size_t x = 0; x < r.o.size(); ++x) l += r.o[x] * in.d_o[x];
  return l;
}

// Central differences of L in every element of one tensor (q, k or v); the step is
// the float difference actually taken.
std::vector<double> finite_differences(host_inputs in, std::vector<float> host_inputs::*t) {
  std::vector<float>& x = in.*t;
  std::vector<double> g(x.size());
  for (std::size_t e = 0; e < x.size(); ++e) {
    const float x0 = x[e], hi = x0 + 1e-2f, lo = x0 - 1e-2f;
    x[e] = hi;
    const double lh = loss(in);
    x[e] = lo;
    const double ll = loss(in);
    x[e] = x0;
    g[e] = (lh - ll) / (double(hi) - double(lo));
  }
  return g;
}

double rel_l2(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (std::size_t x = 0; x < a.size(); ++x) {
    num += (a[x] - b[x]) * (a[x] - b[x]);
    den += b[x] * b[x];
  }
  return std::sqrt(num / den);
}

TEST(backward_reference, equals_finite_differences_of_the_forward) {
  for (const char* mask : {"none", "causal", "local:2,1+global:2"}) {
    problem p = make_problem(1, 4, 2, 7, 5, 8, dtype::fp32, mask);  // GQA, Nq > Nkv: rows without keys (causal)
    const host_inputs in = backward_inputs(p, 5);
    const reference_grads g = reference_softmax_backward(in, all_rows(p), all_kv_rows(p));
    const auto fq = finite_differences(in, &host_inputs::q);
    const auto fk = finite_differences(in, &host_inputs::k);
    const auto fv = finite_differences(in, &host_inputs::v);
    EXPECT_LT(rel_l2(g.dq, fq), 1e-4) << mask;
    EXPECT_LT(rel_l2(g.dk, fk), 1e-4) << mask;
    EXPECT_LT(rel_l2(g.dv, fv), 1e-4) << mask;
    // Negative controls: a gradient 1% off, and dK / dV of the wrong KV head (a
    // group reduction over the wrong heads), must fail the same bound.
    std::vector<double> off = g.dq;
    for (double& x : off) x *= 1.01;
    EXPECT_GT(rel_l2(off, fq), 1e-4) << mask;
    std::vector<double> swapped = g.dk;
    const std::size_t half = swapped.size() / 2;  // Hkv = 2: the two heads' halves exchanged
    std::rotate(swapped.begin(), swapped.begin() + static_cast<std::ptrdiff_t>(half), swapped.end());
    EXPECT_GT(rel_l2(swapped, fk), 1e-4) << mask;
  }
}

TEST(backward_reference, rows_without_keys_have_zero_gradients) {
  problem p = make_problem(1, 2, 2, 9, 4, 8, dtype::fp32, "causal");  // rows 0..4 see no key
  const host_inputs in = backward_inputs(p, 9);
  const reference_grads g = reference_softmax_backward(in, all_rows(p), all_kv_rows(p));
  for (std::int64_t h = 0; h < 2; ++h)
    for (std::int64_t i = 0; i < 9; ++i) {
      double n = 0;
      for (std::int64_t c = 0; c < 8; ++c) n += std::abs(g.dq[((h * 9) + i) * 8 + c]);
      if (visible_keys(p, i) == 0) EXPECT_EQ(n, 0.0) << i;
      // Control: rows with two keys or more are not zero (one key: P = 1, dS = dP - D = 0).
      if (visible_keys(p, i) >= 2) EXPECT_GT(n, 0.0) << i;
    }
}

std::vector<const variant*> backward_rows() {
  std::vector<const variant*> out;
  for (const variant& v : registry())
    if (v.backend == backend_kind::cpu && (v.caps.passes & pass_bwd)) out.push_back(&v);
  return out;
}

// The masks of `masks` and `sparse_masks` the row takes (sparse refuses the masks without
// local or global sparsity; naive the sparse terms): backward_rows_claim_bwd counts them.
std::vector<std::string> masks_of(const variant& v) {
  std::vector<std::string> out;
  for (const char* mask : masks) out.emplace_back(mask);
  for (const char* mask : sparse_masks) out.emplace_back(mask);
  std::erase_if(out, [&](const std::string& m) {
    problem p = make_problem(1, 2, 2, 16, 16, 8, dtype::fp32, m);
    p.pass = pass_kind::bwd;
    return !v.supports(p).ok;
  });
  return out;
}

std::vector<problem> backward_problems(const variant& v) {
  std::vector<problem> out;
  for (const std::string& mask : masks_of(v))
    for (auto [nq, nkv] : {std::pair{33, 33}, {16, 64}, {100, 17}, {5, 130}, {1, 1}, {1, 40}})
      for (auto [br, bc] : {std::pair{16, 16}, {32, 16}})
        for (auto [h, hkv] : {std::pair{2, 2}, {4, 1}}) {
          problem p = make_problem(2, h, hkv, nq, nkv, 8, dtype::fp32, mask, br, bc);
          out.push_back(p);
        }
  return out;
}

TEST(backward_rows, naive_flash2_and_sparse_claim_bwd) {
  std::vector<std::string> names;
  for (const variant* v : backward_rows()) names.push_back(v->name);
  EXPECT_EQ(names, (std::vector<std::string>{"naive", "flash2", "sparse"}));
  // The masks each backward takes: naive the interval ones, flash2 the sparse terms too,
  // sparse the masks with local, global or sparse-term sparsity.
  EXPECT_EQ(masks_of(*find_variant("naive", backend_kind::cpu)).size(), std::size(masks));
  EXPECT_EQ(masks_of(*find_variant("flash2", backend_kind::cpu)).size(), std::size(masks) + std::size(sparse_masks));
  EXPECT_EQ(masks_of(*find_variant("sparse", backend_kind::cpu)).size(),
            std::size(masks) - 2 + std::size(sparse_masks));
  // Rows that do not claim it are refused with the reason.
  problem p = make_problem(1, 2, 2, 16, 16, 8, dtype::fp32, "none");
  p.pass = pass_kind::bwd;
  const support s = find_variant("flash1", backend_kind::cpu)->supports(p);
  EXPECT_FALSE(s.ok);
  EXPECT_NE(s.reason.find("runs passes fwd only, not bwd"), std::string::npos) << s.reason;
  // A row that does not run the pass has no model of it (entries carry null figures).
  EXPECT_FALSE(model_of(*find_variant("flash1", backend_kind::cpu), p));
  p.pass = pass_kind::fwd;
  EXPECT_TRUE(model_of(*find_variant("flash1", backend_kind::cpu), p));  // control
  p.pass = pass_kind::bwd;
  p.type = dtype::bf16;
  const support b = find_variant("flash2", backend_kind::cpu)->supports(p);
  EXPECT_FALSE(b.ok);
  EXPECT_NE(b.reason.find("fp32 only, not bf16"), std::string::npos) << b.reason;
  // Names: bwd entries carry the pass, fwd names are as before the axis.
  p.type = dtype::fp32;
  EXPECT_TRUE(find_variant("flash2", backend_kind::cpu)->benchmark_name(p).ends_with("/Br:64/Bc:64/pass:bwd"));
  p.pass = pass_kind::fwd;
  EXPECT_TRUE(find_variant("flash2", backend_kind::cpu)->benchmark_name(p).ends_with("/Br:64/Bc:64"));
}

TEST(backward_rows, match_the_fp64_reference) {
  for (const variant* v : backward_rows()) {
    int ran = 0;
    for (problem p : backward_problems(*v))
      for (pass_kind pass : {pass_kind::bwd, pass_kind::fwd_bwd}) {
        p.pass = pass;
        ASSERT_TRUE(v->supports(p).ok) << v->benchmark_name(p);
        const host_inputs in = backward_inputs(p, 40 + ran);
        auto r = v->make(p);
        r->set_inputs(in);
        r->poison_outputs();
        r->run();
        r->run();  // a second run must not accumulate into the first's gradients
        const host_outputs out = r->get_outputs();
        const reference_grads g = reference_softmax_backward(in, all_rows(p), all_kv_rows(p));
        const std::string name = v->benchmark_name(p);
        EXPECT_LT(rel_l2(out.dq, g.dq), 2e-6) << name;
        EXPECT_LT(rel_l2(out.dk, g.dk), 2e-6) << name;
        EXPECT_LT(rel_l2(out.dv, g.dv), 2e-6) << name;
        // Exact zeros for rows without a visible key and keys without a visible row.
        for (std::int64_t r = 0; r < p.rows(); ++r)
          if (visible_keys(p, r % p.Nq) == 0)
            for (std::int64_t c = 0; c < p.d; ++c) ASSERT_EQ(out.dq[r * p.d + c], 0.0f) << name << " row " << r;
        for (std::int64_t r = 0; r < p.B * p.Hkv * p.Nkv; ++r) {
          bool seen = false;
          for (std::int64_t i = 0; i < p.Nq && !seen; ++i) seen = is_visible(p, i, r % p.Nkv);
          if (!seen)
            for (std::int64_t c = 0; c < p.d; ++c) {
              ASSERT_EQ(out.dk[r * p.d + c], 0.0f) << name << " key " << r;
              ASSERT_EQ(out.dv[r * p.d + c], 0.0f) << name << " key " << r;
            }
        }
        if (pass == pass_kind::fwd_bwd) {  // the forward ran in the timed part too
          const reference_rows o = reference_softmax(in, all_rows(p));
          EXPECT_LT(compare_rows(p, out.o, {}, all_rows(p), o.o, {}).rel_l2, 1e-5) << name;
        }
        ++ran;
      }
    EXPECT_EQ(ran, 2 * static_cast<int>(backward_problems(*v).size())) << v->name;
  }
}

// Negative controls of the comparison above: gradients for another dO, and gradients
// never written (poisoned), fail it.
TEST(backward_rows, wrong_or_unwritten_gradients_fail) {
  for (const variant* v : backward_rows()) {
    problem p = make_problem(1, 4, 2, 40, 50, 8, dtype::fp32, "causal+global:3", 16, 16);
    p.pass = pass_kind::bwd;
    const host_inputs in = backward_inputs(p, 3);
    host_inputs other = in;
    other.d_o = make_grad_output(p, 99);
    auto r = v->make(p);
    r->set_inputs(other);
    r->run();
    const reference_grads g = reference_softmax_backward(in, all_rows(p), all_kv_rows(p));
    EXPECT_GT(rel_l2(r->get_outputs().dq, g.dq), 2e-6) << v->name;
    EXPECT_GT(rel_l2(r->get_outputs().dv, g.dv), 2e-6) << v->name;
    r->poison_outputs();
    EXPECT_TRUE(std::isnan(rel_l2(r->get_outputs().dk, g.dk))) << v->name;  // NaN never passes
    EXPECT_FALSE(rel_l2(r->get_outputs().dk, g.dk) < 2e-6) << v->name;
  }
}

TEST(backward_models, counted_bytes_and_exps_equal_the_model) {
  for (const variant* v : backward_rows()) {
    int checked = 0;
    for (problem p : backward_problems(*v))
      for (pass_kind pass : {pass_kind::bwd, pass_kind::fwd_bwd}) {
        p.pass = pass;
        auto r = v->make(p);
        r->set_inputs(backward_inputs(p, 3));
        r->run();
        r->run();  // counters restart with every run
        const model_figures m = v->model(p);
        ASSERT_EQ(r->counted_bytes(), static_cast<std::int64_t>(m.bytes)) << v->benchmark_name(p);
        ASSERT_EQ(r->counted_exps(), static_cast<std::int64_t>(m.exps)) << v->benchmark_name(p);
        ++checked;
      }
    EXPECT_GE(checked, 300) << v->name;
  }
}

// Controls: the counts depend on what the check claims they do -- the backward's count
// is neither the forward's nor the model's at other tiles, and fwd_bwd adds the two.
TEST(backward_models, counts_follow_pass_and_tiles) {
  for (const variant* v : backward_rows()) {
    problem p = make_problem(1, 4, 2, 100, 70, 8, dtype::fp32, "causal+global:20", 16, 16);
    std::int64_t counted[3];
    for (pass_kind pass : {pass_kind::fwd, pass_kind::bwd, pass_kind::fwd_bwd}) {
      p.pass = pass;
      auto r = v->make(p);
      r->set_inputs(backward_inputs(p, 3));
      r->run();
      counted[static_cast<int>(pass)] = r->counted_bytes();
    }
    EXPECT_EQ(counted[2], counted[0] + counted[1]) << v->name;
    EXPECT_NE(counted[1], counted[0]) << v->name;
    problem wide = p;
    wide.pass = pass_kind::bwd;
    wide.Br = 32;
    EXPECT_NE(static_cast<std::int64_t>(v->model(wide).bytes), counted[1]) << v->name;
  }
}

TEST(backward_models, useful_flops_are_2_5_and_3_5_times_the_forward) {
  for (const variant* v : backward_rows())
    for (const char* mask : masks) {
      problem p = make_problem(2, 4, 2, 100, 70, 16, dtype::fp32, mask, 16, 32);
      const double fwd = v->model(p).flops;
      EXPECT_EQ(fwd, model_flops_softmax(p));
      p.pass = pass_kind::bwd;
      EXPECT_EQ(v->model(p).flops, 2.5 * fwd) << mask;
      p.pass = pass_kind::fwd_bwd;
      EXPECT_EQ(v->model(p).flops, 3.5 * fwd) << mask;
      EXPECT_GE(v->model(p).flops_executed, v->model(p).flops * (v->name == "naive" ? 0.8 : 1.0)) << mask;
    }
}

// Worked example by hand: flash2 bwd, one 64 x 64 tile, d 64, one head, fp32.
TEST(backward_models, flash2_worked_example) {
  problem p = make_problem(1, 1, 1, 64, 64, 64, dtype::fp32, "none");
  p.pass = pass_kind::bwd;
  const model_figures m = find_variant("flash2", backend_kind::cpu)->model(p);
  const double n = 64 * 64;
  // preprocess: O, dO read, D written, dQ zeroed; K, V read, dK, dV written;
  // one visit: Q, dO, lse, D read, dQ read and written.
  EXPECT_EQ(m.bytes, 4 * (3 * n + 64) + 4 * (4 * n) + 4 * (4 * n + 2 * 64));
  EXPECT_EQ(m.flops_executed, 10.0 * 64 * n);
  EXPECT_EQ(m.exps, n);
}

// Validation in the harness: gradient errors in the result; a NaN gradient fails the
// entry, a wrong one is above tolerance (controls of the sweep's check).
class mutant_runner final : public runner {
 public:
  mutant_runner(std::unique_ptr<runner> r, int mutation) : r_(std::move(r)), mutation_(mutation) {}
  void set_inputs(const host_inputs& in) override { r_->set_inputs(in); }
  void poison_outputs() override { r_->poison_outputs(); }
  void run() override { r_->run(); }
  host_outputs get_outputs() override {
    host_outputs o = r_->get_outputs();
    if (mutation_ == 1) o.dv[3] = NAN;
    if (mutation_ == 2)
      for (float& x : o.dk) x *= 0.5f;  // a group reduced over half its heads
    return o;
  }

 private:
  std::unique_ptr<runner> r_;
  int mutation_;
};

// Key rows come from fewer KV heads where every head's query-row statistics cost more than
// validation_kv_rows' budget (3e10 multiply-adds), spread from the last head.
TEST(backward_validation, key_rows_come_from_fewer_heads_on_large_problems) {
  auto heads_of = [](const problem& p) {
    std::set<std::int64_t> heads;
    const std::vector<std::int64_t> rows = validation_kv_rows(p);
    EXPECT_TRUE(std::is_sorted(rows.begin(), rows.end()));
    EXPECT_EQ(std::set<std::int64_t>(rows.begin(), rows.end()).size(), rows.size());
    for (const std::int64_t r : rows) {
      EXPECT_GE(r, 0);
      EXPECT_LT(r, p.B * p.Hkv * p.Nkv);
      heads.insert(r / p.Nkv);
    }
    return heads;
  };
  EXPECT_EQ(heads_of(make_problem(2, 4, 2, 64, 96, 16, dtype::bf16, "none", 64, 64)).size(), 4u);  // every row
  EXPECT_EQ(heads_of(make_problem(1, 16, 16, 4096, 4096, 64, dtype::bf16, "none", 64, 64)).size(), 16u);
  const std::set<std::int64_t> six = heads_of(make_problem(1, 16, 16, 8192, 8192, 64, dtype::bf16, "none", 64, 64));
  EXPECT_EQ(six, (std::set<std::int64_t>{0, 3, 6, 9, 12, 15}));
  EXPECT_EQ(heads_of(make_problem(1, 16, 16, 16384, 16384, 128, dtype::bf16, "none", 64, 64)),
            std::set<std::int64_t>{15});
  EXPECT_EQ(heads_of(make_problem(1, 16, 4, 8192, 8192, 128, dtype::bf16, "none", 64, 64)),  // GQA: 4 query heads each
            std::set<std::int64_t>{3});
}

// The reference computes the statistics of the query rows the requested rows need only: the same
// key rows' dK, dV with one sampled query row as with every query row.
TEST(backward_reference, needs_only_the_statistics_of_the_requested_rows) {
  const problem p = make_problem(2, 4, 2, 33, 47, 16, dtype::fp32, "causal", 32, 32);
  const host_inputs in = backward_inputs(p, 5);
  const std::vector<std::int64_t> kv = {1 * p.Nkv + 3, 3 * p.Nkv + 40};  // (b 0, hkv 1), (b 1, hkv 1)
  std::vector<std::int64_t> every(static_cast<std::size_t>(p.rows()));
  for (std::size_t x = 0; x < every.size(); ++x) every[x] = static_cast<std::int64_t>(x);
  const std::vector<std::int64_t> one = {5};
  const reference_grads few = reference_softmax_backward(in, one, kv);
  const reference_grads all = reference_softmax_backward(in, every, kv);
  EXPECT_EQ(few.dk, all.dk);
  EXPECT_EQ(few.dv, all.dv);
  EXPECT_EQ(std::vector<double>(few.dq.begin(), few.dq.end()),
            std::vector<double>(all.dq.begin() + 5 * p.d, all.dq.begin() + 6 * p.d));
}

TEST(backward_validation, gradient_errors_reach_the_result_and_fail_when_wrong) {
  auto be = make_cpu_backend();
  reference_cache cache;
  problem p = make_problem(1, 4, 2, 70, 90, 16, dtype::fp32, "causal", 32, 32);
  p.pass = pass_kind::bwd;
  const variant& row = *find_variant("flash2", backend_kind::cpu);
  configuration c{&row, p, "t", row.benchmark_name(p), row.supports(p)};
  for (int mutation : {0, 1, 2}) {
    mutant_runner r(row.make(p), mutation);
    r.set_inputs(cache.inputs(p));
    const validation_run v = validate(*be, r, c, cache);
    EXPECT_TRUE(v.result.grads_checked);
    if (mutation == 0) {
      EXPECT_TRUE(v.result.err_ok);
      EXPECT_LT(v.result.grad_err, 1e-5);
      EXPECT_EQ(v.result.grad_err, std::max({v.result.dq_err, v.result.dk_err, v.result.dv_err}));
      EXPECT_TRUE(validation_failure(p, v.result).empty());
    } else if (mutation == 1) {
      EXPECT_FALSE(v.result.err_ok);
      EXPECT_EQ(v.result.grad_nonfinite, 1);
      EXPECT_NE(validation_failure(p, v.result).find("non-finite gradients: 1 element"), std::string::npos);
    } else {
      EXPECT_FALSE(v.result.err_ok);
      EXPECT_GT(v.result.dk_err, v.result.grad_tolerance);
      EXPECT_LT(v.result.dq_err, v.result.grad_tolerance);
    }
  }
}

}  // namespace

namespace {

std::vector<float> all_gradients(const variant& v, const host_inputs& in) {
  auto r = v.make(in.p);
  r->set_inputs(in);
  r->run();
  host_outputs o = r->get_outputs();
  std::vector<float> g = o.dq;
  g.insert(g.end(), o.dk.begin(), o.dk.end());
  g.insert(g.end(), o.dv.begin(), o.dv.end());
  return g;
}

// flash2's backward avoids races by ownership (a task owns a KV head and its group's dQ
// rows), so its gradients do not depend on the thread count: bit-identical on 1 and 2
// threads. Control: one ulp of one input changes the bits (the comparison is exact).
TEST(backward_rows, flash2_gradients_are_bit_identical_across_thread_counts) {
  problem p = make_problem(1, 4, 2, 256, 256, 64, dtype::fp32, "causal");
  p.pass = pass_kind::bwd;
  ASSERT_TRUE(cpu::worth_threads(p));
  const variant& v = *find_variant("flash2", backend_kind::cpu);
  host_inputs in = backward_inputs(p, 11);
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const std::vector<float> one = all_gradients(v, in);
  omp_set_num_threads(2);
  const std::vector<float> two = all_gradients(v, in);
  EXPECT_EQ(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)), 0);
  const std::size_t x = 100 * 64 + 5;  // row 100 of head 0 (row 0 sees one key: its q has no effect)
  in.q[x] = std::nextafter(in.q[x], 10.0f);
  const std::vector<float> nudged = all_gradients(v, in);
  EXPECT_NE(std::memcmp(one.data(), nudged.data(), one.size() * sizeof(float)), 0);
  omp_set_num_threads(saved);
}

}  // namespace

namespace {

// Entries carry the pass and the memory the run allocated; the backward adds dO, dQ, dK, dV,
// D and its tile buffers to the forward's. Control: an entry that did not run carries null.
TEST(backward_json, entries_carry_pass_and_memory) {
  const variant& row = *find_variant("flash2", backend_kind::cpu);
  problem p = make_problem(1, 4, 2, 100, 70, 16, dtype::fp32, "causal", 32, 32);
  measurement ok;
  std::int64_t memory[2];
  for (pass_kind pass : {pass_kind::fwd, pass_kind::bwd}) {
    p.pass = pass;
    const nlohmann::json e = make_entry({&row, p, "t", row.benchmark_name(p), row.supports(p)}, ok);
    EXPECT_EQ(e["pass"], std::string(to_string(pass)));
    memory[pass == pass_kind::bwd] = e["memory_bytes"].get<std::int64_t>();
    EXPECT_EQ(e.contains("grad_err"), pass == pass_kind::bwd);
  }
  const std::int64_t t = 32;
  EXPECT_EQ(memory[1] - memory[0],
            4 * (2 * p.q_elems() + 2 * p.kv_elems() + p.rows()) + 4 * cpu::max_threads() * (6 * t * p.d + 2 * t * t));
  measurement skipped;
  skipped.status = "skipped";
  const nlohmann::json e = make_entry({&row, p, "t", row.benchmark_name(p), row.supports(p)}, skipped);
  EXPECT_TRUE(e["memory_bytes"].is_null());
  EXPECT_TRUE(e["grad_err"].is_null());
}

}  // namespace

// Per-head block layouts: the backward walks each query head's own key-tile lists (sparse) or
// masks per head (flash2); gradients against the fp64 reference. And sparse's lists visit fewer
// tile pairs than flash2's covering walk on a block-sparse mask, in its count and its model.
TEST(backward_rows, per_head_layouts_and_the_tiles_sparse_skips) {
  // 4 query heads over 2 KV heads, blocks of 8: (4, 5, 7) planes, head h keeps blocks where
  // (h + qb + 2 kb) % 3 != 0, and each head a different set.
  const std::int64_t H = 4, nq = 40, nkv = 50, b = 8, qb = 5, kb = 7;
  std::vector<std::uint8_t> bits;
  for (std::int64_t h = 0; h < H; ++h)
    for (std::int64_t i = 0; i < qb; ++i)
      for (std::int64_t j = 0; j < kb; ++j) bits.push_back((h + i + 2 * j) % 3 != 0);
  const std::string path =
      (std::filesystem::path(testing::TempDir()) / ("attnbench_bwd_layout_" + std::to_string(::getpid()) + ".npy"))
          .string();
  std::ofstream(path, std::ios::binary) << block_layout_npy({H, qb, kb}, bits);
  const std::string mask = fmt::format("layout:{}:{}", b, path);
  for (const char* name : {"flash2", "sparse"}) {
    const variant* v = find_variant(name, backend_kind::cpu);
    problem p = make_problem(1, H, 2, nq, nkv, 8, dtype::fp32, mask, 16, 16);
    p.pass = pass_kind::bwd;
    ASSERT_TRUE(p.mask.per_head() && v->supports(p).ok) << name;
    const host_inputs in = backward_inputs(p, 5);
    auto r = v->make(p);
    r->set_inputs(in);
    r->poison_outputs();
    r->run();
    const reference_grads g = reference_softmax_backward(in, all_rows(p), all_kv_rows(p));
    EXPECT_LT(rel_l2(r->get_outputs().dq, g.dq), 2e-6) << name;
    EXPECT_LT(rel_l2(r->get_outputs().dk, g.dk), 2e-6) << name;
    EXPECT_LT(rel_l2(r->get_outputs().dv, g.dv), 2e-6) << name;
    EXPECT_EQ(r->counted_bytes(), static_cast<std::int64_t>(v->model(p).bytes)) << name;
  }
  // Random blocks: sparse visits a subset of flash2's tile pairs (fewer bytes and exps).
  problem p = make_problem(1, 2, 2, 256, 256, 8, dtype::fp32, "random:32,2", 32, 32);
  p.pass = pass_kind::bwd;
  const model_figures f = find_variant("flash2", backend_kind::cpu)->model(p);
  const model_figures s = find_variant("sparse", backend_kind::cpu)->model(p);
  EXPECT_LT(s.bytes, 0.6 * f.bytes);
  EXPECT_LT(s.exps, 0.4 * f.exps);  // 2 of 8 key tiles per query tile, against all 8
  EXPECT_EQ(s.flops, f.flops);      // the useful FLOPs are the problem's
}

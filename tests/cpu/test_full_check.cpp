// The check of every output on the cpu backend: every element scanned (kernels/reference/row_check.hpp),
// every row's error against the fp32 reference of all rows (kernels/reference/reference_fp32.hpp),
// the worst row gated, and the two negative controls: a kernel that never writes one interior
// query tile at B1 H8 N4096 fails its entry for every such tile (the fp64 sample alone misses
// ~60 % of them), and a kernel wrong in one row fails the worst-row gate while rel_err, pooled
// over the sample, stays within the tolerance. The tampering is done on the outputs a real CPU
// row (flash2) returns: the kernels are untouched.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <cmath>
#include <functional>
#include <limits>
#include <set>

#include "core/mask.hpp"
#include "harness/bench_loop.hpp"
#include "harness/entry_schema.hpp"
#include "harness/json_output.hpp"
#include "harness/result_entry.hpp"
#include "harness/validation.hpp"
#include "kernels/reference/attention_reference.hpp"
#include "kernels/reference/reference_fp32.hpp"
#include "kernels/reference/row_check.hpp"
#include "kernels/registry.hpp"

using namespace attnbench;
using nlohmann::json;

namespace {

problem make(std::int64_t B, std::int64_t H, std::int64_t Hkv, std::int64_t Nq, std::int64_t Nkv, std::int64_t d,
             const char* mask, dtype t = dtype::fp32) {
  problem p;
  p.B = B, p.H = H, p.Hkv = Hkv, p.Nq = Nq, p.Nkv = Nkv, p.d = d, p.type = t;
  p.mask = parse_mask(mask);
  validate(p);
  return p;
}

// A real row whose outputs are changed after its run, as a kernel with that defect would leave them.
class tampered_runner final : public runner {
 public:
  tampered_runner(std::unique_ptr<runner> inner, std::function<void(host_outputs&)> tamper)
      : inner_(std::move(inner)), tamper_(std::move(tamper)) {}
  void set_inputs(const host_inputs& in) override { inner_->set_inputs(in); }
  void poison_outputs() override { inner_->poison_outputs(); }
  void run() override { inner_->run(); }
  host_outputs get_outputs() override {
    host_outputs out = inner_->get_outputs();
    tamper_(out);
    return out;
  }
  std::int64_t counted_bytes() const override { return inner_->counted_bytes(); }

 private:
  std::unique_ptr<runner> inner_;
  std::function<void(host_outputs&)> tamper_;
};

// cpu flash2 with its outputs tampered.
variant tampered_flash2(std::function<void(host_outputs&)> tamper) {
  variant v = *find_variant("flash2", backend_kind::cpu);
  const auto make_inner = v.make_runner;
  v.make_runner = [make_inner, tamper](const problem& p, bool lse) -> std::unique_ptr<runner> {
    return std::make_unique<tampered_runner>(make_inner(p, lse), tamper);
  };
  return v;
}

configuration config_of(const variant& row, const problem& p) {
  return {&row, p, "t", row.benchmark_name(p), row.supports(p)};
}

sweep_options quick_options() {
  sweep_options o;
  o.repetitions = 2;
  o.rep_time_s = 1e-3;
  o.quiet = true;
  return o;
}

// Rows [lo, hi) of O and lse as a kernel that never wrote them leaves them (the poison).
void unwrite(host_outputs& out, const problem& p, std::int64_t lo, std::int64_t hi) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::fill(out.o.begin() + lo * p.d, out.o.begin() + hi * p.d, nan);
  if (!out.lse.empty()) std::fill(out.lse.begin() + lo, out.lse.begin() + hi, nan);
}

}  // namespace

TEST(full_check, host_scan_counts_every_bad_element) {
  const problem p = make(2, 3, 3, 20, 12, 16, "causal");  // rows i < 8 of each head see no key
  const host_inputs in = make_inputs(p, 3);
  const reference_all_rows ref = reference_fp32_all_rows(attention_math::softmax, in);
  const std::vector<std::uint8_t> empty = rows_without_keys(p);
  for (std::int64_t h = 0; h < p.H; ++h)
    for (std::int64_t i = 0; i < p.Nq; ++i) EXPECT_EQ(empty[h * p.Nq + i], i < 8 ? 1 : 0) << h << " " << i;
  std::vector<float> o = ref.o, lse = ref.lse;
  // Exact outputs: nothing bad, every row compared, the worst row exactly 0.
  full_check f = check_rows_host(p, o, lse, empty, ref.o, ref.lse);
  EXPECT_EQ(f.bad, 0);
  EXPECT_EQ(f.first_bad_row, -1);
  EXPECT_EQ(f.rows_total, p.rows());
  EXPECT_EQ(f.rows_compared, p.rows());
  EXPECT_EQ(f.worst_err, 0.0);
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  o[41 * p.d + 3] = nan;  // row 41 (no keys: O must be 0, finite)
  o[41 * p.d + 9] = -inf;
  o[77 * p.d] = inf;
  lse[30] = nan;           // has keys
  lse[2] = 0.5f;           // no keys: must be -inf
  lse[109] = -inf;         // has keys: must be finite
  o[90 * p.d + 1] += 1.f;  // finite but wrong: the worst row, not a bad element
  f = check_rows_host(p, o, lse, empty, ref.o, ref.lse);
  EXPECT_EQ(f.bad, 6);
  EXPECT_EQ(f.bad_rows, 5);
  EXPECT_EQ(f.first_bad_row, 2);
  EXPECT_EQ(f.worst_row, 90);
  EXPECT_GT(f.worst_err, 0.01);
  // The scan alone (no reference) finds the same bad elements and compares nothing.
  const full_check s = check_rows_host(p, o, lse, empty, {}, {});
  EXPECT_EQ(s.bad, 6);
  EXPECT_EQ(s.first_bad_row, 2);
  EXPECT_EQ(s.rows_compared, 0);
  EXPECT_EQ(s.worst_row, -1);
  // A row whose error is NaN (inf - inf cannot arise from finite values; planted through the verdicts) never passes.
  std::vector<row_verdict> v(4);
  v[2].err = std::numeric_limits<float>::infinity();
  EXPECT_EQ(reduce_verdicts(v, true).worst_row, 2);
}

TEST(full_check, rows_without_keys_agree_with_is_visible) {
  for (const char* m : {"none", "causal", "local:3,0", "local:0,2+global:2", "causal+strided:2,5", "random:4,1,9",
                        "local:2,2+random:8,1"})
    for (auto [nq, nkv] : {std::pair{24, 24}, {30, 9}, {9, 30}}) {
      const problem p = make(1, 2, 2, nq, nkv, 8, m);
      const std::vector<std::uint8_t> empty = rows_without_keys(p);
      for (std::int64_t i = 0; i < p.Nq; ++i) {
        bool any = false;
        for (std::int64_t j = 0; j < p.Nkv; ++j) any |= is_visible(p, 0, i, j);
        EXPECT_EQ(empty[i], any ? 0 : 1) << m << " Nq " << nq << " Nkv " << nkv << " row " << i;
      }
    }
}

TEST(full_check, fp32_reference_of_every_row_matches_fp64) {
  struct one {
    attention_math m;
    problem p;
  };
  const one cases[] = {
      {attention_math::softmax, make(2, 4, 2, 70, 90, 32, "none")},
      {attention_math::softmax, make(1, 3, 1, 90, 40, 16, "causal")},  // rows without keys
      {attention_math::softmax, make(1, 2, 2, 64, 64, 24, "local:7,3+global:5")},
      {attention_math::softmax, make(1, 2, 2, 96, 96, 32, "causal+random:16,2")},
      {attention_math::softmax, make(1, 1, 1, 3, 5000, 64, "causal")},         // decode-like
      {attention_math::softmax, make(1, 2, 1, 300, 5000, 32, "causal")},       // two blocks of rows
      {attention_math::softmax, make(1, 1, 1, 400, 4000, 16, "local:50,10")},  // keys from 3550 on
      {attention_math::linear, make(1, 2, 1, 50, 70, 32, "causal")},
      {attention_math::linear, make(2, 2, 2, 40, 40, 16, "none")},
  };
  for (const one& c : cases) {
    SCOPED_TRACE(fmt::format("{} B{} H{} Hkv{} Nq{} Nkv{} d{} {}", to_string(c.m), c.p.B, c.p.H, c.p.Hkv, c.p.Nq,
                             c.p.Nkv, c.p.d, to_string(c.p.mask)));
    const host_inputs in = make_inputs(c.p, 11);
    const reference_all_rows r32 = reference_fp32_all_rows(c.m, in);
    const std::vector<std::int64_t> rows = all_rows(c.p);
    const reference_rows r64 = reference_for(c.m, in, rows);
    const error_report e = compare_rows(c.p, r32.o, r32.lse, rows, r64.o, r64.lse);
    EXPECT_EQ(e.nonfinite, 0);
    EXPECT_LT(e.rel_l2, 2e-6);
    EXPECT_LT(e.worst_row_err, 1e-5);
    if (c.m == attention_math::softmax) {
      EXPECT_LT(e.lse_max_abs, 1e-5);
    } else {
      EXPECT_TRUE(r32.lse.empty());
    }
  }
}

TEST(full_check, a_skipped_query_tile_fails_its_entry_every_time) {
  // The shape: 32768 rows, 256 of them in the fp64 sample.
  const problem p = make(1, 8, 8, 4096, 4096, 64, "causal");
  const std::vector<std::int64_t> sample = sample_rows(p, validation_rows(p));
  ASSERT_EQ(sample.size(), 256u);
  const std::set<std::int64_t> sampled(sample.begin(), sample.end());
  // The interior query tiles of 64 rows (neither a head's first nor last) that no sampled row falls in.
  const std::int64_t tiles = p.Nq / 64;
  std::vector<std::int64_t> missed;  // first flat row of each
  for (std::int64_t h = 0; h < p.H; ++h)
    for (std::int64_t t = 1; t + 1 < tiles; ++t) {
      const std::int64_t lo = h * p.Nq + t * 64;
      if (sampled.lower_bound(lo) == sampled.lower_bound(lo + 64)) missed.push_back(lo);
    }
  const double fraction = double(missed.size()) / double(p.H * (tiles - 2));
  // With the fp64 sample alone such a tile passes: ~(1 - 64/32768)^256 = 0.61 of them.
  EXPECT_GT(fraction, 0.45);
  EXPECT_LT(fraction, 0.75);
  auto be = make_cpu_backend();
  reference_cache cache;
  for (const std::int64_t lo : {missed.front(), missed[missed.size() / 2], missed.back()}) {
    const variant row = tampered_flash2([&](host_outputs& out) { unwrite(out, p, lo, lo + 64); });
    const configuration c = config_of(row, p);
    ASSERT_TRUE(c.sup.ok) << c.sup.reason;
    if (lo == missed.front()) {
      // What the sampled check alone concluded: no bad value, within tolerance.
      std::unique_ptr<runner> r = row.make(p);
      r->set_inputs(cache.inputs(p));
      r->poison_outputs();
      r->run();
      const host_outputs out = r->get_outputs();
      const auto& ref = cache.reference(p, attention_math::softmax);
      const error_report e = compare_rows(p, out.o, out.lse, ref.rows, ref.o, ref.lse);
      EXPECT_EQ(e.nonfinite, 0);
      EXPECT_TRUE(e.ok(sweep_tolerance(p.type)));
    }
    const measurement m = run_configuration(*be, c, cache, quick_options());
    EXPECT_EQ(m.status, "failed");
    EXPECT_EQ(m.message, fmt::format("non-finite outputs: 4160 elements in 64 rows of 32768, the first at "
                                     "(b 0, h {}, row {})",
                                     lo / p.Nq, lo % p.Nq));
    EXPECT_EQ(m.val.nonfinite_outputs, 4160);
    EXPECT_EQ(m.val.first_bad_row, lo);
    EXPECT_TRUE(m.time.rep_ms.empty());  // never timed
    EXPECT_FALSE(m.val.err_ok);
  }
}

TEST(full_check, one_wrong_row_fails_the_worst_row_gate) {
  const problem p = make(1, 8, 8, 1024, 1024, 64, "causal");
  auto be = make_cpu_backend();
  reference_cache cache;
  const std::vector<std::int64_t>& sample = cache.reference(p, attention_math::softmax).rows;
  const std::set<std::int64_t> sampled(sample.begin(), sample.end());
  std::int64_t in_sample = -1, outside = -1;
  for (std::int64_t r = 3 * p.Nq + 500; r < p.rows() && (in_sample < 0 || outside < 0); ++r) {
    std::int64_t& slot = sampled.count(r) ? in_sample : outside;
    if (slot < 0) slot = r;
  }
  ASSERT_GE(in_sample, 0);
  ASSERT_GE(outside, 0);
  auto validated = [&](std::int64_t row, float factor) {
    const variant v = tampered_flash2([&](host_outputs& out) {
      if (row >= 0)
        for (std::int64_t x = 0; x < p.d; ++x) out.o[row * p.d + x] *= factor;
    });
    const configuration c = config_of(v, p);
    std::unique_ptr<runner> r = v.make(p);
    r->set_inputs(cache.inputs(p));
    return validate(*be, *r, c, cache).result;
  };
  const validation_result good = validated(-1, 1);
  EXPECT_TRUE(good.err_ok);
  EXPECT_EQ(good.nonfinite_outputs, 0);
  EXPECT_EQ(good.rows_total, p.rows());
  EXPECT_EQ(good.rows_checked, p.rows());
  EXPECT_LT(good.worst_row_err, good.row_tolerance);
  // Outside the sample, 1 % off: rel_err cannot see it, every row's comparison does.
  const validation_result out = validated(outside, 1.01f);
  EXPECT_LE(out.rel_err, out.tolerance);
  EXPECT_EQ(out.worst_row, outside);
  EXPECT_NEAR(out.worst_row_err, 0.01, 1e-3);
  EXPECT_FALSE(out.err_ok);
  EXPECT_EQ(validation_failure(p, out), "");  // finite: timed, marked above tolerance
  {  // The console says which row, from the typed result and from the JSON alike.
    const variant& row = *find_variant("flash2", backend_kind::cpu);
    measurement m;
    m.val = out;
    m.time.rep_ms = {1.0};
    const result_entry r = make_result(config_of(row, p), m, model_of(row, p));
    EXPECT_EQ(console_line(r), entry_line(r.json));
    const std::string where =
        fmt::format(" worst row 1.0e-02 at (b 0, h {}, row {}) ABOVE TOLERANCE", outside / p.Nq, outside % p.Nq);
    EXPECT_TRUE(console_line(r).ends_with(where)) << console_line(r);
  }
  // In the sample, 0.1 % off: pooled over 256 rows rel_err stays within 1e-4; the row does not.
  const validation_result in = validated(in_sample, 1.001f);
  EXPECT_GT(in.rel_err, 10 * good.rel_err);
  EXPECT_LE(in.rel_err, in.tolerance);
  EXPECT_EQ(in.worst_row, in_sample);
  EXPECT_GT(in.worst_row_err, in.row_tolerance);
  EXPECT_FALSE(in.err_ok);
}

TEST(full_check, entries_carry_the_new_fields) {
  auto be = make_cpu_backend();
  const problem p = make(1, 2, 2, 48, 40, 16, "causal");
  const variant& row = *find_variant("flash2", backend_kind::cpu);
  const configuration c = config_of(row, p);
  reference_cache cache;
  const measurement m = run_configuration(*be, c, cache, quick_options());
  ASSERT_EQ(m.status, "ok") << m.message;
  const json e = make_entry(c, m);
  EXPECT_EQ(entry_schema_error(e), "");
  EXPECT_EQ(e["rows_total"], 96);
  EXPECT_EQ(e["rows_checked"], 96);
  EXPECT_EQ(e["nonfinite_outputs"], 0);
  ASSERT_TRUE(e["worst_row_err"].is_number());
  EXPECT_LE(e["worst_row_err"].get<double>(), e["row_tolerance"].get<double>());
  ASSERT_TRUE(e["worst_row"].is_object());
  const std::int64_t wr = e["worst_row"]["b"].get<std::int64_t>() * p.H * p.Nq +
                          e["worst_row"]["h"].get<std::int64_t>() * p.Nq + e["worst_row"]["i"].get<std::int64_t>();
  EXPECT_EQ(wr, m.val.worst_row);
  // Skipped: nothing checked.
  measurement s;
  s.status = "skipped";
  s.message = "no";
  const json k = make_entry(c, s);
  EXPECT_EQ(entry_schema_error(k), "");
  EXPECT_EQ(k["rows_checked"], 0);
  EXPECT_TRUE(k["nonfinite_outputs"].is_null());
  EXPECT_TRUE(k["worst_row"].is_null());
  // The schema refuses wrong types of the new fields (older files without them still load).
  for (const auto& [key, bad] : std::vector<std::pair<std::string, json>>{{"rows_total", -1},
                                                                          {"rows_checked", 1.5},
                                                                          {"nonfinite_outputs", "0"},
                                                                          {"worst_row_err", "x"},
                                                                          {"worst_row", json{{"b", 0}, {"h", 0}}},
                                                                          {"worst_row", json::array({0, 0, 0})},
                                                                          {"row_tolerance", nullptr}}) {
    json x = e;
    x[key] = bad;
    EXPECT_NE(entry_schema_error(x), "") << key << " = " << bad.dump();
  }
  json old = e;
  for (const char* k :
       {"rows_total", "rows_checked", "nonfinite_outputs", "worst_row_err", "worst_row", "row_tolerance"})
    old.erase(k);
  EXPECT_EQ(entry_schema_error(old), "");
}

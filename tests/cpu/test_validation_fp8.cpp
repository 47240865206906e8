// The harness's fp8 (e4m3) input path and its two references:
// quantised inputs are exact code x scale with scale amax/448 of the fp32
// originals; the reference cache keeps the originals and validation reports
// the kernel's own error (rel_err, against the quantised-input reference) and
// the end-to-end error (e2e_rel_err, against the originals' reference), which
// a planted wrong original must break; the e4m3 tolerance admits a kernel that
// rounds P to e4m3 and refuses a lost descale or a coarser P; the JSON entry
// carries out_dtype, e2e_rel_err and input_scales as docs/json_schema.md says.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/fp8.hpp"
#include "core/mask.hpp"
#include "harness/backend.hpp"
#include "harness/entry_schema.hpp"
#include "harness/json_output.hpp"
#include "harness/validation.hpp"
#include "kernels/models/models.hpp"
#include "kernels/reference/attention_reference.hpp"
#include "test_entries.hpp"

using namespace attnbench;
using nlohmann::json;

namespace {

// What the test runner computes from the inputs it is given.
enum class sim {
  exact,         // the fp64 reference on its inputs, O stored in out_dtype (bf16 for e4m3)
  fp8,           // an FA3-style fp8 kernel: codes x descales, P rounded to e4m3 before P.V, O in bf16
  no_v_descale,  // fp8, V's scale forgotten
  p_one_bit,     // fp8, P rounded to 1 mantissa bit instead of 3
};

float keep_bits(float x, int mantissa_bits) {  // x rounded to 1 + mantissa_bits significant bits
  if (x == 0) return 0;
  int e = 0;
  const float m = std::frexp(x, &e);
  return std::ldexp(std::nearbyint(std::ldexp(m, mantissa_bits + 1)), e - mantissa_bits - 1);
}

class sim_runner final : public runner {
 public:
  sim_runner(problem p, sim s) : p_(p), sim_(s) {}
  void set_inputs(const host_inputs& in) override {
    in_ = in;
    in_.p = p_;
  }
  void poison_outputs() override { o_.assign(p_.o_elems(), std::numeric_limits<float>::quiet_NaN()); }
  void run() override {
    const dtype out = output_dtype(p_.type);
    if (sim_ == sim::exact) {
      const reference_rows r = reference_softmax(in_, all_rows(p_));
      for (std::size_t i = 0; i < r.o.size(); ++i) o_[i] = round_to(out, static_cast<float>(r.o[i]));
      return;
    }
    // Codes recovered from code x scale (the host_inputs contract), scales folded in as FA3 does.
    const auto codes = [](const std::vector<float>& x, float s) {
      std::vector<float> c(x.size());
      for (std::size_t i = 0; i < x.size(); ++i) c[i] = e4m3_to_float(e4m3_from_float(x[i] / s));
      return c;
    };
    const std::vector<float> q = codes(in_.q, in_.scales.q), k = codes(in_.k, in_.scales.k),
                             v = codes(in_.v, in_.scales.v);
    const float qk_scale = in_.scales.q * in_.scales.k / std::sqrt(static_cast<float>(p_.d));
    const float v_scale = sim_ == sim::no_v_descale ? 1.0f : in_.scales.v;
    const std::int64_t d = p_.d;
    std::vector<float> s(p_.Nkv), acc(d);
    for (std::int64_t b = 0; b < p_.B; ++b)
      for (std::int64_t h = 0; h < p_.H; ++h)
        for (std::int64_t i = 0; i < p_.Nq; ++i) {
          const float* qr = &q[((b * p_.H + h) * p_.Nq + i) * d];
          const std::int64_t kv = (b * p_.Hkv + p_.kv_head(h)) * p_.Nkv * d;
          float m = -INFINITY;
          for (std::int64_t j = 0; j < p_.Nkv; ++j) {
            if (!is_visible(p_, h, i, j)) continue;
            float dot = 0;
            for (std::int64_t c = 0; c < d; ++c) dot += qr[c] * k[kv + j * d + c];
            s[j] = dot * qk_scale;
            m = std::max(m, s[j]);
          }
          std::fill(acc.begin(), acc.end(), 0.0f);
          float l = 0;
          for (std::int64_t j = 0; j < p_.Nkv && m > -INFINITY; ++j) {
            if (!is_visible(p_, h, i, j)) continue;
            const float pj = std::exp(s[j] - m);
            l += pj;  // the row sum of the fp32 P, before the conversion
            const float pr = sim_ == sim::p_one_bit ? keep_bits(pj, 1) : e4m3_round(pj);
            for (std::int64_t c = 0; c < d; ++c) acc[c] += pr * v[kv + j * d + c];
          }
          float* o = &o_[((b * p_.H + h) * p_.Nq + i) * d];
          for (std::int64_t c = 0; c < d; ++c) o[c] = l > 0 ? round_to(out, acc[c] * v_scale / l) : 0.0f;
        }
  }
  host_outputs get_outputs() override { return {o_, {}}; }

 private:
  problem p_;
  sim sim_;
  host_inputs in_;
  std::vector<float> o_;
};

variant sim_row(sim s) {
  return {
      .name = "t_sim",
      .summary = "test row",
      .caps = {.dtypes = {dtype::fp32, dtype::fp16, dtype::bf16, dtype::e4m3}},
      .model =
          [](const problem& p) {
            return model_figures{model_flops_softmax(p), model_flops_softmax(p), 1};
          },
      .memory_bytes = [](const problem&) -> std::int64_t { return 0; },
      .make_runner = [s](const problem& p, bool) { return std::make_unique<sim_runner>(p, s); },
  };
}

configuration config_of(const variant& row, const problem& p) {
  return {&row, p, "g", row.benchmark_name(p), row.supports(p)};
}

struct validated {
  validation_result v;
  host_outputs out;
};

validated run_validation(const variant& row, const problem& p, reference_cache& cache) {
  auto be = make_cpu_backend();
  const configuration c = config_of(row, p);
  std::unique_ptr<runner> r = row.make(p);
  r->set_inputs(cache.inputs(p));
  validated res;
  res.v = validate(*be, *r, c, cache).result;
  res.out = r->get_outputs();
  return res;
}

// The e2e figure is the rel-L2 of O against an fp64 reference on the fp32 originals,
// computed here from make_original_inputs on the sampled rows of the cache.
::testing::AssertionResult e2e_is_against_originals(const validated& r, const problem& p, reference_cache& cache) {
  host_inputs orig = make_original_inputs(p);
  orig.p = p;
  const auto& rows = cache.reference(p, attention_math::softmax).rows;
  const reference_rows ref = reference_softmax(orig, rows);
  const double want = compare_rows(p, r.out.o, {}, rows, ref.o, {}).rel_l2;
  if (!(std::fabs(r.v.e2e_rel_err - want) <= 1e-9 * want))
    return ::testing::AssertionFailure() << "e2e_rel_err " << r.v.e2e_rel_err << ", against the originals " << want;
  return ::testing::AssertionSuccess();
}

double amax(const std::vector<float>& x) {
  double a = 0;
  for (float v : x) a = std::max(a, std::fabs(double(v)));
  return a;
}

}  // namespace

TEST(fp8_inputs, quantised_values_are_code_times_amax_over_448) {
  const problem p = make_problem(2, 4, 2, 33, 70, 32, dtype::e4m3, "none");
  const host_inputs orig = make_original_inputs(p, 5);
  const host_inputs in = make_inputs(p, 5);
  const std::pair<const std::vector<float>*, const std::vector<float>*> tensors[] = {
      {&orig.q, &in.q}, {&orig.k, &in.k}, {&orig.v, &in.v}};
  const float scales[] = {in.scales.q, in.scales.k, in.scales.v};
  for (int t = 0; t < 3; ++t) {
    const auto& [o, x] = tensors[t];
    const float s = scales[t];
    EXPECT_EQ(s, static_cast<float>(amax(*o)) / 448.0f) << t;
    EXPECT_NE(s, 1.0f);
    std::int64_t changed = 0, at_max = 0;
    for (std::size_t i = 0; i < x->size(); ++i) {
      const std::uint8_t c = e4m3_from_float((*o)[i] / s);  // the code of the original
      ASSERT_EQ((*x)[i], e4m3_to_float(c) * s) << t << " " << i;
      ASSERT_EQ(e4m3_from_float((*x)[i] / s), c) << "code not recoverable from value / scale";
      changed += (*x)[i] != (*o)[i];
      at_max += (c & 0x7F) == 0x7E;
    }
    EXPECT_GT(changed, static_cast<std::int64_t>(x->size()) * 9 / 10);  // not the originals
    EXPECT_GE(at_max, 1);                                               // the amax element is +-448 x s
  }
}

TEST(fp8_inputs, originals_are_todays_draws_and_other_dtypes_round_them) {
  const problem p32 = make_problem(1, 2, 2, 16, 24, 16, dtype::fp32, "none");
  const host_inputs o = make_original_inputs(p32, 11);
  EXPECT_EQ(make_inputs(p32, 11).q, o.q);
  for (dtype t : {dtype::fp16, dtype::bf16, dtype::e4m3}) {
    problem p = p32;
    p.type = t;
    EXPECT_EQ(make_original_inputs(p, 11).v, o.v) << to_string(t);  // same draws for every dtype
    const host_inputs in = make_inputs(p, 11);
    if (t == dtype::e4m3) continue;
    EXPECT_EQ(in.scales, input_scales{});
    for (std::size_t i = 0; i < o.k.size(); ++i) ASSERT_EQ(in.k[i], round_to(t, o.k[i]));
  }
}

TEST(fp8_inputs, round_to_e4m3_and_tolerances) {
  for (float x : {0.0f, 1.0f, 1.0625f, -3.3f, 447.0f, 500.0f, 1e-3f, INFINITY, -INFINITY})
    EXPECT_EQ(round_to(dtype::e4m3, x), e4m3_round(x)) << x;  // unscaled, saturating
  EXPECT_EQ(round_to(dtype::e4m3, INFINITY), 448.0f);
  EXPECT_TRUE(std::isnan(round_to(dtype::e4m3, NAN)));
  for (dtype t : {dtype::fp32, dtype::fp16, dtype::bf16, dtype::e4m3}) EXPECT_GT(sweep_tolerance(t), 0) << to_string(t);
  EXPECT_EQ(sweep_tolerance(dtype::e4m3), 0.0625);  // u = 2^-4
  EXPECT_EQ(sweep_tolerance(dtype::bf16), 3e-2);
}

TEST(fp8_inputs, dequantize_refuses_nan_codes) {
  const std::vector<std::uint8_t> codes = {0x00, 0x38, 0xFE, 0x80};
  const std::vector<float> v = dequantize_e4m3(codes, 0.5f, "q.npy");
  EXPECT_EQ(v, (std::vector<float>{0.0f, 0.5f, -224.0f, -0.0f}));
  for (std::uint8_t nan : {0x7F, 0xFF}) {
    const std::vector<std::uint8_t> bad = {0x38, 0x38, nan};
    try {
      dequantize_e4m3(bad, 1.0f, "k.npy");
      ADD_FAILURE() << "accepted NaN code " << int(nan);
    } catch (const input_error& e) {
      EXPECT_NE(std::string(e.what()).find("k.npy: element 2"), std::string::npos) << e.what();
    }
  }
}

TEST(fp8_cache, keeps_the_originals_beside_the_quantised_inputs) {
  const problem p = make_problem(1, 2, 1, 20, 40, 16, dtype::e4m3, "causal");
  reference_cache cache;
  const host_inputs& in = cache.inputs(p);
  const host_inputs want = make_inputs(p);
  EXPECT_EQ(in.q, want.q);
  EXPECT_EQ(in.scales, want.scales);
  EXPECT_EQ(cache.originals(p).k, make_original_inputs(p).k);
  EXPECT_EQ(cache.originals(p).p.mask, p.mask);  // the reference on the originals sees the mask
  const auto& ref = cache.reference(p, attention_math::softmax);
  host_inputs orig = make_original_inputs(p);
  orig.p = p;
  EXPECT_EQ(ref.e2e_o, reference_softmax(orig, ref.rows).o);
  EXPECT_NE(ref.e2e_o, ref.o);
  // fp32: one copy, no second reference.
  problem p32 = p;
  p32.type = dtype::fp32;
  reference_cache c32;
  EXPECT_EQ(&c32.originals(p32), &c32.inputs(p32));
  EXPECT_TRUE(c32.reference(p32, attention_math::softmax).e2e_o.empty());
}

TEST(fp8_validation, e2e_error_is_measured_against_the_originals) {
  const variant row = sim_row(sim::exact);
  for (dtype t : {dtype::e4m3, dtype::bf16, dtype::fp16}) {
    const problem p = make_problem(1, 4, 2, 40, 72, 32, t, "causal");
    reference_cache cache;
    const validated r = run_validation(row, p, cache);
    EXPECT_TRUE(r.v.err_ok) << to_string(t);
    EXPECT_TRUE(e2e_is_against_originals(r, p, cache)) << to_string(t);
    EXPECT_GT(std::fabs(r.v.e2e_rel_err - r.v.rel_err), 0.1 * r.v.rel_err) << to_string(t);
    if (t == dtype::e4m3) {
      EXPECT_LT(r.v.rel_err, 4e-3);      // O stored in bf16
      EXPECT_GT(r.v.e2e_rel_err, 0.02);  // the inputs' e4m3 quantisation
      EXPECT_GT(r.v.e2e_rel_err, 10 * r.v.rel_err);
      ASSERT_TRUE(r.v.scales);
      EXPECT_EQ(*r.v.scales, cache.inputs(p).scales);
    } else {
      EXPECT_FALSE(r.v.scales);
    }
  }
}

TEST(fp8_validation, planted_wrong_originals_fail_the_e2e_check) {
  // Negative control: originals that are already quantised (the inputs) leave e2e equal to
  // the kernel's own error, and the check above must say so.
  const variant row = sim_row(sim::exact);
  const problem p = make_problem(1, 4, 2, 40, 72, 32, dtype::e4m3, "causal");
  reference_cache planted([](const problem& q) { return make_inputs(q); });
  const validated r = run_validation(row, p, planted);
  EXPECT_LT(r.v.e2e_rel_err, 4e-3);
  EXPECT_FALSE(e2e_is_against_originals(r, p, planted));
}

TEST(fp8_validation, fp32_copies_rel_err) {
  const variant row = sim_row(sim::exact);
  const problem p = make_problem(1, 2, 2, 24, 24, 16, dtype::fp32, "none");
  reference_cache cache;
  const validated r = run_validation(row, p, cache);
  EXPECT_EQ(r.v.e2e_rel_err, r.v.rel_err);
  EXPECT_FALSE(r.v.scales);
}

TEST(fp8_validation, tolerance_admits_p_in_e4m3_and_refuses_faults) {
  // Shapes of the usual kinds: ragged, causal, local+global, GQA, Nq > Nkv, Nq = 1, long Nkv.
  const struct {
    std::int64_t H, Hkv, Nq, Nkv, d;
    const char* mask;
  } shapes[] = {
      {2, 2, 37, 101, 64, "none"},  {4, 1, 64, 1024, 64, "causal"}, {2, 2, 48, 300, 128, "local:31,0+global:4"},
      {2, 1, 96, 40, 64, "causal"}, {2, 2, 1, 4096, 128, "none"},   {1, 1, 16, 4096, 128, "none"}};
  for (const auto& s : shapes) {
    const problem p = make_problem(1, s.H, s.Hkv, s.Nq, s.Nkv, s.d, dtype::e4m3, s.mask);
    reference_cache cache;
    const validated good = run_validation(sim_row(sim::fp8), p, cache);
    EXPECT_TRUE(good.v.err_ok) << s.Nkv << " " << s.mask << ": rel_err " << good.v.rel_err;
    EXPECT_GT(good.v.rel_err, 0.005) << "P was not rounded";  // the measurement is not vacuous
    EXPECT_LT(good.v.rel_err, 0.045);
    const validated lost = run_validation(sim_row(sim::no_v_descale), p, cache);
    EXPECT_FALSE(lost.v.err_ok) << "lost V descale passed: " << lost.v.rel_err;
    const validated coarse = run_validation(sim_row(sim::p_one_bit), p, cache);
    if (s.Nkv >= 100) EXPECT_FALSE(coarse.v.err_ok) << "P with 1 mantissa bit passed: " << coarse.v.rel_err;
  }
}

TEST(fp8_json, entries_carry_out_dtype_e2e_and_scales) {
  const variant row = sim_row(sim::exact);
  const problem p8 = make_problem(1, 2, 2, 24, 40, 16, dtype::e4m3, "none");
  reference_cache cache;
  measurement m;
  m.val = run_validation(row, p8, cache).v;
  m.time.rep_ms = {1.0};
  m.time.iterations = 1;
  const json e = make_entry(config_of(row, p8), m);
  EXPECT_EQ(entry_schema_error(e), "");
  EXPECT_EQ(e["dtype"], "e4m3");
  EXPECT_EQ(e["out_dtype"], "bf16");
  EXPECT_EQ(e["e2e_rel_err"].get<double>(), m.val.e2e_rel_err);
  EXPECT_GT(e["e2e_rel_err"].get<double>(), 10 * e["rel_err"].get<double>());
  EXPECT_EQ(e["tolerance"], 0.0625);
  const input_scales s = cache.inputs(p8).scales;
  EXPECT_EQ(e["input_scales"], (json{{"q", s.q}, {"k", s.k}, {"v", s.v}}));
  // Not validated (skipped): the fields are there, null.
  const json skipped = make_entry(config_of(row, p8), measurement{.status = "skipped", .message = "x"});
  EXPECT_EQ(entry_schema_error(skipped), "");
  EXPECT_TRUE(skipped["e2e_rel_err"].is_null());
  EXPECT_TRUE(skipped["input_scales"].is_null());
  EXPECT_EQ(skipped["out_dtype"], "bf16");
  // Other dtypes: out_dtype = dtype, no input_scales.
  const problem p32 = make_problem(1, 2, 2, 24, 40, 16, dtype::fp32, "none");
  measurement m32;
  m32.val = run_validation(row, p32, cache).v;
  const json e32 = make_entry(config_of(row, p32), m32);
  EXPECT_EQ(e32["out_dtype"], "fp32");
  EXPECT_FALSE(e32.contains("input_scales"));
  EXPECT_EQ(e32["e2e_rel_err"], e32["rel_err"]);
}

TEST(fp8_json, schema_accepts_old_entries_and_refuses_bad_new_fields) {
  using testing_entries::valid_entry;
  EXPECT_EQ(entry_schema_error(valid_entry("old")), "");  // written before fp8: no new fields
  EXPECT_EQ(entry_schema_error(
                valid_entry("x", {{"e2e_rel_err", nullptr}, {"out_dtype", "bf16"}, {"input_scales", nullptr}})),
            "");
  EXPECT_EQ(entry_schema_error(valid_entry("x", {{"input_scales", {{"q", 0.01}, {"k", 0.02}, {"v", 1}}}})), "");
  const std::pair<json, const char*> bad[] = {
      {{{"e2e_rel_err", "small"}}, "field 'e2e_rel_err'"},
      {{{"out_dtype", ""}}, "field 'out_dtype'"},
      {{{"out_dtype", 16}}, "field 'out_dtype'"},
      {{{"input_scales", {1, 2, 3}}}, "field 'input_scales'"},
      {{{"input_scales", {{"q", 1}, {"k", 1}}}}, "field 'input_scales.v' is missing"},
      {{{"input_scales", {{"q", 0}, {"k", 1}, {"v", 1}}}}, "field 'input_scales.q' is 0"},
      {{{"input_scales", {{"q", 1}, {"k", "1"}, {"v", 1}}}}, "field 'input_scales.k'"},
  };
  for (const auto& [extra, why] : bad) {
    const std::string got = entry_schema_error(valid_entry("x", extra));
    EXPECT_NE(got.find(why), std::string::npos) << extra.dump() << " -> '" << got << "'";
  }
}

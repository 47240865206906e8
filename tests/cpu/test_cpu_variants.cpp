// Every CPU variant of the registry against the fp64 reference over random
// shapes: ragged lengths, Nq != Nkv both ways, every mask kind, GQA ratios
// 1/2/8/all, four tile shapes. Outputs are poisoned (NaN) before each run.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "core/block_layout.hpp"
#include "core/fp8.hpp"
#include "core/mask.hpp"
#include "kernels/cpu/round_dtype.hpp"
#include "kernels/models/models.hpp"
#include "kernels/registry.hpp"
#include "harness/tensors.hpp"
#include "kernels/reference/attention_reference.hpp"

using namespace attnbench;

namespace {

std::vector<std::string> cpu_variant_names() {
  std::vector<std::string> names;
  for (const variant& v : registry())  // the scans: tests/cpu/test_scan_rows.cpp
    if (v.backend == backend_kind::cpu && !is_scan(v.math)) names.push_back(v.name);
  return names;
}

// Cycles through masks x tiles exhaustively, GQA shapes and lengths at random.
std::vector<problem> random_problems(std::int64_t count, std::uint64_t seed) {
  const std::vector<std::string> masks = {"none",
                                          "causal",
                                          "local:7,0",
                                          "local:0,0",
                                          "local:3,9",
                                          "local:20,20",
                                          "global:3",
                                          "causal+global:5",
                                          "local:4,0+global:2",
                                          "local:1,1+global:17",
                                          "causal+strided:3,8",
                                          "local:4,4+global:2+random:16,2",
                                          "random:8,3,5"};
  const std::vector<std::pair<int, int>> tiles = {{16, 16}, {32, 16}, {16, 32}, {64, 64}};
  const std::vector<std::pair<int, int>> heads = {{2, 2}, {4, 2}, {16, 2}, {3, 1}, {8, 1}};
  const std::vector<std::pair<int, int>> lengths = {{37, 37}, {50, 83},   {83, 50}, {1, 70},
                                                    {70, 1},  {128, 128}, {100, 5}, {17, 130}};
  std::mt19937_64 gen(seed);
  auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(gen); };
  std::vector<problem> out;
  for (std::int64_t c = 0; c < count; ++c) {
    problem p;
    p.mask = parse_mask(masks[c % masks.size()]);
    std::tie(p.Br, p.Bc) = tiles[(c / masks.size()) % tiles.size()];
    std::tie(p.H, p.Hkv) = heads[pick(heads.size())];
    std::tie(p.Nq, p.Nkv) = lengths[pick(lengths.size())];
    p.B = 1 + static_cast<std::int64_t>(pick(2));
    p.d = 8 * (1 + static_cast<std::int64_t>(pick(4)));  // 8 .. 32
    if (c % 7 == 0) p.d = 64;
    // Keep each case under ~4M multiply-adds (the suite stays fast on 2
    // cores) while the larger ones still cross the kernels' threading threshold.
    if (p.B * p.H * p.Nq * p.Nkv * p.d > (1 << 22)) p.B = 1;
    if (p.B * p.H * p.Nq * p.Nkv * p.d > (1 << 22)) p.d = 16;
    validate(p);
    out.push_back(p);
  }
  return out;
}

// Runs v on p from poisoned outputs and returns what it wrote.
host_outputs run_once(const variant& v, const host_inputs& in) {
  auto r = v.make(in.p);
  r->set_inputs(in);
  r->poison_outputs();
  r->run();
  return r->get_outputs();
}

class cpu_variant : public ::testing::TestWithParam<std::string> {
 protected:
  const variant& row() const { return *find_variant(GetParam(), backend_kind::cpu); }
};

TEST_P(cpu_variant, matches_fp64_reference) {
  const variant& v = row();
  int ran = 0;
  for (problem p : random_problems(80, 42)) {
    // A row that takes no mask (Linformer mixes every position) runs each shape unmasked.
    if (v.caps.masks == mask_none) p.mask = {};
    // Decode rows (max_nq): the same shapes with Nq folded into their range.
    if (v.caps.max_nq > 0 && p.Nq > v.caps.max_nq) p.Nq = 1 + p.Nq % v.caps.max_nq;
    if (!v.supports(p).ok) continue;
    ++ran;
    const host_inputs in = make_inputs(p, 1000 + ran);
    const host_outputs out = run_once(v, in);
    ASSERT_EQ(out.o.size(), static_cast<std::size_t>(p.o_elems()));
    ASSERT_EQ(out.lse.size(), v.writes_lse ? static_cast<std::size_t>(p.rows()) : 0u);
    const auto rows = all_rows(p);
    const reference_rows ref = reference_for(v.math, in, rows);
    const error_report e = compare_rows(p, out.o, out.lse, rows, ref.o, ref.lse);
    EXPECT_TRUE(e.ok(1e-5)) << v.benchmark_name(p) << ": rel_l2 " << e.rel_l2 << ", nonfinite " << e.nonfinite
                            << ", first bad row " << e.first_bad_row;
    if (v.writes_lse) EXPECT_LT(e.lse_max_abs, 1e-4) << v.benchmark_name(p);
  }
  EXPECT_GE(ran, 10) << v.name << " supported too few random problems";
}

// Rows with no visible key: exactly zero output (and lse -inf), never NaN.
TEST_P(cpu_variant, rows_without_visible_keys_are_zero) {
  const variant& v = row();
  for (const char* mask : {"causal", "local:2,0", "local:0,3"}) {
    problem p;
    p.H = 2;
    p.Hkv = 1;
    p.Nq = 70;
    p.Nkv = 20;  // i' = i - 50: rows i < 50 see no key under causal
    p.d = 16;
    p.Br = p.Bc = 16;
    p.mask = parse_mask(mask);
    if (!v.supports(p).ok) continue;
    const host_inputs in = make_inputs(p, 5);
    const host_outputs out = run_once(v, in);
    std::int64_t empty_rows = 0;
    for (std::int64_t bh = 0; bh < p.B * p.H; ++bh)
      for (std::int64_t i = 0; i < p.Nq; ++i) {
        if (visible_keys(p, i) > 0) continue;
        ++empty_rows;
        const std::int64_t row = bh * p.Nq + i;
        for (std::int64_t c = 0; c < p.d; ++c)
          ASSERT_EQ(out.o[row * p.d + c], 0.0f) << v.benchmark_name(p) << " row " << i;
        if (v.writes_lse) ASSERT_TRUE(std::isinf(out.lse[row]) && out.lse[row] < 0);
      }
    EXPECT_GT(empty_rows, 0) << mask;
  }
}

// supports(): no CPU row takes fp16 (flash2 and sparse also take bf16 and
// e4m3, computing in fp32); reasons are one non-empty line.
TEST_P(cpu_variant, supports_gives_reasons) {
  const variant& v = row();
  problem p;
  p.type = dtype::fp16;
  const support s = v.supports(p);
  EXPECT_FALSE(s.ok);
  const bool low = v.name == "flash2" || v.name == "sparse";
  const std::string claimed = low ? "fp32, bf16, e4m3" : v.name == "flash2_splitkv" ? "fp32, bf16" : "fp32";
  EXPECT_EQ(s.reason, v.name + " (cpu) computes in " + claimed + ", not fp16");
  for (const char* mask : {"none", "causal", "local:3,3", "causal+global:2"}) {
    problem q;
    q.H = 4;
    q.Hkv = 4;
    q.mask = parse_mask(mask);
    const support t = v.supports(q);
    if (!t.ok) {
      EXPECT_FALSE(t.reason.empty());
      EXPECT_EQ(t.reason.find('\n'), std::string::npos);
    }
  }
}

// Models are filled in and consistent: useful <= executed FLOPs (softmax),
// traffic >= the minimum; only the naive rows need memory quadratic in N.
TEST_P(cpu_variant, models_and_memory) {
  const variant& v = row();
  for (const char* mask : {"none", "causal", "local:100,0+global:4"}) {
    problem p;
    p.H = 8;
    p.Hkv = 2;
    p.Nq = p.Nkv = 1000;
    p.mask = parse_mask(mask);
    if (!v.supports(p).ok) continue;
    EXPECT_GT(v.model(p).flops, 0);
    if (v.math == attention_math::softmax) EXPECT_LE(v.model(p).flops, v.model(p).flops_executed);
    EXPECT_GE(v.model(p).bytes, model_bytes_min(p)) << v.benchmark_name(p);
    // Doubling N: memory x4 with S and P, about x2 when O(N).
    problem big = p, bigger = p;
    big.Nq = big.Nkv = 1 << 15;
    bigger.Nq = bigger.Nkv = 1 << 16;
    const double growth = double(v.memory_bytes(bigger)) / double(v.memory_bytes(big));
    if (v.name.starts_with("naive")) {
      EXPECT_GE(v.memory_bytes(big), 2.0 * 4 * big.B * big.H * big.Nq * big.Nkv);  // S, P
      EXPECT_GT(growth, 3.9);
    } else {
      EXPECT_LT(growth, 2.1) << v.name << " memory is not O(N)";
    }
  }
}

// A per-head block layout (every head its own pattern): flash2 and sparse give each
// query head its own keys, and count the bytes their model says. Control: the
// reference of the same inputs with head 0's pattern for every head is far off,
// so a kernel that ignored the head could not pass.
TEST(cpu_variants, per_head_layout) {
  const std::int64_t H = 4, Nq = 70, Nkv = 90, b = 16, rows = (Nq + b - 1) / b, cols = (Nkv + b - 1) / b;
  std::vector<std::uint8_t> bits(H * rows * cols), head0(bits.size());
  for (std::int64_t e = 0; e < std::int64_t(bits.size()); ++e) bits[e] = ((e * 2654435761u) >> 9) % 3 == 0;
  for (std::int64_t e = 0; e < std::int64_t(bits.size()); ++e) head0[e] = bits[e % (rows * cols)];
  const auto file = [&](const char* name, const std::vector<std::uint8_t>& v) {
    const std::string path =
        (std::filesystem::path(testing::TempDir()) / ("attnbench_cpu_variants_" + std::to_string(::getpid()) + name))
            .string();
    std::ofstream(path, std::ios::binary) << block_layout_npy({H, rows, cols}, v);
    return path;
  };
  problem p;
  p.H = H, p.Hkv = 2, p.Nq = Nq, p.Nkv = Nkv, p.d = 16, p.Br = p.Bc = 16;
  p.mask = parse_mask("causal+layout:16:" + file("heads.npy", bits));
  ASSERT_TRUE(p.mask.per_head());
  problem same = p;
  same.mask = parse_mask("causal+layout:16:" + file("head0.npy", head0));
  const host_inputs in = make_inputs(p, 77);
  host_inputs in_same = in;
  in_same.p = same;
  const auto rws = all_rows(p);
  const reference_rows ref = reference_for(attention_math::softmax, in, rws);
  const reference_rows ref_same = reference_for(attention_math::softmax, in_same, rws);
  for (const char* name : {"flash2", "sparse"}) {
    const variant& v = *find_variant(name, backend_kind::cpu);
    ASSERT_TRUE(v.supports(p).ok) << v.supports(p).reason;
    auto r = v.make(p);
    r->set_inputs(in);
    r->poison_outputs();
    r->run();
    const host_outputs out = r->get_outputs();
    const error_report e = compare_rows(p, out.o, out.lse, rws, ref.o, ref.lse);
    EXPECT_TRUE(e.ok(1e-5)) << name << ": rel_l2 " << e.rel_l2 << ", first bad row " << e.first_bad_row;
    EXPECT_LT(e.lse_max_abs, 1e-4) << name;
    EXPECT_EQ(double(r->counted_bytes()), v.model(p).bytes) << name;
    EXPECT_FALSE(compare_rows(p, out.o, out.lse, rws, ref_same.o, ref_same.lse).ok(1e-2)) << name;
  }
}

INSTANTIATE_TEST_SUITE_P(registry, cpu_variant, ::testing::ValuesIn(cpu_variant_names()),
                         [](const auto& info) { return info.param; });

TEST(cpu_variants, expected_rows_and_support_rules) {
  problem p;
  p.H = 8;
  p.Hkv = 8;
  p.mask = parse_mask("causal");
  const variant* sparse = find_variant("sparse", backend_kind::cpu);
  ASSERT_NE(sparse, nullptr);
  EXPECT_EQ(sparse->supports(p).reason, "mask causal has no local/global sparsity; flash2 covers it");
  p.mask = parse_mask("local:3,0");
  EXPECT_TRUE(sparse->supports(p).ok);
  const variant* expand = find_variant("naive_gqa_expand", backend_kind::cpu);
  ASSERT_NE(expand, nullptr);
  EXPECT_FALSE(expand->supports(p).ok);
  p.Hkv = 2;
  EXPECT_TRUE(expand->supports(p).ok);
  const variant* lin = find_variant("linear", backend_kind::cpu);
  ASSERT_NE(lin, nullptr);
  EXPECT_FALSE(lin->supports(p).ok);  // local window
  p.mask = parse_mask("causal+global:2");
  EXPECT_FALSE(lin->supports(p).ok);
  p.mask = parse_mask("causal");
  EXPECT_TRUE(lin->supports(p).ok);
  EXPECT_EQ(lin->math, attention_math::linear);
}

// ---- bf16 and e4m3 on the CPU --------------------------------------------------------

// e4m3 inputs as the harness hands them over (host_inputs::scales): every value
// of a tensor is an e4m3 code times the tensor's scale, amax / 448.
host_inputs e4m3_inputs(const problem& p, std::uint64_t seed) {
  problem f = p;
  f.type = dtype::fp32;
  host_inputs in = make_inputs(f, seed);
  in.p = p;
  for (auto [t, s] : {std::pair{&in.q, &in.scales.q}, {&in.k, &in.scales.k}, {&in.v, &in.scales.v}}) {
    *s = e4m3_scale_for(*t);
    for (float& x : *t) x = e4m3_to_float(e4m3_from_float(x / *s)) * *s;
  }
  return in;
}

// The fp8 shapes: ragged lengths, Nq != Nkv both ways, causal, local+global, GQA, Nq = 1.
std::vector<problem> fp8_problems() {
  return {make_problem(1, 2, 2, 37, 37, 64, dtype::e4m3, "none", 16, 16),
          make_problem(2, 4, 2, 50, 83, 32, dtype::e4m3, "causal", 32, 16),
          make_problem(1, 8, 1, 83, 50, 64, dtype::e4m3, "causal", 16, 32),
          make_problem(1, 4, 4, 100, 130, 128, dtype::e4m3, "local:20,5+global:3", 64, 64),
          make_problem(2, 6, 3, 1, 70, 16, dtype::e4m3, "none", 16, 16),
          make_problem(1, 4, 1, 129, 129, 64, dtype::e4m3, "causal+global:5", 64, 64)};
}

host_outputs run_row(const char* name, const host_inputs& in) {
  return run_once(*find_variant(name, backend_kind::cpu), in);
}

// flash2 at e4m3 against the fp64 reference on the quantised inputs: within
// the harness's 2^-4 and clearly above fp32's error, because P is rounded to
// e4m3 (3 mantissa bits). Controls on the same inputs: fp32 (no P rounding, O
// in fp32) is at the fp32 level, bf16 (O rounded to bf16, P not rounded) well
// below e4m3's error, so the check sees the P rounding and not just the
// rounding of O. The lse is unaffected by the rounding (l sums the unrounded
// P) and has the offset 8 ln 2 taken out.
TEST(cpu_variants, flash2_e4m3_matches_the_reference_on_quantised_inputs) {
  for (const problem& p : fp8_problems()) {
    const variant& v = *find_variant("flash2", backend_kind::cpu);
    ASSERT_TRUE(v.supports(p).ok) << v.supports(p).reason;
    const host_inputs in = e4m3_inputs(p, 16);
    const auto rows = all_rows(p);
    const reference_rows ref = reference_softmax(in, rows);
    const host_outputs out = run_once(v, in);
    const error_report e = compare_rows(p, out.o, out.lse, rows, ref.o, ref.lse);
    host_inputs as32 = in, as16 = in;
    as32.p.type = dtype::fp32;
    as16.p.type = dtype::bf16;
    const host_outputs out32 = run_once(v, as32), out16 = run_once(v, as16);
    const error_report e32 = compare_rows(as32.p, out32.o, out32.lse, rows, ref.o, ref.lse);
    const error_report e16 = compare_rows(as16.p, out16.o, out16.lse, rows, ref.o, ref.lse);
    const std::string name = v.benchmark_name(p);
    EXPECT_TRUE(e.ok(1.0 / 16)) << name << ": rel_l2 " << e.rel_l2 << ", nonfinite " << e.nonfinite;
    EXPECT_GT(e.rel_l2, 3e-3) << name << ": P rounding not visible";
    EXPECT_LT(e32.rel_l2, 1e-5) << name;
    EXPECT_GT(e.rel_l2, 3 * e16.rel_l2) << name << ": no more error than bf16's O rounding";
    EXPECT_LT(e.lse_max_abs, 1e-4) << name << ": lse (the offset 8 ln 2 = 5.55 left in?)";
    for (float x : out.o) ASSERT_EQ(cpu::bf16_round(x), x) << name << ": O not in bf16";
    std::printf("%s: rel_l2 e4m3 %.3g, bf16 %.3g, fp32 %.3g; lse %.2g\n", name.c_str(), e.rel_l2, e16.rel_l2,
                e32.rel_l2, e.lse_max_abs);
  }
}

// Rows with no visible key at e4m3: O = 0 and lse = -inf, as at fp32.
TEST(cpu_variants, flash2_e4m3_rows_without_keys) {
  const problem p = make_problem(1, 2, 1, 70, 20, 16, dtype::e4m3, "causal", 16, 16);
  const host_outputs out = run_row("flash2", e4m3_inputs(p, 5));
  for (std::int64_t i = 0; i < 50; ++i) {  // i' = i - 50 < 0
    EXPECT_TRUE(std::isinf(out.lse[i]) && out.lse[i] < 0) << i;
    for (std::int64_t c = 0; c < p.d; ++c) ASSERT_EQ(out.o[i * p.d + c], 0.0f);
  }
  for (std::int64_t i = 50; i < 70; ++i) EXPECT_TRUE(std::isfinite(out.lse[i])) << i;
}

// bf16: O rounded to bf16 (every value a bf16), error within bf16's 2^-8 and above fp32's.
TEST(cpu_variants, flash2_bf16_writes_o_in_bf16) {
  for (const char* name : {"flash2", "sparse"}) {
    const problem p = make_problem(2, 4, 2, 77, 45, 40, dtype::bf16, "local:9,2+global:3", 32, 16);
    host_inputs in = make_inputs(p, 3);
    for (auto* t : {&in.q, &in.k, &in.v})
      for (float& x : *t) x = cpu::bf16_round(x);
    const auto rows = all_rows(p);
    const reference_rows ref = reference_softmax(in, rows);
    const host_outputs out = run_row(name, in);
    const error_report e = compare_rows(p, out.o, out.lse, rows, ref.o, ref.lse);
    EXPECT_TRUE(e.ok(1.0 / 256)) << name << ": rel_l2 " << e.rel_l2;
    EXPECT_GT(e.rel_l2, 1e-4) << name;
    EXPECT_LT(e.lse_max_abs, 1e-4) << name;
    for (float x : out.o) ASSERT_EQ(cpu::bf16_round(x), x) << name;
  }
}

}  // namespace

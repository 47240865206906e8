// The scan rows on CUDA (kernels/cuda/scan): selective_scan, ssd, wkv and wkv6 against their fp64
// references (kernels/reference/scan_reference.hpp) on ragged L (not multiples of the 32-step
// chunk, L = 1, several chunks so the carry matters), several N and G (a head split between
// groups, a group per channel), B > 1, d = 8 .. 88; fp32 within
// 1e-5 (the CPU rows' bound), fp16/bf16 within about twice the output's rounding error (no
// unfused baseline exists for a scan). WKV with keys up to +-100, where e^k overflows fp32:
// the running-max form must stay finite. Host-only checks (the rows mirror the CPU rows'
// support and models) run without a GPU; the rest also run under the emulator (emu.scans).
#include <gtest/gtest.h>

#include <stdexcept>

#include "kernels/models/models.hpp"
#include "kernels/reference/scan_reference.hpp"
#include "tests/gpu/cuda_cases.hpp"

namespace attnbench::testing {
namespace {

problem scan_problem(std::int64_t B, std::int64_t H, std::int64_t L, std::int64_t d, dtype t = dtype::fp32,
                     std::int64_t N = 16, std::int64_t G = 1) {
  problem p = attnbench::make_problem(B, H, H, L, L, d, t, "causal", 64, 64);
  p.dstate = static_cast<std::int16_t>(N);
  p.ngroups = static_cast<std::int16_t>(G);
  validate(p);
  return p;
}

// Output rounding (2^-11 fp16, 2^-8 bf16 relative) and the inputs' own rounding, about twice.
double scan_bound(dtype t) {
  switch (t) {
    case dtype::fp16: return 2e-3;
    case dtype::bf16: return 1.5e-2;
    case dtype::e4m3:  // the scans do not claim e4m3
    case dtype::fp32: break;
  }
  return fp32_tol;
}

// Checks every row (not a sample): a dropped carry shows only in later chunks.
void expect_all_rows_close(const variant& v, const problem& p) {
  SCOPED_TRACE(v.name + " " + describe(p) + " N=" + std::to_string(p.dstate) + " G=" + std::to_string(p.ngroups));
  const checked_run c = run_and_check(v, p);
  EXPECT_EQ(c.err.nonfinite, 0) << "first bad row " << c.err.first_bad_row;
  EXPECT_LE(c.err.rel_l2, scan_bound(p.type))
      << "max abs " << c.err.max_abs << " first bad row " << c.err.first_bad_row;
  EXPECT_TRUE(c.out.lse.empty());
}

TEST(CudaScansHost, RowsMirrorTheCpuRows) {
  for (const char* name : {"selective_scan", "ssd", "wkv", "wkv6"}) {
    const variant& g = cuda_row(name);
    const variant* c = find_variant(name, backend_kind::cpu);
    if (!c) GTEST_SKIP() << "no CPU rows linked (the emulator links a stub)";
    EXPECT_EQ(g.math, c->math) << name;
    for (const problem& p : {scan_problem(1, 2, 37, 8), scan_problem(2, 3, 100, 40, dtype::fp32, 4, 2)}) {
      EXPECT_EQ(g.model(p).flops, c->model(p).flops) << name;
      EXPECT_EQ(g.model(p).exps, c->model(p).exps) << name;
    }
  }
}

TEST(CudaScansHost, SupportAndModels) {
  const variant& s = cuda_row("selective_scan");
  const variant& w = cuda_row("wkv");
  const variant& w6 = cuda_row("wkv6");
  for (const variant* v : {&s, &w, &w6}) {
    EXPECT_FALSE(v->writes_lse);
    EXPECT_TRUE(v->supports(scan_problem(1, 2, 37, 8)).ok);
    const support uneven = v->supports(attnbench::make_problem(1, 2, 2, 10, 12, 8, dtype::fp32, "causal"));
    EXPECT_FALSE(uneven.ok);
    EXPECT_NE(uneven.reason.find("Nq = Nkv"), std::string::npos) << uneven.reason;
    EXPECT_FALSE(v->supports(attnbench::make_problem(1, 2, 2, 10, 10, 8, dtype::fp32, "none")).ok);
  }
  problem bad = scan_problem(1, 3, 10, 8);
  bad.ngroups = 5;  // does not divide 24
  EXPECT_NE(s.supports(bad).reason.find("G=5"), std::string::npos) << s.supports(bad).reason;
  // One exp per (channel, step, n) plus softplus's and silu's: 18 exps per channel-step at
  // N = 16 against 16 bytes of u, dt, z, out in fp32 (docs/alternatives.md).
  const problem p = scan_problem(2, 4, 1000, 64);
  const model_figures m = s.model(p);
  EXPECT_DOUBLE_EQ(m.exps, 2.0 * 256 * 1000 * 18);
  EXPECT_DOUBLE_EQ(m.flops, 2.0 * 256 * 1000 * (6 * 16 + 5));
  // 8 blocks of 8 channels per head, one group: B and C read by each of the 32 blocks.
  EXPECT_DOUBLE_EQ(m.bytes, 2.0 * (4.0 * 256 * 18 + 16.0 * 256 * 1000 + 4.0 * 2 * 32 * 1000 * 16));
  const problem q = scan_problem(2, 4, 1000, 64, dtype::bf16);
  EXPECT_DOUBLE_EQ(w.model(q).bytes, 2.0 * 256 * (8 + 3 * 2 * 1000));
  EXPECT_DOUBLE_EQ(w.model(q).exps, 4.0 * 2 * 256 * 1000);
  // wkv6: u once, r, k, v, out in bf16 and w_raw in fp32 per step.
  EXPECT_DOUBLE_EQ(w6.model(q).bytes, 2.0 * 4 * (4 * 64 + (4 * 2 + 4) * 1000 * 64));
  EXPECT_DOUBLE_EQ(w6.model(q).exps, 2.0 * 2 * 256 * 1000);
  const support wide = w6.supports(scan_problem(1, 2, 10, 128));
  EXPECT_FALSE(wide.ok);
  EXPECT_NE(wide.reason.find("d <= 64 (got d=128)"), std::string::npos) << wide.reason;
  EXPECT_GT(w6.memory_bytes(p), static_cast<std::int64_t>(model_bytes_min(p)));
  EXPECT_GT(s.memory_bytes(p), static_cast<std::int64_t>(model_bytes_min(p)));
  EXPECT_GT(w.memory_bytes(p), static_cast<std::int64_t>(model_bytes_min(p)));
}

// SSD: the CPU row's model at the kernel's 64-step chunk whatever p.Bc says; x, z, out in
// p.type, dt_raw, B, C in fp32; fp16 and bf16 only (tensor cores), N and d up to 128.
TEST(CudaScansHost, SsdSupportAndModel) {
  const variant& s = cuda_row("ssd");
  EXPECT_FALSE(s.writes_lse);
  EXPECT_TRUE(s.supports(scan_problem(2, 4, 100, 64, dtype::bf16, 128, 2)).ok);
  EXPECT_FALSE(s.supports(scan_problem(1, 2, 37, 8)).ok);  // fp32
  problem bad = scan_problem(1, 4, 10, 8, dtype::fp16, 16, 1);
  bad.ngroups = 3;
  EXPECT_NE(s.supports(bad).reason.find("G=3 does not divide H=4"), std::string::npos) << s.supports(bad).reason;
  const support wide = s.supports(scan_problem(1, 2, 10, 64, dtype::fp16, 256));
  EXPECT_FALSE(wide.ok);
  EXPECT_NE(wide.reason.find("got N=256, d=64"), std::string::npos) << wide.reason;
  EXPECT_FALSE(s.supports(scan_problem(1, 2, 10, 256, dtype::fp16, 16)).ok);
  problem p = scan_problem(2, 4, 1000, 64, dtype::bf16, 128, 2);
  p.Bc = 32;
  problem at64 = p;
  at64.Bc = 64;
  const model_figures m = s.model(p);
  EXPECT_DOUBLE_EQ(m.flops, model_flops_ssd(at64));
  EXPECT_DOUBLE_EQ(m.exps, model_exps_ssd(at64));
  EXPECT_DOUBLE_EQ(m.bytes, 2.0 * 4 * (4 * (3 + 1000 + 2 * 1000 * 128) + 2 * 3 * 1000 * 64));
  EXPECT_GT(s.memory_bytes(p), static_cast<std::int64_t>(model_bytes_min(p)));
}

// Ragged L (not multiples of the 64-step chunk, L = 1, three chunks so the carry matters), N
// and d not multiples of the 16 x 8 tiles, G groups of heads sharing B and C, B > 1.
TEST(CudaScans, SsdMatchesFp64Reference) {
  ATTN_REQUIRE_GPU();
  const variant& s = cuda_row("ssd");
  for (dtype t : {dtype::fp16, dtype::bf16}) {
    for (std::int64_t L : {1, 5, 64, 150}) expect_all_rows_close(s, scan_problem(1, 2, L, 16, t, 16));
    expect_all_rows_close(s, scan_problem(2, 4, 100, 24, t, 20, 2));  // two groups of two heads
  }
  expect_all_rows_close(s, scan_problem(1, 3, 70, 8, dtype::fp16, 5, 3));   // a group per head
  expect_all_rows_close(s, scan_problem(1, 1, 130, 64, dtype::bf16, 128));  // Mamba-2's N and P
}

TEST(CudaScans, SelectiveScanMatchesFp64Reference) {
  ATTN_REQUIRE_GPU();
  const variant& s = cuda_row("selective_scan");
  for (std::int64_t L : {1, 5, 32, 33, 100})
    for (auto [B, H, d] : {std::tuple{1, 1, 8}, {2, 3, 40}}) expect_all_rows_close(s, scan_problem(B, H, L, d));
  for (std::int64_t N : {1, 3, 64, 256}) expect_all_rows_close(s, scan_problem(1, 2, 45, 8, dtype::fp32, N));
  expect_all_rows_close(s, scan_problem(2, 2, 70, 16, dtype::fp32, 4, 2));  // a group per head
  expect_all_rows_close(s, scan_problem(1, 1, 33, 48, dtype::fp32, 2, 4));  // 12 channels a group: tiles span two
  expect_all_rows_close(s, scan_problem(1, 3, 40, 8, dtype::fp32, 5, 4));   // heads split between groups
  expect_all_rows_close(s, scan_problem(1, 1, 20, 8, dtype::fp32, 3, 8));   // a group per channel
  for (dtype t : {dtype::fp16, dtype::bf16}) expect_all_rows_close(s, scan_problem(2, 2, 77, 40, t));
}

TEST(CudaScans, WkvMatchesFp64Reference) {
  ATTN_REQUIRE_GPU();
  const variant& w = cuda_row("wkv");
  for (std::int64_t L : {1, 5, 37, 200})
    for (auto [B, H, d] : {std::tuple{1, 1, 8}, {2, 3, 40}, {1, 3, 88}})  // 264 channels: a partial block
      expect_all_rows_close(w, scan_problem(B, H, L, d));
  for (dtype t : {dtype::fp16, dtype::bf16}) expect_all_rows_close(w, scan_problem(2, 2, 77, 40, t));
}

TEST(CudaScans, Wkv6MatchesFp64Reference) {
  ATTN_REQUIRE_GPU();
  const variant& w = cuda_row("wkv6");
  for (std::int64_t L : {1, 5, 37, 100})
    for (auto [B, H, d] : {std::tuple{1, 1, 8}, {2, 3, 40}, {1, 2, 64}})
      expect_all_rows_close(w, scan_problem(B, H, L, d));
  for (dtype t : {dtype::fp16, dtype::bf16}) expect_all_rows_close(w, scan_problem(2, 2, 77, 64, t));
}

// e^k overflows fp32 beyond k = 88.7: only the running max keeps the sums finite.
TEST(CudaScans, WkvStaysFiniteWithLargeKeys) {
  ATTN_REQUIRE_GPU();
  const variant& w = cuda_row("wkv");
  const problem p = scan_problem(2, 2, 90, 40);
  host_inputs in = make_inputs(p, 7);
  for (float& k : in.k) k *= 100.0f;
  const error_report e = check_all_rows(w, in);
  EXPECT_EQ(e.nonfinite, 0) << "first bad row " << e.first_bad_row;
  EXPECT_LE(e.rel_l2, fp32_tol) << "max abs " << e.max_abs;
}

}  // namespace
}  // namespace attnbench::testing

// The CUDA flash2 backward (kernels/cuda/flash2/flash2_bwd_*; docs/backward.md): dQ, dK,
// dV of the flash2 row at p.pass bwd and fwd_bwd against the fp64 backward reference on
// small shapes at each backward tile (64 x 64, 4 warps; 64 x 128, 8 warps): ragged lengths
// (not multiples of the tile), Nq != Nkv both ways
// (causal bottom-right; Nq > Nkv leaves rows without a visible key), GQA ratios 1, 2, 4,
// d 64 and 128, fp16 and bf16, B 2, masks none, causal, local (keys no row sees),
// causal+global and sparse terms (random blocks at d 64 and 128, strides, a per-head layout);
// the sparse row on the cases whose masks it takes. Each case runs twice after the gradients are
// poisoned (a second run must not accumulate into the first: the dQ accumulator is
// cleared inside the backward). Bound: the forward's fixed bound per dtype
// (tests/gpu/tolerance.hpp; no unfused CUDA backward baseline exists yet to take a
// multiple of), below the sweep's grad_tolerance; the measured errors are printed. Runs on a GPU (skipped with the
// reason without one) and under the host emulator (tests/emu.cmake, emu.flash2_bwd, emu.sparse_bwd and
// emu.flash2_bwd_deterministic),
// with the negative controls of tests/emu/negative_controls.cmake. Host-only checks (supports reasons, model, memory)
// run without a device.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "core/block_layout.hpp"
#include "core/cuda/launch_limits.hpp"
#include "core/mask.hpp"
#include "harness/tensors.hpp"
#include "kernels/cuda/flash2/flash2_bwd_params.hpp"
#include "kernels/cuda/flash2/flash2_plan.hpp"
#include "kernels/models/models.hpp"
#include "kernels/reference/backward_reference.hpp"
#include "tests/gpu/gpu_test_util.hpp"

namespace attnbench::testing {
namespace {

struct bwd_case {
  std::int64_t B, H, Hkv, Nq, Nkv, d;
  dtype type;
  const char* mask;
  pass_kind pass;
};

// Small enough for the emulator (~1 s each on one core), every claimed axis covered.
const bwd_case cases[] = {
    {1, 2, 2, 70, 133, 64, dtype::fp16, "causal", pass_kind::bwd},           // Nq < Nkv, ragged
    {1, 4, 2, 100, 65, 64, dtype::bf16, "none", pass_kind::bwd},             // GQA 2, Nq > Nkv
    {1, 4, 1, 130, 70, 128, dtype::bf16, "causal", pass_kind::bwd},          // GQA 4, 60 empty rows
    {2, 2, 1, 65, 65, 128, dtype::fp16, "none", pass_kind::fwd_bwd},         // B 2, GQA 2, fwd_bwd
    {1, 1, 1, 40, 100, 128, dtype::fp16, "causal", pass_kind::bwd},          // one query tile, two key tiles
    {2, 2, 2, 129, 64, 64, dtype::bf16, "causal", pass_kind::fwd_bwd},       // 65 empty rows, one key tile
    {1, 2, 1, 70, 133, 64, dtype::fp16, "local:5,0", pass_kind::bwd},        // keys 0..57 seen by no row
    {1, 4, 2, 90, 70, 128, dtype::bf16, "causal+global:8", pass_kind::bwd},  // global rows and keys, Nq > Nkv
    // The sparse terms (element-wise from device memory, the causal-bound walk).
    {1, 4, 2, 70, 133, 64, dtype::fp16, "causal+random:16,2", pass_kind::bwd},        // clipped random blocks
    {1, 2, 1, 100, 90, 64, dtype::bf16, "global:2+strided:4,3", pass_kind::fwd_bwd},  // strides, no base
    {1, 4, 2, 70, 133, 128, dtype::bf16, "causal+random:16,2", pass_kind::bwd},       // d 128 (64 x 64 only)
    {1, 2, 1, 64, 128, 128, dtype::bf16, "none", pass_kind::bwd},  // whole visits at 64 x 128 (no ragged edge)
};

// A per-head block layout (4 query heads over 2 KV heads, blocks of 16), written once: head h
// keeps block (qb, kb) where (h + qb + 2 kb) % 3 != 0.
std::string per_head_layout_mask() {
  static const std::string mask = [] {
    const std::int64_t H = 4, qb = 5, kb = 9;
    std::vector<std::uint8_t> bits;
    for (std::int64_t h = 0; h < H; ++h)
      for (std::int64_t i = 0; i < qb; ++i)
        for (std::int64_t j = 0; j < kb; ++j) bits.push_back((h + i + 2 * j) % 3 != 0);
    const std::string path = (std::filesystem::path(::testing::TempDir()) /
                              ("attnbench_cuda_bwd_layout_" + std::to_string(::getpid()) + ".npy"))
                                 .string();
    std::ofstream(path, std::ios::binary) << block_layout_npy({H, qb, kb}, bits);
    return "layout:16:" + path;
  }();
  return mask;
}

// Every case at each of the backward's tiles (64 x 64, 64 x 128). Under ThreadSanitizer (the
// emulator's TSan build, ~10x slower) a subset that still has every code path of the kernel:
// ragged causal at d 64 and GQA with empty rows at d 128 (both tiles), random blocks.
#if defined(__SANITIZE_THREAD__)
constexpr bool subset = true;
#else
constexpr bool subset = false;
#endif
std::vector<problem> case_problems() {
  std::vector<problem> r;
  for (const std::int64_t bc : cuda::kBwdBcs)
    for (const bwd_case& c : cases) {
      const auto k = &c - cases;
      if (subset && !(k == 0 || k == 2 || (bc == 64 && k == 8))) continue;
      problem p = make_problem(c.B, c.H, c.Hkv, c.Nq, c.Nkv, c.d, c.type, c.mask, cuda::kBwdBr, bc);
      p.pass = c.pass;
      if (p.mask.has_sparse() && !cuda::flash2_bwd_sparse_terms(p.d, bc)) continue;
      r.push_back(p);
    }
  for (const std::int64_t bc : cuda::kBwdBcs) {
    if (subset) break;
    problem p = make_problem(1, 4, 2, 70, 133, 64, dtype::bf16, per_head_layout_mask(), cuda::kBwdBr, bc);
    p.pass = pass_kind::bwd;
    r.push_back(p);
  }
  return r;
}

std::vector<std::int64_t> every_kv_row(const problem& p) {
  std::vector<std::int64_t> r(static_cast<std::size_t>(p.B * p.Hkv * p.Nkv));
  for (std::size_t x = 0; x < r.size(); ++x) r[x] = static_cast<std::int64_t>(x);
  return r;
}

// Relative L2 error; NaN when any element is not finite (NaN never passes).
double rel_l2(const std::vector<float>& got, const std::vector<double>& want) {
  if (got.size() != want.size()) return NAN;
  double num = 0, den = 0;
  for (std::size_t x = 0; x < want.size(); ++x) {
    if (!std::isfinite(got[x])) return NAN;
    num += (got[x] - want[x]) * (got[x] - want[x]);
    den += want[x] * want[x];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

const variant& flash2_row() {
  const variant* v = find_variant("flash2", backend_kind::cuda);
  EXPECT_NE(v, nullptr);
  return *v;
}

// p through the row `v` (poisoned, run twice) against the fp64 backward, every gradient
// element; exact zeros where no pair is visible.
// forced_head_splits > 0: the row's runner with that many head splits instead of its own.
void expect_matches_fp64(const variant& v, const problem& p, int seed, int forced_head_splits = 0) {
  const std::string name =
      v.benchmark_name(p) + (forced_head_splits > 0 ? fmt::format(" head splits {}", forced_head_splits) : "");
  ASSERT_TRUE(v.supports(p).ok) << name << ": " << v.supports(p).reason;
  host_inputs in = make_inputs(p, static_cast<std::uint64_t>(seed));
  in.d_o = make_grad_output(p, static_cast<std::uint64_t>(seed + 1));
  auto r = forced_head_splits > 0
               ? cuda::make_flash2_backward_runner(p, true, cuda::flash2_row::flash2, false, 0, forced_head_splits)
               : v.make(p);
  r->set_inputs(in);
  r->poison_outputs();
  r->run();
  r->run();  // must not accumulate into the first run's gradients
  sync_device();
  const host_outputs out = r->get_outputs();
  const reference_grads g = reference_softmax_backward(in, all_rows(p), every_kv_row(p));
  // The forward's fixed bound (tolerance.hpp), tighter than the sweep's grad_tolerance:
  // measured 3e-4 (fp16) and 2.5e-3 (bf16) on these cases under the emulator.
  const double tol = std::min(grad_tolerance(p.type), fixed_bound(p.type));
  const double eq = rel_l2(out.dq, g.dq), ek = rel_l2(out.dk, g.dk), ev = rel_l2(out.dv, g.dv);
  std::printf("%s: dQ %.3g dK %.3g dV %.3g (bound %.3g)\n", name.c_str(), eq, ek, ev, tol);
  EXPECT_LE(eq, tol) << name << " dQ";
  EXPECT_LE(ek, tol) << name << " dK";
  EXPECT_LE(ev, tol) << name << " dV";
  // Exact zeros: dQ of rows without a visible key, dK and dV of keys no row of the KV head's
  // query heads sees (each head's own layout where the mask has one per head).
  std::int64_t empty_rows = 0;
  for (std::int64_t row = 0; row < p.rows(); ++row)
    if (visible_keys(p, row / p.Nq % p.H, row % p.Nq) == 0) {
      ++empty_rows;
      for (std::int64_t x = 0; x < p.d; ++x) ASSERT_EQ(out.dq[row * p.d + x], 0.0f) << name << " row " << row;
    }
  for (std::int64_t key = 0; key < p.B * p.Hkv * p.Nkv; ++key) {
    const std::int64_t h0 = key / p.Nkv % p.Hkv * p.group();
    bool seen = false;
    for (std::int64_t h = h0; h < h0 + p.group() && !seen; ++h)
      for (std::int64_t i = 0; i < p.Nq && !seen; ++i) seen = is_visible(p, h, i, key % p.Nkv);
    if (!seen)
      for (std::int64_t x = 0; x < p.d; ++x) {
        ASSERT_EQ(out.dk[key * p.d + x], 0.0f) << name << " key " << key;
        ASSERT_EQ(out.dv[key * p.d + x], 0.0f) << name << " key " << key;
      }
  }
  if (p.Nq > p.Nkv && p.mask.kind == mask_kind::causal && p.mask.global == 0) EXPECT_GT(empty_rows, 0) << name;
}

TEST(CudaFlash2Bwd, MatchesFp64ReferenceOnSmallShapes) {
  ATTN_REQUIRE_GPU();
  int seed = 70;
  for (const problem& p : case_problems()) expect_matches_fp64(flash2_row(), p, seed++);
}

// GQA groups split over CTAs (bwd_head_splits). On these small shapes the row splits every
// group whole (one query head per CTA, the reduce kernel summing the fp32 parts); here the GQA
// cases at 64 x 64 also run unsplit (the kernel writing dK, dV itself, as on large shapes) and
// the group of 4 in 2 parts.
TEST(CudaFlash2Bwd, HeadSplitsMatchFp64) {
  ATTN_REQUIRE_GPU();
  int seed = 130;
  int runs = 0;
  for (const problem& p : case_problems()) {
    if (p.group() < 2 || p.Bc != 64) continue;
    EXPECT_EQ(cuda::bwd_head_splits(p, 132), p.group()) << flash2_row().benchmark_name(p);
    for (int splits = 1; splits < p.group(); ++splits)
      if (p.group() % splits == 0 && (splits == 1 || !subset)) {
        expect_matches_fp64(flash2_row(), p, seed++, splits);
        ++runs;
      }
  }
  EXPECT_GE(runs, subset ? 1 : 6);
}

// The sparse row's backward: the same kernel over its forward's key-tile lists transposed,
// on the cases whose masks it takes (a local window or global tokens or sparse terms), plus a
// window over 5 tiles, where each key tile is seen by 2 of the 5 query tiles. Its bound and
// zeros are flash2's; a visit the lists drop shows as a gradient error.
TEST(CudaFlash2Bwd, SparseRowMatchesFp64ReferenceOnSmallShapes) {
  ATTN_REQUIRE_GPU();
  const variant* v = find_variant("sparse", backend_kind::cuda);
  ASSERT_NE(v, nullptr);
  std::vector<problem> ps;
  for (const problem& p : case_problems())
    if (p.mask.kind == mask_kind::local || p.mask.global > 0 || p.mask.has_sparse()) ps.push_back(p);
  for (const std::int64_t bc : cuda::kBwdBcs) {
    if (subset) break;
    problem p = make_problem(1, 2, 1, 300, 300, 64, dtype::bf16, "local:40,0", cuda::kBwdBr, bc);
    p.pass = pass_kind::fwd_bwd;
    ps.push_back(p);
  }
  ASSERT_GE(ps.size(), subset ? 1u : 6u);
  int seed = 110;
  for (const problem& p : ps) expect_matches_fp64(*v, p, seed++);
}

// The deterministic row (waves of S key tiles, fp32 dQ slices, no atomics): within the same
// bound of fp64 on the bwd cases, and bit-identical dQ, dK, dV over three runs, each after the
// gradients were poisoned; with the row's own S (one wave on these shapes) and, with 2 or more
// key tiles, with S = 1 or 2 (two waves and the accumulator between them). (Under
// the emulator the atomic row is reproducible too, as CTAs run in order: there this checks
// the slices and the fixed-order sum; on a GPU it is the property the row exists for.)
TEST(CudaFlash2Bwd, DeterministicRowIsBitIdenticalAndMatchesFp64) {
  ATTN_REQUIRE_GPU();
  const variant* v = find_variant("flash2_bwd_deterministic", backend_kind::cuda);
  ASSERT_NE(v, nullptr);
  int seed = 90;
  for (problem p : case_problems())
    for (const bool waves : {false, true}) {
      p.pass = pass_kind::bwd;
      const std::int64_t n_kt = cuda::bwd_kv_tiles(p);
      if (waves && n_kt < 2) continue;
      const int slices = !waves ? 0 : n_kt >= 3 ? 2 : 1;  // 2 waves either way
      const std::string name = v->benchmark_name(p) + (waves ? fmt::format(" S={}", slices) : "");
      ASSERT_TRUE(v->supports(p).ok) << name << ": " << v->supports(p).reason;
      host_inputs in = make_inputs(p, static_cast<std::uint64_t>(seed));
      in.d_o = make_grad_output(p, static_cast<std::uint64_t>(seed + 1));
      ++seed;
      auto r =
          slices > 0 ? cuda::make_flash2_backward_runner(p, true, cuda::flash2_row::flash2, true, slices) : v->make(p);
      r->set_inputs(in);
      std::vector<host_outputs> runs;
      for (int k = 0; k < 3; ++k) {
        r->poison_outputs();
        r->run();
        sync_device();
        runs.push_back(r->get_outputs());
      }
      const reference_grads g = reference_softmax_backward(in, all_rows(p), every_kv_row(p));
      const double tol = std::min(grad_tolerance(p.type), fixed_bound(p.type));
      const double eq = rel_l2(runs[0].dq, g.dq), ek = rel_l2(runs[0].dk, g.dk), ev = rel_l2(runs[0].dv, g.dv);
      std::printf("%s: dQ %.3g dK %.3g dV %.3g (bound %.3g)\n", name.c_str(), eq, ek, ev, tol);
      EXPECT_LE(eq, tol) << name << " dQ";
      EXPECT_LE(ek, tol) << name << " dK";
      EXPECT_LE(ev, tol) << name << " dV";
      for (int k = 1; k < 3; ++k) {
        EXPECT_EQ(std::memcmp(runs[k].dq.data(), runs[0].dq.data(), runs[0].dq.size() * sizeof(float)), 0) << name;
        EXPECT_EQ(std::memcmp(runs[k].dk.data(), runs[0].dk.data(), runs[0].dk.size() * sizeof(float)), 0) << name;
        EXPECT_EQ(std::memcmp(runs[k].dv.data(), runs[0].dv.data(), runs[0].dv.size() * sizeof(float)), 0) << name;
      }
    }
}

TEST(CudaFlash2BwdHost, DeterministicRowClaimsBwdOnlyAndCountsItsSlices) {
  const variant* v = find_variant("flash2_bwd_deterministic", backend_kind::cuda);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->caps.passes, static_cast<unsigned>(pass_bwd));
  problem p = make_problem(1, 4, 2, 300, 200, 128, dtype::fp16, "causal", 64, 64);
  EXPECT_NE(v->supports(p).reason.find("not fwd"), std::string::npos) << v->supports(p).reason;
  p.pass = pass_kind::bwd;
  EXPECT_TRUE(v->supports(p).ok) << v->supports(p).reason;
  // Memory: one wave of S slices instead of the accumulator. S = min(key tiles, 2 SMs /
  // (B Hkv)): here the 4 key tiles of 200 keys on any device of 4 SMs or more.
  const std::int64_t sms = cuda::current_device_limits().sm_count;
  const std::int64_t S = cuda::bwd_dq_slices(p, static_cast<int>(sms), cuda::bwd_head_splits(p, static_cast<int>(sms)));
  ASSERT_GE(sms, 4);
  EXPECT_EQ(S, 4);
  const variant& atomic = flash2_row();
  EXPECT_EQ(v->memory_bytes(p) - atomic.memory_bytes(p), 4 * (S - 1) * p.q_elems());
  // Bytes: one wave: no accumulator to clear (4 d per row) nor to read in the conversion (4 d).
  EXPECT_DOUBLE_EQ(atomic.model(p).bytes - v->model(p).bytes, 8.0 * p.d * p.rows());
  EXPECT_DOUBLE_EQ(atomic.model(p).flops_executed, v->model(p).flops_executed);
  // Four waves of one key tile: the accumulator written, twice read and written, read: 24 d
  // per row against the atomic mode's 8 d.
  const int splits = cuda::bwd_head_splits(p, static_cast<int>(sms));
  EXPECT_EQ(splits, 2);  // 4 key tiles x 2 KV heads: the group of 2 split whole
  EXPECT_DOUBLE_EQ(model_flash2_backward_deterministic_cuda(p, 1, splits).bytes - atomic.model(p).bytes,
                   16.0 * p.d * p.rows());
  // The slice count: bounded by 2 CTAs per SM over B Hkv and the head splits, and by the key
  // tiles.
  problem big = make_problem(1, 16, 16, 32768, 32768, 128, dtype::bf16, "none", 64, 64);
  EXPECT_EQ(cuda::bwd_dq_slices(big, 132, 1), 17);  // ceil(264 / 16), not 512 key tiles
  big.Hkv = 1;
  EXPECT_EQ(cuda::bwd_dq_slices(big, 132, 1), 264);
  ASSERT_EQ(cuda::bwd_head_splits(big, 132), 4);    // 512 key tiles: 2048 CTAs >= 1056
  EXPECT_EQ(cuda::bwd_dq_slices(big, 132, 4), 66);  // a quarter of the memory
  // Several waves: S slices plus the accumulator against the atomic mode's accumulator.
  big.pass = pass_kind::bwd;
  const int bs = static_cast<int>(sms);
  const std::int64_t big_slices = cuda::bwd_dq_slices(big, bs, cuda::bwd_head_splits(big, bs));
  ASSERT_LT(big_slices, 512);
  EXPECT_EQ(v->memory_bytes(big) - atomic.memory_bytes(big), 4 * big_slices * big.q_elems());
  big.B = 512;
  EXPECT_EQ(cuda::bwd_dq_slices(big, 132, 1), 1);
}

TEST(CudaFlash2BwdHost, ClaimsBwdAndSkipsWhatItCannotRun) {
  const variant& v = flash2_row();
  EXPECT_EQ(v.caps.passes, static_cast<unsigned>(pass_all));
  problem p = make_problem(1, 2, 1, 128, 128, 64, dtype::bf16, "causal", 64, 64);
  p.pass = pass_kind::bwd;
  EXPECT_TRUE(v.supports(p).ok) << v.supports(p).reason;
  p.Bc = 128;  // the 8-warp tile, with its forward at 64 x 128
  EXPECT_TRUE(v.supports(p).ok) << v.supports(p).reason;
  p.d = 128;  // and at d 128 (its forward re-reads Q from shared memory)
  EXPECT_TRUE(v.supports(p).ok) << v.supports(p).reason;
  p.d = 64;
  p.Br = 128;
  EXPECT_NE(v.supports(p).reason.find("not Br x Bc = 128x128"), std::string::npos) << v.supports(p).reason;
  p.pass = pass_kind::fwd;  // the forward keeps every tile
  EXPECT_TRUE(v.supports(p).ok) << v.supports(p).reason;
  p.Br = 64;
  p.Bc = 64;
  p.pass = pass_kind::fwd_bwd;
  for (const char* m : {"local:16,0", "global:4", "causal+global:4"}) {
    problem q = make_problem(1, 2, 1, 128, 128, 64, dtype::bf16, m, 64, 64);
    q.pass = pass_kind::bwd;
    EXPECT_TRUE(v.supports(q).ok) << m << ": " << v.supports(q).reason;
  }
  // The sparse terms too (element-wise, as the forward's covering walk), but not at d = 128
  // with 64 x 128.
  problem q = make_problem(1, 2, 1, 128, 128, 64, dtype::bf16, "causal+strided:16,8", 64, 64);
  q.pass = pass_kind::bwd;
  EXPECT_TRUE(v.supports(q).ok) << v.supports(q).reason;
  q.Bc = 128;
  EXPECT_TRUE(v.supports(q).ok) << v.supports(q).reason;
  q.d = 128;
  EXPECT_NE(v.supports(q).reason.find("sparse mask terms at d=128 with the 64x64 tile only"), std::string::npos)
      << v.supports(q).reason;
  q.Bc = 64;
  EXPECT_TRUE(v.supports(q).ok) << v.supports(q).reason;
  q.Bc = 128;
  q.pass = pass_kind::fwd;  // control: the forward takes it
  EXPECT_TRUE(v.supports(q).ok) << v.supports(q).reason;
  p.type = dtype::fp32;
  EXPECT_FALSE(v.supports(p).ok);
}

// The model at a hand-counted shape: B 1, H 2, Hkv 1, Nq 100, Nkv 70, d 64, fp16, none.
// Query tiles 64 + 36 rows, key tiles 64 + 6 keys: every (query tile, key tile) visits.
TEST(CudaFlash2BwdHost, ModelWorkedExample) {
  problem p = make_problem(1, 2, 1, 100, 70, 64, dtype::fp16, "none", 64, 64);
  p.pass = pass_kind::bwd;
  const model_figures m = model_flash2_backward_cuda(p);
  const double d = 64, e = 2;
  const double per_head = 100 * (2 * d * e + 4 + 4 * d)        // preprocess
                          + 2 * 100 * (2 * d * e + 8 + 8 * d)  // 2 key tiles x 100 rows visit
                          + 100 * d * (4 + e);                 // convert
  const double per_kv_head = 4 * 70 * d * e;
  EXPECT_DOUBLE_EQ(m.bytes, 2 * per_head + per_kv_head);
  EXPECT_DOUBLE_EQ(m.flops_executed, 10 * d * 4 * 64 * 64 * 2);  // 4 tiles x 2 heads
  EXPECT_DOUBLE_EQ(m.exps, 100.0 * 70 * 2);
  EXPECT_DOUBLE_EQ(m.flops, 2.5 * model_flops_softmax(p));
  // Its group of 2 split over 2 CTAs (what the row does on this short grid): K and V read
  // twice, and per split the fp32 dK, dV part written and read back (16 d per key), then dK and
  // dV written by the reduce kernel.
  const double split_bytes = 2 * 70 * d * e + 2 * 16 * 70 * d;
  EXPECT_DOUBLE_EQ(model_flash2_backward_cuda(p, 2).bytes - m.bytes, split_bytes);
  EXPECT_DOUBLE_EQ(model_flash2_backward_cuda(p, 2).flops_executed, m.flops_executed);
  // The row: bwd is the backward's model, fwd_bwd adds the forward's.
  const variant& v = flash2_row();
  ASSERT_EQ(cuda::bwd_head_splits(p, cuda::current_device_limits().sm_count), 2);
  EXPECT_DOUBLE_EQ(v.model(p).bytes, m.bytes + split_bytes);
  problem f = p;
  f.pass = pass_kind::fwd;
  p.pass = pass_kind::fwd_bwd;
  EXPECT_DOUBLE_EQ(v.model(p).bytes, m.bytes + split_bytes + v.model(f).bytes);
  // At 64 x 128 one key tile holds all 70 keys: each query row visits once, and the two
  // query tiles compute 64 x 128 pairs each.
  problem w = p;
  w.pass = pass_kind::bwd;
  w.Bc = 128;
  const double per_head_128 = per_head - 100 * (2 * d * e + 8 + 8 * d);
  EXPECT_DOUBLE_EQ(model_flash2_backward_cuda(w).bytes, 2 * per_head_128 + per_kv_head);
  EXPECT_DOUBLE_EQ(model_flash2_backward_cuda(w).flops_executed, 10 * d * 2 * 64 * 128 * 2);
  // Causal halves the visits: the key tile 1 (keys 64..69) is seen by query tile 1 only.
  problem c = make_problem(1, 1, 1, 128, 128, 64, dtype::fp16, "causal", 64, 64);
  c.pass = pass_kind::bwd;
  EXPECT_DOUBLE_EQ(model_flash2_backward_cuda(c).flops_executed, 10 * d * 3 * 64 * 64);
}

// The sparse row's backward visits its forward's lists transposed: at Nq = Nkv = 256, local:20,0,
// 64 x 64 tiles, key tile kt is seen by rows 64 kt .. 64 kt + 83, query tiles kt and kt + 1: 7
// visits, against flash2's 16 (a window has no causal bound, so flash2 visits every tile).
TEST(CudaFlash2BwdHost, SparseRowVisitsTheTransposedLists) {
  const variant* v = find_variant("sparse", backend_kind::cuda);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->caps.passes, static_cast<unsigned>(pass_all));
  problem p = make_problem(1, 2, 1, 256, 256, 64, dtype::fp16, "local:20,0", 64, 64);
  p.pass = pass_kind::bwd;
  ASSERT_TRUE(v->supports(p).ok) << v->supports(p).reason;
  const double d = 64;
  EXPECT_DOUBLE_EQ(v->model(p).flops_executed, 10 * d * 7 * 64 * 64 * 2);
  EXPECT_DOUBLE_EQ(flash2_row().model(p).flops_executed, 10 * d * 16 * 64 * 64 * 2);
  // Bytes differ by the 9 visits' Q, dO, lse, D and dQ accumulator rows, per head.
  EXPECT_DOUBLE_EQ(flash2_row().model(p).bytes - v->model(p).bytes, 2 * 9 * 64 * (2 * d * 2 + 8 + 8 * d));
  EXPECT_DOUBLE_EQ(v->model(p).exps, 7 * 64 * 64 * 2);  // the real pairs of the visited tiles
  // Memory: flash2's plus the lists (4 key tiles: counts and 4 x 4 indices).
  EXPECT_EQ(v->memory_bytes(p) - flash2_row().memory_bytes(p), 4 * 4 * (1 + 4));
  // A mask without local or global sparsity stays flash2's, for the backward too.
  problem c = make_problem(1, 2, 1, 256, 256, 64, dtype::fp16, "causal", 64, 64);
  c.pass = pass_kind::bwd;
  EXPECT_NE(v->supports(c).reason.find("flash2 covers it"), std::string::npos) << v->supports(c).reason;
}

// The head splits: the smallest divisor of the group giving 4 CTAs per slot (2 per SM at 64 x 64,
// 1 at 64 x 128), at most the group.
// At d 128 and 64 x 64 the interval masks run an instantiation without the sparse row's lists
// and sparse terms (a visit's queries at once); every other tile has one kernel for all.
TEST(CudaFlash2BwdHost, DenseInstanceServesIntervalMasksOnly) {
  for (const dtype t : {dtype::bf16, dtype::fp16}) {
    EXPECT_NE(cuda::find_flash2_bwd_kernel(128, 64, t, false), nullptr);
    EXPECT_NE(cuda::find_flash2_bwd_kernel(128, 64, t, false), cuda::find_flash2_bwd_kernel(128, 64, t, true));
    for (const auto& [d, bc] : {std::pair{64, 64}, {64, 128}, {128, 128}})
      EXPECT_EQ(cuda::find_flash2_bwd_kernel(d, bc, t, false), cuda::find_flash2_bwd_kernel(d, bc, t, true));
  }
  EXPECT_EQ(cuda::find_flash2_bwd_kernel(256, 64, dtype::bf16, false), nullptr);
}

TEST(CudaFlash2BwdHost, HeadSplitsFillTheDevice) {
  problem p = make_problem(1, 16, 2, 8192, 8192, 128, dtype::bf16, "causal", 64, 64);
  EXPECT_EQ(cuda::bwd_head_splits(p, 132), 8);  // 256 CTAs; 4 splits give 1024 < 1056
  p.Bc = 128;
  EXPECT_EQ(cuda::bwd_head_splits(p, 132), 8);  // 128 CTAs; 4 splits give 512 < 528
  p.Bc = 64;
  p.Hkv = 16;
  EXPECT_EQ(cuda::bwd_head_splits(p, 132), 1);  // no group
  p = make_problem(1, 32, 8, 8192, 8192, 128, dtype::bf16, "causal", 64, 64);
  EXPECT_EQ(cuda::bwd_head_splits(p, 132), 2);  // 1024 CTAs, 2048 with 2
  p.B = 2;
  EXPECT_EQ(cuda::bwd_head_splits(p, 132), 1);  // 2048 CTAs
  p = make_problem(1, 12, 2, 1024, 1024, 64, dtype::bf16, "none", 64, 64);
  EXPECT_EQ(cuda::bwd_head_splits(p, 132), 6);  // a group of 6: 2 and 3 are too few, 4 and 5 do not divide it
}

TEST(CudaFlash2BwdHost, MemoryCountsTheAccumulatorAndD) {
  const variant& v = flash2_row();
  problem p = make_problem(1, 4, 2, 256, 512, 128, dtype::bf16, "causal", 64, 64);
  problem f = p;
  p.pass = pass_kind::bwd;
  const std::int64_t grads = 2 * (2 * p.q_elems() + 2 * p.kv_elems());  // dO, dQ, dK, dV in bf16
  // 8 key tiles x 2 KV heads: the group of 2 split whole, fp32 dK and dV parts of each split
  ASSERT_EQ(cuda::bwd_head_splits(p, cuda::current_device_limits().sm_count), 2);
  const std::int64_t parts = 2 * 2 * p.kv_elems();
  EXPECT_EQ(v.memory_bytes(p), v.memory_bytes(f) + grads + 4 * (p.rows() + p.q_elems() + parts));
}

}  // namespace
}  // namespace attnbench::testing

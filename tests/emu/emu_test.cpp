// Result check of the flash2 CUDA kernels without a GPU: every shipped
// instantiation (kernels/cuda/flash2/flash2_{fwd,splitkv}_*.cu, compiled with
// g++ against the PTX twins of emu_ptx.hpp) is run by the host emulator on a
// case set and EVERY row of O and lse is compared with the fp64 reference
// (kernels/reference). The split-KV partials are merged by the real merge
// kernel (flash2_splitkv_merge.cu). See tests/emu/README.md.
//
//   attnbench_emu_flash2 [main|decode|all|CASE-NAME]   run cases; exit 1 on any failure
//   attnbench_emu_flash2 --faults                        inject each emu::fault into a few
//                                                        cases; exit 1 unless every one is caught
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/mask.hpp"
#include "kernels/cuda/flash2/flash2_plan.hpp"
#include "harness/tensors.hpp"
#include "kernels/cuda/flash2/flash2_params.hpp"
#include "kernels/reference/attention_reference.hpp"
#include "tests/emu/emu_control.hpp"
#include "tests/emu/emu_rows_check.hpp"

namespace attnbench {
namespace {

enum class kind { flash2, sparse, packed, splitkv };  // as cuda::flash2_row

struct test_case {
  const char* name;
  const char* group;  // "main" or "decode" (one ctest test each)
  std::int64_t B, H, Hkv, Nq, Nkv, d;
  dtype type;
  const char* mask;
  std::int64_t Br, Bc;  // ignored for splitkv (16 x 64)
  kind k;
  int splits = 1;  // splitkv only
  bool early_copy = false;
};

// Small enough for well under a minute on 2 cores (each CUDA thread is a
// fiber; every warp instruction is a scheduling point), covering every
// instantiation.
const test_case kCases[] = {
    // name, group, B, H, Hkv, Nq, Nkv, d, type, mask, Br, Bc, kind, splits, early
    {"d64_fp16_64x64_causal_gqa2_ragged", "main", 1, 2, 1, 70, 133, 64, dtype::fp16, "causal", 64, 64, kind::flash2},
    {"d64_bf16_64x64_none_B2", "main", 2, 1, 1, 65, 70, 64, dtype::bf16, "none", 64, 64, kind::flash2, 1, true},
    {"d64_fp16_128x64_local_global", "main", 1, 1, 1, 130, 200, 64, dtype::fp16, "local:20,5+global:3", 128, 64,
     kind::flash2},
    {"d64_bf16_128x64_causal", "main", 1, 1, 1, 129, 129, 64, dtype::bf16, "causal", 128, 64, kind::flash2},
    {"d64_bf16_128x128_local_early", "main", 1, 1, 1, 129, 300, 64, dtype::bf16, "local:30,10", 128, 128, kind::flash2,
     1, true},
    {"d64_fp16_128x128_none", "main", 1, 1, 1, 100, 140, 64, dtype::fp16, "none", 128, 128, kind::flash2},
    {"d128_bf16_64x64_causal_B2", "main", 2, 2, 2, 65, 130, 128, dtype::bf16, "causal", 64, 64, kind::flash2, 1, true},
    {"d128_fp16_64x64_none", "main", 1, 1, 1, 40, 90, 128, dtype::fp16, "none", 64, 64, kind::flash2},
    {"d128_bf16_128x64_sparse_NqgtNkv", "main", 1, 1, 1, 150, 100, 128, dtype::bf16, "local:20,5+global:3", 128, 64,
     kind::sparse},
    {"d128_fp16_128x64_causal", "main", 1, 1, 1, 130, 150, 128, dtype::fp16, "causal", 128, 64, kind::flash2},
    {"d128_bf16_128x128_none_qreread", "main", 1, 1, 1, 130, 200, 128, dtype::bf16, "none", 128, 128, kind::flash2},
    {"d128_fp16_128x128_Nq1_Nkv1", "main", 1, 1, 1, 1, 1, 128, dtype::fp16, "none", 128, 128, kind::flash2},
    {"d128_fp16_128x32_causal", "main", 1, 1, 1, 130, 100, 128, dtype::fp16, "causal", 128, 32, kind::flash2},
    {"d128_bf16_128x32_local", "main", 1, 1, 1, 128, 160, 128, dtype::bf16, "local:40,0", 128, 32, kind::flash2},
    {"d64_fp16_64x64_causal_masked_rows_empty_cta", "main", 1, 1, 1, 150, 20, 64, dtype::fp16, "causal", 64, 64,
     kind::flash2},
    // Sparse mask terms: the sparse row walks the runner's key-tile lists; flash2 masks them element-wise.
    {"d64_fp16_64x64_sparse_causal_strided_gqa2", "main", 1, 2, 1, 130, 200, 64, dtype::fp16, "causal+strided:8,37", 64,
     64, kind::sparse},
    {"d64_bf16_128x64_sparse_local_random_global", "main", 1, 1, 1, 150, 260, 64, dtype::bf16,
     "local:10,10+global:3+random:32,2,5", 128, 64, kind::sparse},
    {"d128_fp16_128x128_sparse_strided", "main", 1, 1, 1, 140, 300, 128, dtype::fp16, "strided:4,50", 128, 128,
     kind::sparse},
    {"d128_bf16_64x64_flash2_causal_random", "main", 1, 1, 1, 100, 180, 128, dtype::bf16, "causal+random:48,2", 64, 64,
     kind::flash2},
    {"d64_bf16_64x64_sparse_two_spans", "main", 1, 2, 2, 300, 300, 64, dtype::bf16, "local:30,0+global:10", 64, 64,
     kind::sparse},
    {"d64_bf16_64x64_packed_g3_causal", "main", 1, 6, 2, 50, 90, 64, dtype::bf16, "causal", 64, 64, kind::packed},
    {"d64_fp16_128x64_packed_g4_local_global", "main", 1, 4, 1, 40, 260, 64, dtype::fp16, "local:5,17+global:2", 128,
     64, kind::packed},
    {"d128_bf16_64x64_packed_g8_none", "main", 1, 8, 1, 10, 100, 128, dtype::bf16, "none", 64, 64, kind::packed},
    {"decode_d128_bf16_g4_causal_16splits_empty", "decode", 1, 8, 2, 3, 700, 128, dtype::bf16, "causal", 0, 0,
     kind::splitkv, 16},
    {"decode_d64_fp16_mqa_g8_local_8splits", "decode", 1, 8, 1, 1, 300, 64, dtype::fp16, "local:40,0", 0, 0,
     kind::splitkv, 8},
    {"decode_d128_fp16_g4_Nq16_causal_global_3splits", "decode", 1, 4, 1, 16, 200, 128, dtype::fp16, "causal+global:2",
     0, 0, kind::splitkv, 3},
    {"decode_d64_bf16_two_spans_5splits", "decode", 1, 4, 2, 16, 900, 64, dtype::bf16, "local:100,0+global:2", 0, 0,
     kind::splitkv, 5},
    {"decode_d128_bf16_mqa_g32_2splits", "decode", 1, 32, 1, 2, 150, 128, dtype::bf16, "causal", 0, 0, kind::splitkv,
     2},
    {"decode_d64_fp16_causal_masked_rows_4splits", "decode", 1, 2, 2, 16, 10, 64, dtype::fp16, "causal", 0, 0,
     kind::splitkv, 4},
    {"decode_d64_bf16_g3_1split", "decode", 1, 3, 1, 5, 170, 64, dtype::bf16, "none", 0, 0, kind::splitkv, 1},
};

// Fixed bounds (no cuBLAS baseline here): about 4x the rms relative error of
// rounding O and P to the dtype, as tests/gpu uses; a single row may reach 4x.
double bound(dtype t) { return t == dtype::bf16 ? 1.6e-2 : 2.0e-3; }
constexpr double kLseBound = 2e-3;

// Faults of the sparse plumbing, planted in what the test hands the
// kernel: the runner's key-tile list loses the last tile of every query tile,
// or the kernel is given the mask without its sparse terms (its element bits
// ignore strided / random / layout).
enum class plumbing_fault { none, drop_listed_tile, kernel_ignores_sparse };

struct outcome {
  bool ok = false;
  std::string detail;
};

outcome run_case(const test_case& c, bool quiet = false, plumbing_fault pf = plumbing_fault::none) {
  problem p;
  p.B = c.B, p.H = c.H, p.Hkv = c.Hkv, p.Nq = c.Nq, p.Nkv = c.Nkv, p.d = c.d, p.type = c.type;
  p.mask = parse_mask(c.mask);
  p.Br = c.Br;
  p.Bc = c.Bc;
  const auto row = static_cast<cuda::flash2_row>(c.k);  // same order as cuda::flash2_row
  if (row == cuda::flash2_row::splitkv) p = cuda::decode_geometry(p);
  validate(p);
  const host_inputs in = make_inputs(p, 1234);

  // The runner's own plan (flash2_runner.cpp): pack, tile walk, geometry; the
  // split count is the case's (1-16, empty splits included).
  const cuda::flash2_plan plan = cuda::plan_for(row, p, 132);
  cuda::flash2_params prm;
  prm.p = plan.geometry;
  prm.pack = plan.pack;
  prm.walk = plan.walk;
  kv_tile_list tile_list =
      cuda::plan_uses_tile_list(plan) ? make_kv_tile_list(plan.geometry, tile_walk::visible) : kv_tile_list{};
  if (pf == plumbing_fault::drop_listed_tile)
    for (auto& n : tile_list.num) n = n > 0 ? n - 1 : 0;
  if (pf == plumbing_fault::kernel_ignores_sparse) prm.p.mask.sparse = nullptr;
  if (cuda::plan_uses_tile_list(plan)) prm.tiles = tile_list.view();
  prm.splits = row == cuda::flash2_row::splitkv ? c.splits : 1;
  prm.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(p.d)));
  prm.scale_log2 = static_cast<float>(1.0 / std::sqrt(static_cast<double>(p.d)) * M_LOG2E);
  const cuda::flash2_config* cfg = cuda::flash2_config_for(row, p);
  if (!cfg) return {false, "no instantiation"};

  std::vector<std::uint16_t> q = emu_rows::to_bits(p.type, in.q), k = emu_rows::to_bits(p.type, in.k),
                             v = emu_rows::to_bits(p.type, in.v);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<std::uint16_t> o(static_cast<std::size_t>(p.rows() * p.d), 0xFFFF);  // NaN poison
  std::vector<float> lse(p.rows(), nan);
  std::vector<float> o_part(static_cast<std::size_t>(prm.splits) * p.rows() * p.d, nan);
  std::vector<float> lse_part(static_cast<std::size_t>(prm.splits) * p.rows(), nan);
  prm.q = q.data(), prm.k = k.data(), prm.v = v.data(), prm.o = o.data(), prm.lse = lse.data();
  prm.o_part = o_part.data(), prm.lse_part = lse_part.data();
  emu::set_readable({{q.data(), q.size() * 2}, {k.data(), k.size() * 2}, {v.data(), v.size() * 2}});
  emu::config().early_copy = c.early_copy;
  emu::reset_errors();
  const auto t0 = std::chrono::steady_clock::now();
  std::string launch_error;
  try {
    cfg->launch(prm, nullptr);
    // The real merge kernel (kernels/cuda/flash2/flash2_splitkv_merge.cu),
    // launched as flash2_runner.cpp does: it reads the partials the
    // emulated split kernel wrote.
    if (prm.splits > 1) cuda::launch_splitkv_merge(prm, nullptr);
  } catch (const std::exception& e) {
    launch_error = e.what();
  }
  const long emu_errors = emu::errors() + (launch_error.empty() ? 0 : 1);

  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // Every row against fp64.
  const emu_rows::rows_check rc = emu_rows::check_rows(p, o, lse, reference_softmax(in, all_rows(p)));
  const auto [rel_l2, worst_row_rel, lse_err, nonfinite, masked, masked_bad, worst_row, first_bad] = rc;
  const double b = bound(p.type);
  const bool ok = emu_errors == 0 && nonfinite == 0 && masked_bad == 0 && std::isfinite(rel_l2) && rel_l2 <= b &&
                  worst_row_rel <= 4 * b && lse_err <= kLseBound;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "%-4s %-48s %s grid rows=%lld splits=%d | rel_l2 %.3g (<= %.3g) worst row %lld: %.3g | max|dlse| "
                "%.3g | nonfinite %lld, masked rows %lld (bad %lld), first bad row %lld, emu errors %ld | %.1f s",
                ok ? "OK" : "FAIL", c.name, cfg->name, static_cast<long long>(p.rows()), prm.splits, rel_l2, b,
                static_cast<long long>(worst_row), worst_row_rel, lse_err, static_cast<long long>(nonfinite),
                static_cast<long long>(masked), static_cast<long long>(masked_bad), static_cast<long long>(first_bad),
                emu_errors, secs);
  if (!quiet) std::printf("%s\n", buf), std::fflush(stdout);
  if (!launch_error.empty() && !quiet) std::printf("     launch failed: %s\n", launch_error.c_str());
  return {ok, buf};
}

// Each injected fault must make at least one of its cases fail.
int run_faults() {
  struct probe {
    emu::fault f;
    std::vector<const char*> cases;
  };
  const probe probes[] = {
      {emu::fault::ldmatrix_swap_mid, {"d64_fp16_64x64_causal_gqa2_ragged"}},
      {emu::fault::drop_trans, {"d64_fp16_64x64_causal_gqa2_ragged"}},
      {emu::fault::wait_one_less, {"d64_fp16_64x64_causal_gqa2_ragged", "d128_bf16_64x64_causal_B2"}},
      // Zero fill matters where a ragged tile lands in a stage no earlier
      // tile filled (Nkv = 90: tile 1 in stage 1 meets the NaN poison, and
      // P = 0 times NaN is NaN); over stale finite K/V the mask hides it.
      {emu::fault::no_zero_fill, {"d64_fp16_64x64_causal_gqa2_ragged", "d128_fp16_64x64_none"}},
  };
  int missed = 0;
  for (const probe& pr : probes) {
    bool caught = false;
    for (const char* name : pr.cases)
      for (const test_case& c : kCases)
        if (name == std::string(c.name)) {
          emu::config().inject = pr.f;
          const outcome o = run_case(c, true);
          emu::config().inject = emu::fault::none;
          std::printf("fault %-18s on %-40s -> %s\n", emu::to_string(pr.f), c.name, o.ok ? "NOT detected" : "detected");
          caught |= !o.ok;
        }
    missed += !caught;
  }
  const struct {
    plumbing_fault f;
    const char* label;
    std::vector<const char*> cases;
  } plumbing[] = {
      {plumbing_fault::drop_listed_tile,
       "drop_listed_tile",
       {"d64_bf16_128x64_sparse_local_random_global", "d128_fp16_128x128_sparse_strided"}},
      {plumbing_fault::kernel_ignores_sparse,
       "kernel_ignores_sparse",
       {"d64_fp16_64x64_sparse_causal_strided_gqa2", "d128_bf16_64x64_flash2_causal_random"}},
  };
  for (const auto& pr : plumbing)
    for (const char* name : pr.cases)
      for (const test_case& c : kCases)
        if (name == std::string(c.name)) {
          const bool caught = !run_case(c, true, pr.f).ok;
          std::printf("fault %-18s on %-40s -> %s\n", pr.label, c.name, caught ? "detected" : "NOT detected");
          missed += !caught;
        }
  // And the same cases pass without a fault (the failures above are the faults').
  for (const test_case& c : kCases) {
    const std::string n = c.name;
    if ((n == "d64_fp16_64x64_causal_gqa2_ragged" || n.find("sparse") != std::string::npos ||
         n.find("random") != std::string::npos) &&
        !run_case(c, true).ok)
      ++missed, std::printf("case %s fails without a fault\n", c.name);
  }
  std::printf("%s: %d fault(s) not detected\n", missed ? "FAIL" : "OK", missed);
  return missed ? 1 : 0;
}

}  // namespace
}  // namespace attnbench

int main(int argc, char** argv) {
  using namespace attnbench;
  const std::string sel = argc > 1 ? argv[1] : "all";
  try {
    if (sel == "--faults") return run_faults();
    int failed = 0, ran = 0;
    for (const test_case& c : kCases)
      if (sel == "all" || sel == c.group || sel == c.name) {
        ++ran;
        failed += !run_case(c).ok;
      }
    if (ran == 0) {
      std::fprintf(stderr, "no case matches '%s'\n", sel.c_str());
      return 2;
    }
    std::printf("%d of %d case(s) failed\n", failed, ran);
    return failed ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}

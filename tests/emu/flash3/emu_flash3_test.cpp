// Result check of the flash3 (sm_90a) kernels without a GPU: every shipped
// instantiation (kernels/cuda/flash3/flash3_fwd_*.cu, compiled with g++
// against the Hopper twins of tests/emu/include/attn_emu_hopper_ptx.hpp:
// TMA with the tensor map's swizzle, mbarrier phases, wgmma from the shared
// memory descriptors, named barriers, setmaxnreg) is run by the host emulator
// with the runner's own plan and tensor maps (flash3_plan.cpp), and EVERY row
// of O and lse is compared with the fp64 reference (kernels/reference), with
// the fixed fp16/bf16 bound of tests/gpu/tolerance.hpp.
//
// e4m3 (flash3_fp8) instantiations get Q, K, V of different magnitudes (x4,
// x1/4, x2: distinct per-tensor scales, so a descale applied to the wrong
// tensor shows), quantized per tensor (core/fp8.hpp), and are checked against
// two fp64 references: on the quantized inputs (the kernel's own error, bound
// u = 2^-4) and on the unquantized fp32 inputs (end to end, bound 2u).
//
//   attnbench_emu_flash3 [main|CASE-NAME|SUBSTRING]   run cases; exit 1 on any failure
//   attnbench_emu_flash3 --faults           inject each flash3_fault; exit 1 unless every one is caught
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/fp8.hpp"
#include "core/mask.hpp"
#include "harness/tensors.hpp"
#include "kernels/cuda/flash3/flash3_plan.hpp"
#include "kernels/reference/attention_reference.hpp"
#include "tests/emu/emu_control.hpp"
#include "tests/emu/emu_rows_check.hpp"
#include "tests/gpu/tolerance.hpp"

namespace attnbench {
namespace {

struct shape_case {
  const char* name;
  std::int64_t B, H, Hkv, Nq, Nkv;
  const char* mask;
};
struct test_case {
  std::string name;  // "<instantiation>/<shape>"
  std::int64_t B, H, Hkv, Nq, Nkv, d;
  dtype type;
  const char* mask;
};

// Small: a CTA is 384 fibers (3 warpgroups). Each shape runs on every
// instantiation (d 64/128 x bf16/fp16): ragged tiles, causal with Nq > Nkv
// (rows and a whole CTA without keys), local + global, GQA packing (G = 4 with
// 32 queries per tile, G = 3 with 2 zeroed pad rows, G = 8 at Nq = 1), Nq = 1
// and Nkv = 1, and more key tiles than ring stages (the phases wrap).
const shape_case kShapes[] = {
    {"ragged_none_B2", 2, 1, 1, 130, 200, "none"},
    {"causal_NqgtNkv", 1, 1, 1, 150, 100, "causal"},
    {"causal_NqgtNkv_empty_cta", 1, 2, 2, 300, 20, "causal"},
    {"local_global", 1, 1, 1, 129, 300, "local:40,10+global:3"},
    {"gqa3_pad_rows_local", 1, 6, 2, 50, 140, "local:30,5"},
    {"gqa4_causal", 1, 4, 1, 40, 150, "causal"},
    {"Nq1_gqa8", 1, 8, 1, 1, 300, "causal"},
    {"Nq1_Nkv1", 1, 1, 1, 1, 1, "none"},
    {"ring_wrap_local_global", 1, 1, 1, 70, 700, "local:300,40+global:5"},
    {"ring_wrap_none", 1, 1, 1, 64, 530, "none"},
};

std::vector<test_case> all_cases() {
  std::vector<test_case> cases;
  int n = 0;
  const cuda::flash3_config* cfg = cuda::flash3_configs(&n);
  for (int i = 0; i < n; ++i)
    for (const shape_case& s : kShapes)
      cases.push_back(
          {std::string(cfg[i].name) + "/" + s.name, s.B, s.H, s.Hkv, s.Nq, s.Nkv, cfg[i].d, cfg[i].type, s.mask});
  return cases;
}

constexpr double kLseBound = 2e-3;
// e4m3: the lse of the quantized inputs moves with P's rounding only through
// l (summed unrounded) and m: fp32-level; against the unquantized inputs the
// scores themselves change by up to ~2u |s|.
constexpr double kLseBoundFp8 = 2e-3, kLseBoundFp8E2e = 0.25;

// fp8 inputs: the fp32 draws of make_inputs scaled per tensor, the originals
// kept, then quantized per tensor (value = e4m3 code x scale).
struct fp8_inputs {
  host_inputs original, quantized;
  std::vector<std::uint8_t> q, k, v;  // codes
};
fp8_inputs make_fp8_inputs(const problem& p) {
  problem p32 = p;
  p32.type = dtype::fp32;
  fp8_inputs f{make_inputs(p32, 1234), {}, {}, {}, {}};
  f.original.p = p;
  const float gain[3] = {4.f, 0.25f, 2.f};
  std::vector<float>* t[3] = {&f.original.q, &f.original.k, &f.original.v};
  for (int i = 0; i < 3; ++i)
    for (float& x : *t[i]) x *= gain[i];
  f.quantized = f.original;
  float* sc[3] = {&f.quantized.scales.q, &f.quantized.scales.k, &f.quantized.scales.v};
  std::vector<float>* qt[3] = {&f.quantized.q, &f.quantized.k, &f.quantized.v};
  std::vector<std::uint8_t>* codes[3] = {&f.q, &f.k, &f.v};
  for (int i = 0; i < 3; ++i) {
    *sc[i] = quantize_e4m3(*qt[i]);           // the harness's per-tensor quantization
    *codes[i] = e4m3_encode(*qt[i], *sc[i]);  // exact: each value is code x scale
  }
  return f;
}

struct outcome {
  bool ok = false;
  std::string detail;
};

outcome run_case(const test_case& c, cuda::flash3_fault fault = cuda::flash3_fault::none, bool quiet = false) {
  problem p;
  p.B = c.B, p.H = c.H, p.Hkv = c.Hkv, p.Nq = c.Nq, p.Nkv = c.Nkv, p.d = c.d, p.type = c.type;
  p.mask = parse_mask(c.mask);
  p = cuda::flash3_resolve(p);
  validate(p);
  const bool fp8 = p.type == dtype::e4m3;
  fp8_inputs f8;
  if (fp8) f8 = make_fp8_inputs(p);
  const host_inputs in = fp8 ? f8.quantized : make_inputs(p, 1234);
  const cuda::flash3_config* cfg = cuda::find_flash3_config(static_cast<int>(p.d), p.type);
  if (!cfg) return {false, "no instantiation"};

  // Device-side tensors as raw bytes: 16-bit values, or e4m3 codes.
  auto bytes_of = [&](const std::vector<float>& x, const std::vector<std::uint8_t>& codes) {
    if (fp8) return codes;
    const std::vector<std::uint16_t> u = emu_rows::to_bits(p.type, x);
    std::vector<std::uint8_t> b(u.size() * 2);
    std::memcpy(b.data(), u.data(), b.size());
    return b;
  };
  const std::vector<std::uint8_t> q = bytes_of(in.q, f8.q), k = bytes_of(in.k, f8.k), v = bytes_of(in.v, f8.v);
  std::vector<std::uint16_t> o(static_cast<std::size_t>(p.rows() * p.d), 0xFFFF);  // NaN poison
  std::vector<float> lse(p.rows(), std::numeric_limits<float>::quiet_NaN());

  // The runner's parameters (flash3_runner.cpp): plan, scale, descales, tensor maps.
  std::string launch_error;
  cuda::flash3_params prm = cuda::make_flash3_params(p, in.scales);
  prm.o = o.data();
  prm.lse = lse.data();
  prm.fault = fault;
  emu::set_readable({{q.data(), q.size()}, {k.data(), k.size()}, {v.data(), v.size()}});
  emu::reset_errors();
  const auto t0 = std::chrono::steady_clock::now();
  try {
    cuda::encode_flash3_maps(prm, q.data(), k.data(), v.data());
    cfg->launch(prm, nullptr);
  } catch (const std::exception& e) {
    launch_error = e.what();
  }
  const long emu_errors = emu::errors() + (launch_error.empty() ? 0 : 1);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  const emu_rows::rows_check rc = emu_rows::check_rows(p, o, lse, reference_softmax(in, all_rows(p)));
  const auto [rel_l2, worst_row_rel, lse_err, nonfinite, masked, masked_bad, worst_row, first_bad] = rc;
  const double b = testing::fixed_bound(p.type);
  bool ok = emu_errors == 0 && nonfinite == 0 && masked_bad == 0 && std::isfinite(rel_l2) && rel_l2 <= b &&
            worst_row_rel <= 4 * b && lse_err <= (fp8 ? kLseBoundFp8 : kLseBound);
  std::string e2e;
  if (fp8) {  // the same output against the reference on the unquantized inputs
    const emu_rows::rows_check re = emu_rows::check_rows(p, o, lse, reference_softmax(f8.original, all_rows(p)));
    ok = ok && std::isfinite(re.rel_l2) && re.rel_l2 <= testing::fp8_e2e_bound && re.lse_err <= kLseBoundFp8E2e;
    char eb[160];
    std::snprintf(eb, sizeof eb, " | e2e rel_l2 %.3g (<= %.3g) max|dlse| %.3g | scales q %.3g k %.3g v %.3g", re.rel_l2,
                  testing::fp8_e2e_bound, re.lse_err, in.scales.q, in.scales.k, in.scales.v);
    e2e = eb;
  }
  char buf[800];
  std::snprintf(buf, sizeof buf,
                "%-4s %-60s pack=%d rows/tile=%lld | rel_l2 %.3g (<= %.3g) worst row %lld: %.3g | max|dlse| %.3g "
                "| nonfinite %lld, masked rows %lld (bad %lld), first bad row %lld, emu errors %ld%s | %.1f s",
                ok ? "OK" : "FAIL", c.name.c_str(), prm.pack, static_cast<long long>(prm.p.Br), rel_l2, b,
                static_cast<long long>(worst_row), worst_row_rel, lse_err, static_cast<long long>(nonfinite),
                static_cast<long long>(masked), static_cast<long long>(masked_bad), static_cast<long long>(first_bad),
                emu_errors, e2e.c_str(), secs);
  if (!quiet) {
    std::printf("%s\n", buf);
    if (!launch_error.empty()) std::printf("     launch failed: %s\n", launch_error.c_str());
    std::fflush(stdout);
  }
  return {ok, buf};
}

const test_case* find_case(const std::vector<test_case>& cases, const std::string& name) {
  for (const test_case& c : cases)
    if (name == c.name) return &c;
  return nullptr;
}

// Each injected fault must make its case fail; the same cases pass without it.
int run_faults() {
  struct probe {
    cuda::flash3_fault f;
    const char* label;
    const char* case_name;
  };
  const probe probes[] = {
      {cuda::flash3_fault::wrong_swizzle, "wrong_swizzle", "flash3_fwd_hdim64_bf16_br128_bc128/ragged_none_B2"},
      {cuda::flash3_fault::missing_expect_tx, "missing_expect_tx",
       "flash3_fwd_hdim128_fp16_br128_bc128/ring_wrap_none"},
      {cuda::flash3_fault::wrong_phase, "wrong_phase", "flash3_fwd_hdim64_fp16_br128_bc128/ring_wrap_local_global"},
      {cuda::flash3_fault::missing_wait_group, "missing_wait_group",
       "flash3_fwd_hdim128_bf16_br128_bc128/ring_wrap_none"},
      // The only generic-proxy writes wgmma reads are Q's pad rows (G = 3).
      {cuda::flash3_fault::missing_fence, "missing_fence", "flash3_fwd_hdim64_bf16_br128_bc128/gqa3_pad_rows_local"},
      // fp8: the V^T ring, the key order P and V^T share, the descales.
      {cuda::flash3_fault::missing_v_transpose, "missing_v_transpose",
       "flash3_fwd_hdim128_e4m3_br128_bc128/ring_wrap_none"},
      {cuda::flash3_fault::unpermuted_v_transpose, "unpermuted_v_transpose",
       "flash3_fwd_hdim64_e4m3_br128_bc128/ragged_none_B2"},
      {cuda::flash3_fault::wrong_descale, "wrong_descale", "flash3_fwd_hdim256_e4m3_br128_bc64/local_global"},
      {cuda::flash3_fault::wrong_swizzle, "wrong_swizzle (fp8, 64B)", "flash3_fwd_hdim64_e4m3_br128_bc128/gqa4_causal"},
      // Not probed on fp8: the transposer's own fence.proxy.async would publish the pad rows
      // too, since the emulator's fence publishes every thread's generic writes (the ISA:
      // only the fencing thread's; attn_emu_hopper_ptx.hpp).
  };
  const std::vector<test_case> cases = all_cases();
  int missed = 0;
  for (const probe& pr : probes) {
    const test_case* c = find_case(cases, pr.case_name);
    if (!c) {
      std::printf("fault %s: no case %s\n", pr.label, pr.case_name);
      ++missed;
      continue;
    }
    const outcome bad = run_case(*c, pr.f, true);
    const outcome good = run_case(*c, cuda::flash3_fault::none, true);
    std::printf("fault %-20s on %-58s -> %s; without it: %s\n", pr.label, c->name.c_str(),
                bad.ok ? "NOT detected" : "detected", good.ok ? "passes" : "FAILS");
    if (!bad.ok) std::printf("     %s\n", bad.detail.c_str());
    missed += bad.ok || !good.ok;
  }
  std::printf("%s: %d fault(s) not detected (or their case failing without the fault)\n", missed ? "FAIL" : "OK",
              missed);
  return missed ? 1 : 0;
}

}  // namespace
}  // namespace attnbench

int main(int argc, char** argv) {
  using namespace attnbench;
  const std::string sel = argc > 1 ? argv[1] : "main";
  try {
    if (sel == "--faults") return run_faults();
    int failed = 0, ran = 0;
    for (const test_case& c : all_cases())
      if (sel == "main" || sel == c.name || c.name.find(sel) != std::string::npos) {
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

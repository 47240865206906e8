// Tests of the Hopper twins (ctest emu.hopper: EmuHopper.*) and their
// negative controls (ctest emu.hopper_controls: EmuHopperControl.*, each
// passes only on the emulator's report). Tiny kernels, not project kernels:
//  * wgmma SS and RS for every swizzle mode (none, 32B, 64B, 128B), B K-major
//    and MN-major (trans_b), scale_d 0 and 1, N = 64 and 128, against a
//    scalar GEMM; operands loaded by TMA with the same swizzle, and once
//    written by generic stores (+ fence.proxy.async) from the ISA's formula;
//  * wgmma .e4m3 (m64nNk32) SS and RS for every swizzle, N = 64, 128, 256,
//    scale_d 0 and 1, a NaN code, against a host matmul decoding with the
//    harness's codec; cvt.rn.satfinite.e4m3x2 edge cases; the emulator's e4m3
//    codec (<cuda_fp8.h> stand-in) against core/fp8.hpp and against the
//    rounding by definition; __byte_perm;
//  * TMA 2D/3D/4D boxes with out-of-bounds zero fill (and an element stride) for each swizzle,
//    checked byte for byte against the swizzle written out here;
//  * an mbarrier producer/consumer ring over several phases, named barriers,
//    elect.sync, setmaxnreg (an inc waits for a dec), the tensor-map encoder's
//    argument rules and the driver entry points.
// The fragment and swizzle formulas here are transcribed separately from the
// ISA (not taken from emu_hopper_layout.hpp); hopper_oracle_test.cpp checks
// that header against CuTe.
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/cuda/launch.cuh"
#include "core/fp8.hpp"
#include "tests/emu/emu_control.hpp"
#include "tests/emu/include/attn_emu_hopper_ptx.hpp"

namespace attnbench::cuda {
extern __shared__ __align__(128) unsigned char smem_raw[];
}

namespace attnbench::emu_test {
namespace {

using attnbench::cuda::launch;
namespace f3 = attnbench::cuda::f3;

std::uint64_t make_desc(std::uint32_t start, std::uint32_t lbo, std::uint32_t sbo, int swizzle_bits) {
  static const int code[4] = {0, 3, 2, 1};  // none, 32B, 64B, 128B -> bits 62-63
  return ((start & 0x3FFFFu) >> 4) | (std::uint64_t((lbo & 0x3FFFFu) >> 4) << 16) |
         (std::uint64_t((sbo & 0x3FFFFu) >> 4) << 32) | (std::uint64_t(code[swizzle_bits]) << 62);
}
std::uint16_t to_bf16(float f) { return emu_float_to_bf16_bits(f); }
float from_bf16(std::uint16_t u) { return emu_bf16_bits_to_float(u); }

// Runs f, returns {exception text, captured stderr}; resets the emulator's error count.
template <class F>
std::pair<std::string, std::string> run_captured(F f) {
  ::testing::internal::CaptureStderr();
  std::string e;
  try {
    f();
  } catch (const std::exception& x) {
    e = x.what();
  }
  const std::string log = ::testing::internal::GetCapturedStderr();
  emu::reset_errors();
  return {e, log};
}

void encode_into(CUtensorMap* m, CUtensorMapDataType type, int rank, const void* base, std::vector<cuuint64_t> dims,
                 std::vector<cuuint64_t> strides, std::vector<cuuint32_t> box, int swizzle,
                 std::vector<cuuint32_t> es = {}) {
  es.resize(rank, 1);
  const CUresult r =
      cuTensorMapEncodeTiled(m, type, rank, const_cast<void*>(base), dims.data(), strides.data(), box.data(), es.data(),
                             CU_TENSOR_MAP_INTERLEAVE_NONE, static_cast<CUtensorMapSwizzle>(swizzle),
                             CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  EXPECT_EQ(r, CUDA_SUCCESS);
}
CUtensorMap encode(CUtensorMapDataType type, int rank, const void* base, std::vector<cuuint64_t> dims,
                   std::vector<cuuint64_t> strides, std::vector<cuuint32_t> box, int swizzle,
                   std::vector<cuuint32_t> es = {}) {
  CUtensorMap m{};
  encode_into(&m, type, rank, base, std::move(dims), std::move(strides), std::move(box), swizzle, std::move(es));
  return m;
}

// ---- wgmma against a scalar GEMM ------------------------------------------------------------
struct gemm_case {
  int swz = 3;  // Swizzle bits of map and descriptor: 0 none, 1 32B, 2 64B, 3 128B
  bool rs = false, trans_b = false;
  int n = 64;
  float init = 0.f;
  int scale_first = 1;
  int desc_swz = -1;  // descriptor swizzle if not swz (negative control)
  bool a_generic = false, proxy_fence = true, wgmma_fence = true, wait = true;
  bool fp16 = false;  // f16 operands instead of bf16
};
struct alignas(128) gemm_params {
  CUtensorMap map_a, map_b;
  gemm_case c;
  int kt, b_loads;
  std::uint32_t a_lbo, a_sbo, b_lbo, b_sbo, a_step, b_step, a_bytes, b_bytes, b_block_bytes, b_block_cols;
  const std::uint16_t* a;  // A [64][kt] bf16 bits
  float* out;              // D [64][n]
};
constexpr std::uint32_t kBOffset = 8192;

__global__ void gemm_kernel(const __grid_constant__ gemm_params p) {
  __shared__ std::uint64_t bar;
  unsigned char* smem = attnbench::cuda::smem_raw;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const gemm_case& c = p.c;
  if (tid == 0) {
    f3::mbarrier_init(&bar, 1);
    f3::fence_mbarrier_init();
    if (c.a_generic) {  // K-major 128B swizzle from the ISA: 16-byte chunk (k / 8) ^ (m % 8) of row m
      for (int m = 0; m < 64; ++m)
        for (int k = 0; k < p.kt; ++k)
          std::memcpy(smem + m * 128 + (((k / 8) ^ (m % 8)) * 16) + (k % 8) * 2, &p.a[m * p.kt + k], 2);
      if (c.proxy_fence) f3::fence_proxy_async_shared();
    }
  }
  __syncthreads();
  const bool tma_a = !c.a_generic && !c.rs;
  if (tid == 0) {
    f3::mbarrier_arrive_expect_tx(&bar, (tma_a ? p.a_bytes : 0) + p.b_bytes);
    if (tma_a) {
      if (c.swz)
        f3::tma_load_2d(smem, &p.map_a, &bar, 0, 0);
      else
        f3::tma_load_3d(smem, &p.map_a, &bar, 0, 0, 0);
    }
    for (int j = 0; j < p.b_loads; ++j) {
      if (c.swz == 0)
        f3::tma_load_3d(smem + kBOffset, &p.map_b, &bar, 0, 0, 0);
      else if (c.trans_b)
        f3::tma_load_2d(smem + kBOffset + j * p.b_block_bytes, &p.map_b, &bar, j * p.b_block_cols, 0);
      else
        f3::tma_load_2d(smem + kBOffset, &p.map_b, &bar, 0, 0);
    }
  }
  f3::mbarrier_wait_parity(&bar, 0);
  float d[128];
  for (int i = 0; i < c.n / 2; ++i) d[i] = c.init;
  if (c.wgmma_fence) f3::wgmma_fence();
  const int dswz = c.desc_swz >= 0 ? c.desc_swz : c.swz;
  for (int ks = 0; ks < p.kt / 16; ++ks) {
    const std::uint64_t da = make_desc(ks * p.a_step, p.a_lbo, p.a_sbo, dswz);
    const std::uint64_t db = make_desc(kBOffset + ks * p.b_step, p.b_lbo, p.b_sbo, dswz);
    std::uint32_t a[4];
    for (int i = 0; i < 8; i += 2) {  // A fragment: row 16 warp + lane/4 (+8), col 2 (lane%4) + (i&1) (+8)
      const int row = 16 * warp + lane / 4 + 8 * ((i >> 1) & 1), col = 16 * ks + 2 * (lane % 4) + 8 * (i >> 2);
      a[i / 2] = std::uint32_t(p.a[row * p.kt + col]) | (std::uint32_t(p.a[row * p.kt + col + 1]) << 16);
    }
    const int scale = ks == 0 ? c.scale_first : 1;
    if (c.n == 64 && !c.rs && !c.trans_b && !c.fp16) {  // the templated entry points, as the kernels call them
      f3::wgmma_ss<__nv_bfloat16, 64, 0>(reinterpret_cast<float(&)[32]>(d), da, db, scale);
    } else if (c.n == 64 && c.rs && c.trans_b && !c.fp16) {
      f3::wgmma_rs<__nv_bfloat16, 64, 1>(reinterpret_cast<float(&)[32]>(d), a, db, scale);
    } else {
      f3::wgmma_any(d, c.n, c.rs ? a : nullptr, da, db, c.trans_b ? 1 : 0,
                    c.fp16 ? f3::wgmma_elem::f16 : f3::wgmma_elem::bf16, scale);
    }
  }
  f3::wgmma_commit_group();
  if (c.wait) f3::wgmma_wait_group<0>();
  for (int i = 0; i < c.n / 2;
       ++i) {  // D fragment: row 16 warp + lane/4 (+8 for i%4 >= 2), col 8 (i/4) + 2 (lane%4) + i%2
    const int row = 16 * warp + lane / 4 + 8 * ((i / 2) % 2), col = 8 * (i / 4) + 2 * (lane % 4) + (i % 2);
    p.out[row * c.n + col] = d[i];
  }
}

struct gemm_result {
  std::vector<float> got, want;
  std::string error, log;
};

gemm_result run_gemm(const gemm_case& c) {
  const int span = 16 << c.swz;          // bytes of a swizzle row
  const int kt = c.swz ? span / 2 : 16;  // K of the tile: one swizzle row (16 for none)
  std::mt19937 rng(1234 + c.swz * 7 + c.n);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<std::uint16_t> A(64 * kt), B(static_cast<std::size_t>(c.n) * kt);  // B[n][k]
  auto to16 = [&](float f) { return c.fp16 ? emu_float_to_half_bits(f) : to_bf16(f); };
  auto from16 = [&](std::uint16_t x) { return c.fp16 ? emu_half_bits_to_float(x) : from_bf16(x); };
  for (auto& x : A) x = to16(u(rng));
  for (auto& x : B) x = to16(u(rng));
  std::vector<std::uint16_t> Bt(B.size());  // [k][n]
  for (int n = 0; n < c.n; ++n)
    for (int k = 0; k < kt; ++k) Bt[static_cast<std::size_t>(k) * c.n + n] = B[static_cast<std::size_t>(n) * kt + k];

  gemm_params p{};
  p.c = c;
  p.kt = kt;
  p.a = A.data();
  std::vector<float> out(64 * c.n, -7.f);
  p.out = out.data();
  p.a_bytes = 64 * kt * 2;
  p.b_bytes = c.n * kt * 2;
  p.b_loads = 1;
  const auto bf16 = c.fp16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  if (c.swz) {  // K-major: rows of one swizzle span, 8-row groups at SBO = 8 span; k16 steps of 32 bytes
    p.map_a = encode(bf16, 2, A.data(), {cuuint64_t(kt), 64}, {cuuint64_t(kt * 2)}, {cuuint32_t(kt), 64}, c.swz);
    p.a_lbo = 16;
    p.a_sbo = 8 * span;
    p.a_step = 32;
  } else {  // no swizzle: core matrices of 8 rows x 16 bytes; box (8, rows, 2) puts K chunk c at LBO = 64*16
    p.map_a = encode(bf16, 3, A.data(), {8, 64, 2}, {32, 16}, {8, 64, 2}, 0);
    p.a_lbo = 64 * 16;
    p.a_sbo = 128;
    p.a_step = 0;
  }
  if (!c.trans_b) {
    if (c.swz) {
      p.map_b = encode(bf16, 2, B.data(), {cuuint64_t(kt), cuuint64_t(c.n)}, {cuuint64_t(kt * 2)},
                       {cuuint32_t(kt), cuuint32_t(c.n)}, c.swz);
      p.b_lbo = 16;
      p.b_sbo = 8 * span;
      p.b_step = 32;
    } else {
      p.map_b = encode(bf16, 3, B.data(), {8, cuuint64_t(c.n), 2}, {32, 16}, {8, cuuint32_t(c.n), 2}, 0);
      p.b_lbo = c.n * 16;
      p.b_sbo = 128;
      p.b_step = 0;
    }
  } else {
    if (c.swz) {  // MN-major: blocks of span/2 columns x kt rows; k rows at span, 8 k at SBO, next block at LBO
      p.b_block_cols = span / 2;
      p.b_block_bytes = kt * span;
      p.b_loads = c.n / (span / 2);
      p.map_b = encode(bf16, 2, Bt.data(), {cuuint64_t(c.n), cuuint64_t(kt)}, {cuuint64_t(c.n * 2)},
                       {cuuint32_t(span / 2), cuuint32_t(kt)}, c.swz);
      p.b_lbo = p.b_block_bytes;
      p.b_sbo = 8 * span;
      p.b_step = 16 * span;
    } else {  // no swizzle, MN-major: 16-byte chunks of 8 n; k rows at 16 bytes, 8 k at LBO, 8 n at SBO
      p.map_b = encode(bf16, 3, Bt.data(), {8, cuuint64_t(kt), cuuint64_t(c.n / 8)}, {cuuint64_t(c.n * 2), 16},
                       {8, cuuint32_t(kt), cuuint32_t(c.n / 8)}, 0);
      p.b_lbo = 128;
      p.b_sbo = kt * 16;
      p.b_step = 0;
    }
  }
  gemm_result r;
  std::tie(r.error, r.log) = run_captured([&] { launch(gemm_kernel, 1, 128, 32768, nullptr, p); });
  r.got = out;
  r.want.assign(64 * c.n, 0.f);
  for (int m = 0; m < 64; ++m)
    for (int n = 0; n < c.n; ++n) {
      double s = 0;
      for (int k = 0; k < kt; ++k) s += double(from16(A[m * kt + k])) * from16(B[static_cast<std::size_t>(n) * kt + k]);
      r.want[m * c.n + n] = static_cast<float>(s + (c.scale_first ? c.init : 0.f));
    }
  return r;
}

double max_err(const gemm_result& r) {
  double e = 0;
  for (std::size_t i = 0; i < r.got.size(); ++i) {
    const double d = std::fabs(double(r.got[i]) - r.want[i]);
    e = std::isnan(d) ? INFINITY : std::max(e, d);
  }
  return e;
}

const char* swz_name(int s) {
  static const char* n[] = {"none", "32B", "64B", "128B"};
  return n[s];
}

TEST(EmuHopper, WgmmaMatchesScalarGemmForEverySwizzleAndMajorness) {
  for (int swz = 0; swz < 4; ++swz)
    for (int rs = 0; rs < 2; ++rs)
      for (int trans_b = 0; trans_b < 2; ++trans_b) {
        gemm_case c;
        c.swz = swz;
        c.rs = rs;
        c.trans_b = trans_b;
        const gemm_result r = run_gemm(c);
        const std::string what =
            std::string("swizzle ") + swz_name(swz) + (rs ? " RS" : " SS") + (trans_b ? " B MN-major" : " B K-major");
        EXPECT_TRUE(r.error.empty()) << what << ": " << r.error << r.log;
        EXPECT_LT(max_err(r), 1e-4) << what << r.log;
      }
}

TEST(EmuHopper, WgmmaN128ScaleDAndAccumulate) {
  for (int swz : {0, 3})
    for (int trans_b = 0; trans_b < 2; ++trans_b) {
      gemm_case c;
      c.swz = swz;
      c.n = 128;  // MN-major 128B: two 64-column blocks at LBO
      c.trans_b = trans_b;
      c.init = 1000.f;  // scale_d = 0 on the first k16 step ignores it
      c.scale_first = 0;
      gemm_result r = run_gemm(c);
      EXPECT_TRUE(r.error.empty()) << r.error << r.log;
      EXPECT_LT(max_err(r), 1e-4) << "N=128 scale_d=0, swizzle " << swz_name(swz) << " trans_b " << trans_b;
      c.init = 0.5f;  // scale_d = 1 keeps it
      c.scale_first = 1;
      r = run_gemm(c);
      EXPECT_LT(max_err(r), 1e-4) << "N=128 accumulate onto 0.5";
    }
}

TEST(EmuHopper, WgmmaFp16Operands) {
  for (int rs = 0; rs < 2; ++rs)
    for (int trans_b = 0; trans_b < 2; ++trans_b) {
      gemm_case c;
      c.fp16 = true;
      c.rs = rs;
      c.trans_b = trans_b;
      const gemm_result r = run_gemm(c);
      EXPECT_TRUE(r.error.empty()) << r.error << r.log;
      EXPECT_LT(max_err(r), 1e-4) << "f16" << (rs ? " RS" : " SS") << (trans_b ? " B MN-major" : " B K-major");
    }
}

TEST(EmuHopper, GenericStoresWithProxyFenceFeedWgmma) {
  gemm_case c;
  c.swz = 3;
  c.a_generic = true;  // A written by thread 0 from the ISA's 128B-swizzle formula, then fence.proxy.async
  const gemm_result r = run_gemm(c);
  EXPECT_TRUE(r.error.empty()) << r.error << r.log;
  EXPECT_LT(max_err(r), 1e-4) << r.log;
}

TEST(EmuHopperControl, MissingProxyFenceIsReported) {
  gemm_case c;
  c.swz = 3;
  c.a_generic = true;
  c.proxy_fence = false;
  const gemm_result r = run_gemm(c);
  EXPECT_NE(r.log.find("written by generic stores with no fence.proxy.async since"), std::string::npos) << r.log;
  EXPECT_NE(r.error.find("cudaErrorLaunchFailure"), std::string::npos) << r.error;
}

TEST(EmuHopperControl, DescriptorSwizzleOtherThanTheTensorMapsIsReported) {
  gemm_case c;
  c.swz = 3;
  c.desc_swz = 2;  // descriptor says 64B, TMA wrote 128B
  const gemm_result r = run_gemm(c);
  EXPECT_NE(r.log.find("descriptor swizzle 64B reads shared"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("which TMA wrote with swizzle 128B"), std::string::npos) << r.log;
  EXPECT_GT(max_err(r), 1e-2);  // and the data is wrong
}

TEST(EmuHopperControl, MissingWgmmaFenceIsReported) {
  gemm_case c;
  c.wgmma_fence = false;
  const gemm_result r = run_gemm(c);
  EXPECT_NE(r.log.find("wgmma.mma_async without a wgmma.fence"), std::string::npos) << r.log;
}

TEST(EmuHopperControl, MissingWaitGroupReadsOldAccumulators) {
  gemm_case c;
  c.wait = false;
  c.init = 3.f;
  const gemm_result r = run_gemm(c);
  EXPECT_NE(r.log.find("kernel exits with wgmma.mma_async outstanding"), std::string::npos) << r.log;
  for (float x : r.got) ASSERT_EQ(x, 3.f);  // the accumulators were read before the multiply ran
}

// ---- fp8: wgmma m64nNk32 .e4m3 against a plain host matmul ---------------------------------
// Both operands K-major, loaded by TMA as bytes (UINT8 maps) with the swizzle
// of the descriptors; every e4m3 code but the two NaNs, drawn uniformly, so
// zeros, subnormals, +-448 and both signs all occur. The reference decodes
// with the harness's codec (core/fp8.hpp), not the emulator's.
enum class f8_fault { none, frag16, trans_b };
struct f8_case {
  int swz = 3;  // swizzle bits of maps and descriptors: 0 none, 1 32B, 2 64B, 3 128B
  int n = 64;
  bool rs = false;
  float init = 0.f;
  int scale_first = 1;
  bool nan_in_a = false;  // A row 5 holds a NaN code (0xFF)
  f8_fault fault = f8_fault::none;
};
struct alignas(128) f8_params {
  CUtensorMap map_a, map_b;
  f8_case c;
  int kt;
  std::uint32_t a_lbo, a_sbo, b_lbo, b_sbo, a_step, b_step, a_bytes, b_bytes;
  const std::uint8_t* a;  // A [64][kt] e4m3 codes
  float* out;             // D [64][n]
};
constexpr std::uint32_t kBOffset8 = 8192;

template <int N>
void f8_mma(float (&d)[128], bool rs, const std::uint32_t (&a)[4], std::uint64_t da, std::uint64_t db, int scale) {
  auto& dn = reinterpret_cast<float(&)[N / 2]>(d);
  if (rs)
    f3::wgmma_rs_e4m3<N>(dn, a, db, scale);
  else
    f3::wgmma_ss_e4m3<N>(dn, da, db, scale);
}

__global__ void f8_gemm_kernel(const __grid_constant__ f8_params p) {
  __shared__ std::uint64_t bar;
  unsigned char* smem = attnbench::cuda::smem_raw;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const f8_case& c = p.c;
  if (tid == 0) {
    f3::mbarrier_init(&bar, 1);
    f3::fence_mbarrier_init();
  }
  __syncthreads();
  if (tid == 0) {
    f3::mbarrier_arrive_expect_tx(&bar, (c.rs ? 0 : p.a_bytes) + p.b_bytes);
    if (!c.rs) {
      if (c.swz)
        f3::tma_load_2d(smem, &p.map_a, &bar, 0, 0);
      else
        f3::tma_load_3d(smem, &p.map_a, &bar, 0, 0, 0);
    }
    if (c.swz)
      f3::tma_load_2d(smem + kBOffset8, &p.map_b, &bar, 0, 0);
    else
      f3::tma_load_3d(smem + kBOffset8, &p.map_b, &bar, 0, 0, 0);
  }
  f3::mbarrier_wait_parity(&bar, 0);
  float d[128];
  for (int i = 0; i < c.n / 2; ++i) d[i] = c.init;
  f3::wgmma_fence();
  for (int ks = 0; ks < p.kt / 32; ++ks) {
    const std::uint64_t da = make_desc(ks * p.a_step, p.a_lbo, p.a_sbo, c.swz);
    const std::uint64_t db = make_desc(kBOffset8 + ks * p.b_step, p.b_lbo, p.b_sbo, c.swz);
    std::uint32_t a[4] = {0, 0, 0, 0};
    for (int i = 0; i < 16; ++i) {
      int row, col;
      if (c.fault == f8_fault::frag16) {  // the m64nNk16 formula applied to 8-bit elements
        row = 16 * warp + lane / 4 + 8 * ((i / 2) % 2);
        col = 8 * (i / 4) + 2 * (lane % 4) + i % 2;
      } else {  // m64nNk32, 8-bit A: byte i % 4 of register i / 4; +8 rows for i % 8 >= 4, +16 k for i >= 8
        row = 16 * warp + lane / 4 + 8 * ((i / 4) % 2);
        col = 16 * (i / 8) + 4 * (lane % 4) + i % 4;
      }
      a[i / 4] |= std::uint32_t(p.a[row * p.kt + 32 * ks + col]) << (8 * (i % 4));
    }
    const int scale = ks == 0 ? c.scale_first : 1;
    if (c.fault == f8_fault::trans_b)  // B said to be MN-major: no such 8-bit form
      f3::wgmma_any(d, c.n, nullptr, da, db, 1, f3::wgmma_elem::e4m3, scale);
    else if (c.n == 64)
      f8_mma<64>(d, c.rs, a, da, db, scale);
    else if (c.n == 128)
      f8_mma<128>(d, c.rs, a, da, db, scale);
    else
      f8_mma<256>(d, c.rs, a, da, db, scale);
  }
  f3::wgmma_commit_group();
  f3::wgmma_wait_group<0>();
  for (int i = 0; i < c.n / 2; ++i) {  // the same accumulator fragment as the 16-bit forms
    const int row = 16 * warp + lane / 4 + 8 * ((i / 2) % 2), col = 8 * (i / 4) + 2 * (lane % 4) + (i % 2);
    p.out[row * c.n + col] = d[i];
  }
}

struct f8_result {
  std::vector<float> got;
  std::vector<double> want, bound;  // bound: fp32 summation of kt products, kt * 2^-24 * (sum |a b| + |init|)
  std::string error, log;
};

f8_result run_f8(const f8_case& c) {
  const int span = 16 << c.swz;
  const int kt = c.swz ? span : 64;  // K of the tile: one swizzle row of bytes; 64 (4 chunks at LBO) unswizzled
  std::mt19937 rng(4321 + c.swz * 11 + c.n + (c.rs ? 5 : 0));
  std::uniform_int_distribution<int> code(0, 253);  // 254 finite codes: skip 0x7F and 0xFF
  auto draw = [&] {
    const int x = code(rng);
    return static_cast<std::uint8_t>(x < 0x7F ? x : x + 1);
  };
  std::vector<std::uint8_t> A(64 * kt), B(static_cast<std::size_t>(c.n) * kt);  // B[n][k]
  for (auto& x : A) x = draw();
  for (auto& x : B) x = draw();
  if (c.nan_in_a) A[5 * kt + 3] = 0xFF;

  f8_params p{};
  p.c = c;
  p.kt = kt;
  p.a = A.data();
  std::vector<float> out(64 * c.n, -7.f);
  p.out = out.data();
  p.a_bytes = 64 * kt;
  p.b_bytes = c.n * kt;
  const auto u8 = CU_TENSOR_MAP_DATA_TYPE_UINT8;
  const auto n = static_cast<cuuint32_t>(c.n);
  // (Encoded in place: g++ 12 at -O2 put encode()'s returned temporary on a 16-byte boundary
  // here, though CUtensorMap is alignas(128), and the encoder rejects a map not 64-byte aligned.)
  if (c.swz) {  // rows of one swizzle span, 8-row groups at SBO = 8 span; a k32 step is 32 bytes on
    encode_into(&p.map_a, u8, 2, A.data(), {cuuint64_t(kt), 64}, {cuuint64_t(kt)}, {cuuint32_t(kt), 64}, c.swz);
    encode_into(&p.map_b, u8, 2, B.data(), {cuuint64_t(kt), n}, {cuuint64_t(kt)}, {cuuint32_t(kt), n}, c.swz);
    p.a_lbo = p.b_lbo = 16;
    p.a_sbo = p.b_sbo = 8 * span;
    p.a_step = p.b_step = 32;
  } else {  // core matrices of 8 rows x 16 k: box (16, rows, kt/16) puts chunk c at LBO = rows * 16; a k32 step is 2
            // LBO
    encode_into(&p.map_a, u8, 3, A.data(), {16, 64, cuuint64_t(kt / 16)}, {cuuint64_t(kt), 16},
                {16, 64, cuuint32_t(kt / 16)}, 0);
    encode_into(&p.map_b, u8, 3, B.data(), {16, n, cuuint64_t(kt / 16)}, {cuuint64_t(kt), 16},
                {16, n, cuuint32_t(kt / 16)}, 0);
    p.a_lbo = 64 * 16;
    p.b_lbo = c.n * 16;
    p.a_sbo = p.b_sbo = 128;
    p.a_step = 2 * p.a_lbo;
    p.b_step = 2 * p.b_lbo;
  }
  f8_result r;
  std::tie(r.error, r.log) = run_captured([&] { launch(f8_gemm_kernel, 1, 128, 40960, nullptr, p); });
  r.got = out;
  r.want.assign(64 * c.n, 0.);
  r.bound.assign(64 * c.n, 0.);
  const double init = c.scale_first ? c.init : 0.;
  for (int m = 0; m < 64; ++m)
    for (int j = 0; j < c.n; ++j) {
      double s = init, mag = std::fabs(init);
      for (int k = 0; k < kt; ++k) {
        const double prod =
            double(e4m3_to_float(A[m * kt + k])) * e4m3_to_float(B[static_cast<std::size_t>(j) * kt + k]);
        s += prod;
        mag += std::fabs(prod);
      }
      r.want[m * c.n + j] = s;
      r.bound[m * c.n + j] = kt * 0x1p-24 * mag + 1e-30;
    }
  return r;
}

// Largest |got - want| / bound (1: at the bound); a NaN counts as infinite.
double f8_err(const f8_result& r, int skip_row = -1, int n = 0) {
  double e = 0;
  for (std::size_t i = 0; i < r.got.size(); ++i) {
    if (skip_row >= 0 && static_cast<int>(i) / n == skip_row) continue;
    const double d = std::fabs(double(r.got[i]) - r.want[i]) / r.bound[i];
    e = std::isnan(d) ? INFINITY : std::max(e, d);
  }
  return e;
}

TEST(EmuHopper, Fp8WgmmaMatchesHostMatmulForEverySwizzleAndN) {
  for (int swz = 0; swz < 4; ++swz)
    for (int rs = 0; rs < 2; ++rs)
      for (int n : {64, 128, 256}) {
        f8_case c;
        c.swz = swz;
        c.rs = rs;
        c.n = n;
        const f8_result r = run_f8(c);
        const std::string what =
            std::string("e4m3 swizzle ") + swz_name(swz) + (rs ? " RS" : " SS") + " N=" + std::to_string(n);
        EXPECT_TRUE(r.error.empty()) << what << ": " << r.error << r.log;
        EXPECT_LE(f8_err(r), 1.0) << what << r.log;
      }
}

TEST(EmuHopper, Fp8WgmmaScaleDAndAccumulate) {
  for (int swz : {0, 3})
    for (int rs = 0; rs < 2; ++rs) {
      f8_case c;
      c.swz = swz;
      c.rs = rs;
      c.n = 128;
      c.init = 1000.f;  // scale_d = 0 on the first k32 step ignores it
      c.scale_first = 0;
      f8_result r = run_f8(c);
      EXPECT_TRUE(r.error.empty()) << r.error << r.log;
      EXPECT_LE(f8_err(r), 1.0) << "e4m3 scale_d=0, swizzle " << swz_name(swz) << (rs ? " RS" : " SS");
      c.init = 0.5f;  // scale_d = 1 keeps it
      c.scale_first = 1;
      r = run_f8(c);
      EXPECT_TRUE(r.error.empty()) << r.error << r.log;
      EXPECT_LE(f8_err(r), 1.0) << "e4m3 accumulate onto 0.5, swizzle " << swz_name(swz) << (rs ? " RS" : " SS");
    }
}

TEST(EmuHopper, Fp8NanCodePropagatesToItsRowOnly) {
  for (int rs = 0; rs < 2; ++rs) {
    f8_case c;
    c.rs = rs;
    c.nan_in_a = true;  // 0xFF at A(5, 3): the other NaN code than cvt's 0x7F
    const f8_result r = run_f8(c);
    EXPECT_TRUE(r.error.empty()) << r.error << r.log;
    for (int j = 0; j < c.n; ++j) ASSERT_TRUE(std::isnan(r.got[5 * c.n + j])) << "row 5 column " << j;
    EXPECT_LE(f8_err(r, 5, c.n), 1.0) << (rs ? "RS" : "SS");
  }
}

TEST(EmuHopperControl, Fp8RsWithThe16BitElementOrderingMismatches) {
  f8_case c;
  c.rs = true;
  c.fault = f8_fault::frag16;  // a valid permutation of A, the wrong one: the emulator cannot tell, D can
  const f8_result r = run_f8(c);
  EXPECT_TRUE(r.error.empty()) << r.error << r.log;
  EXPECT_GT(f8_err(r), 1e3) << "the 16-bit element ordering passed for the 8-bit fragment";
}

TEST(EmuHopperControl, Fp8TransposedBIsReported) {
  f8_case c;
  c.fault = f8_fault::trans_b;
  const f8_result r = run_f8(c);
  EXPECT_NE(r.log.find("wgmma.mma_async.e4m3 with B MN-major (imm-trans-b = 1)"), std::string::npos) << r.log;
  EXPECT_NE(r.error.find("cudaErrorLaunchFailure"), std::string::npos) << r.error;
}

// ---- cvt.rn.satfinite.e4m3x2.f32 and the e4m3 codec ------------------------------------------
std::uint8_t lo_of(float x) { return static_cast<std::uint8_t>(f3::cvt_e4m3x2(0.f, x)); }

TEST(EmuHopper, CvtE4m3x2RoundsToNearestEvenAndSaturates) {
  EXPECT_EQ(f3::cvt_e4m3x2(1.f, 2.f), 0x3840) << "hi -> bits 8-15, lo -> bits 0-7";
  EXPECT_EQ(f3::cvt_e4m3x2(-2.f, 0.f), 0xC000);
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const std::pair<float, int> cases[] = {
      {0.f, 0x00},
      {-0.f, 0x80},  // the sign of zero kept
      {1.f, 0x38},
      {1.0625f, 0x38},                       // 1 + 1/16: tie between 1 and 1.125 -> even (1)
      {1.1875f, 0x3A},                       // tie between 1.125 and 1.25 -> even (1.25)
      {std::nextafter(1.0625f, 2.f), 0x39},  // just above the tie
      {240.f, 0x77},                         // 1.875 x 2^7
      {416.f, 0x7D},                         // 1.625 x 2^8
      {432.f, 0x7E},                         // tie between 416 and 448 -> even (448)
      {448.f, 0x7E},
      {449.f, 0x7E},
      {464.f, 0x7E},
      {480.f, 0x7E},
      {1e30f, 0x7E},  // satfinite
      {inf, 0x7E},
      {-inf, 0xFE},
      {-500.f, 0xFE},
      {nan, 0x7F},
      {-nan, 0x7F},
      {0x1p-6f, 0x08},   // smallest normal
      {0x1p-9f, 0x01},   // smallest subnormal
      {0x1p-10f, 0x00},  // half the smallest subnormal: tie -> even (0)
      {std::nextafter(0x1p-10f, 1.f), 0x01},
      {0x1.8p-9f, 0x02},  // 1.5 x 2^-9: tie -> 2
      {0x1.4p-8f, 0x02},  // 2.5 x 2^-9: tie -> 2
      {7.f * 0x1p-9f, 0x07},
      {7.5f * 0x1p-9f, 0x08},  // tie between the largest subnormal and 2^-6 -> 8
      {-0x1p-11f, 0x80},
      {1e-45f, 0x00},
      {-1e-45f, 0x80},  // underflow keeps the sign
  };
  for (const auto& [x, want] : cases) EXPECT_EQ(lo_of(x), want) << "cvt of " << x;
}

using e4m3_encoder = std::uint8_t (*)(float);
struct codec_diff {
  long checked = 0, mismatches = 0;
  std::string first;
};
// The two encoders on every e4m3 value, its float neighbours, every midpoint
// between adjacent values and its neighbours, the saturation and underflow
// edges, NaNs and infinities, and a dense sweep of fp32 bit patterns.
codec_diff compare_encoders(e4m3_encoder mine, e4m3_encoder theirs) {
  std::vector<float> xs = {0.f,
                           -0.f,
                           448.f,
                           456.f,
                           464.f,
                           480.f,
                           1e10f,
                           3e38f,
                           0x1p-10f,
                           0x1p-11f,
                           1e-40f,
                           1e-45f,
                           std::numeric_limits<float>::infinity(),
                           std::numeric_limits<float>::quiet_NaN(),
                           std::numeric_limits<float>::signaling_NaN()};
  for (int c = 0; c < 0x7E; ++c) {
    const float v = e4m3_to_float(static_cast<std::uint8_t>(c)), up = e4m3_to_float(static_cast<std::uint8_t>(c + 1));
    const float mid = (v + up) / 2;  // exact: at most 5 significant bits
    for (float x : {v, mid}) {
      xs.push_back(x);
      xs.push_back(std::nextafter(x, 0.f));
      xs.push_back(std::nextafter(x, 1e30f));
    }
  }
  for (std::uint32_t u = 0; u < 0x7F800000u; u += 4099) {  // the whole fp32 range, sparsely
    float x;
    std::memcpy(&x, &u, 4);
    xs.push_back(x);
  }
  for (std::uint32_t u = 0x39800000u; u < 0x44000000u; u += 97) {  // 2^-12 .. 512 densely
    float x;
    std::memcpy(&x, &u, 4);
    xs.push_back(x);
  }
  codec_diff d;
  for (float x0 : xs)
    for (float x : {x0, -x0}) {
      ++d.checked;
      const std::uint8_t a = mine(x), b = theirs(x);
      if (a != b && d.mismatches++ == 0) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "%a: 0x%02X vs 0x%02X", static_cast<double>(x), a, b);
        d.first = buf;
      }
    }
  return d;
}

// The rounding by its definition: the nearest of the 254 finite values (ties
// to the even code), +-448 beyond, 0x7F for NaN.
std::uint8_t nearest_e4m3_by_search(float x) {
  if (std::isnan(x)) return 0x7F;
  const std::uint8_t sign = std::signbit(x) ? 0x80 : 0;
  const double a = std::fabs(static_cast<double>(x));
  if (a >= 448.) return sign | 0x7E;
  int best = 0;
  double best_d = INFINITY;
  for (int c = 0; c <= 0x7E; ++c) {
    const double d = std::fabs(a - e4m3_to_float(static_cast<std::uint8_t>(c)));
    if (d < best_d || (d == best_d && c % 2 == 0)) {
      best = c;
      best_d = d;
    }
  }
  return static_cast<std::uint8_t>(sign | best);
}

TEST(EmuHopper, Fp8CodecAgreesWithTheHarnessCodec) {
  for (int c = 0; c < 256; ++c) {  // decode: every code, bit for bit (NaN: both NaN)
    const float mine = emu_e4m3_bits_to_float(static_cast<std::uint8_t>(c));
    const float theirs = e4m3_to_float(static_cast<std::uint8_t>(c));
    if ((c & 0x7F) == 0x7F) {
      EXPECT_TRUE(std::isnan(mine) && std::isnan(theirs)) << "code " << c;
      continue;
    }
    std::uint32_t a, b;
    std::memcpy(&a, &mine, 4);
    std::memcpy(&b, &theirs, 4);
    EXPECT_EQ(a, b) << "code " << c << ": " << mine << " vs " << theirs;
    EXPECT_EQ(emu_float_to_e4m3_bits(mine), c) << "round trip of code " << c;
  }
  EXPECT_EQ(emu_e4m3_bits_to_float(0x7E), 448.f);
  EXPECT_EQ(emu_e4m3_bits_to_float(0x01), 0x1p-9f);
  EXPECT_EQ(emu_e4m3_bits_to_float(0x08), 0x1p-6f);
  const codec_diff d = compare_encoders(&emu_float_to_e4m3_bits, &e4m3_from_float);
  EXPECT_GT(d.checked, 3'000'000);
  EXPECT_EQ(d.mismatches, 0) << "of " << d.checked << ", first " << d.first;
  // Both against the definition on the edges (every value, midpoint and their neighbours).
  std::vector<float> edges;
  for (int c = 0; c < 0x7E; ++c) {
    const float v = e4m3_to_float(static_cast<std::uint8_t>(c)), up = e4m3_to_float(static_cast<std::uint8_t>(c + 1));
    for (float x : {v, (v + up) / 2}) edges.insert(edges.end(), {x, std::nextafter(x, 0.f), std::nextafter(x, 1e30f)});
  }
  edges.insert(edges.end(), {448.f, 464.f, std::nextafter(464.f, 0.f), 1e30f, 0x1p-10f, 1e-45f});
  for (float x0 : edges)
    for (float x : {x0, -x0}) ASSERT_EQ(emu_float_to_e4m3_bits(x), nearest_e4m3_by_search(x)) << "at " << x;
}

// The comparison must see a codec that rounds ties away from zero, and one without .satfinite.
std::uint8_t ties_away(float x) {  // nudged up by 2^-20 relative: a tie is no longer a tie
  return emu_float_to_e4m3_bits(x * (1.f + 0x1p-20f));
}
std::uint8_t no_satfinite(float x) { return std::fabs(x) > 464.f ? 0x7F : emu_float_to_e4m3_bits(x); }

TEST(EmuHopperControl, Fp8CodecComparisonCatchesPlantedRoundingBugs) {
  codec_diff d = compare_encoders(&ties_away, &e4m3_from_float);
  EXPECT_GT(d.mismatches, 0) << "ties away from zero passed";
  d = compare_encoders(&no_satfinite, &e4m3_from_float);
  EXPECT_GT(d.mismatches, 0) << "overflow to NaN passed";
}

TEST(EmuHopper, BytePermSelectsBytes) {
  const unsigned x = 0x33221100u, y = 0x77665544u;
  EXPECT_EQ(__byte_perm(x, y, 0x3210), x);
  EXPECT_EQ(__byte_perm(x, y, 0x7654), y);
  EXPECT_EQ(__byte_perm(x, y, 0x5140), 0x55114400u);  // interleave the low halves
  EXPECT_EQ(__byte_perm(x, y, 0x7362), 0x77336622u);
  EXPECT_EQ(__byte_perm(x, y, 0x0123), 0x00112233u);       // byte reverse
  EXPECT_EQ(__byte_perm(x, y, 0xFFFF0008u), 0x00000000u);  // bit 3 of a selector and the upper 16 bits unused
  EXPECT_EQ(__byte_perm(x, y, 0x000F), 0x00000077u);
}

// ---- TMA boxes: 2D/3D/4D, out-of-bounds zero fill, every swizzle --------------------------
struct alignas(128) tma_params {
  CUtensorMap map;
  int rank;
  int coord[4];
  std::uint32_t bytes;
  std::uint16_t* out;     // the box as it lies in shared memory
  std::uint16_t* before;  // what thread 1 read before waiting (the poison)
};
__global__ void tma_kernel(const __grid_constant__ tma_params p) {
  __shared__ std::uint64_t bar;
  unsigned char* smem = attnbench::cuda::smem_raw + 1024;  // 1024-aligned, not the first byte
  if (threadIdx.x == 0) {
    f3::mbarrier_init(&bar, 1);
    f3::fence_mbarrier_init();
    f3::tma_prefetch_descriptor(&p.map);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    f3::mbarrier_arrive_expect_tx(&bar, p.bytes);
    if (p.rank == 2) f3::tma_load_2d(smem, &p.map, &bar, p.coord[0], p.coord[1]);
    if (p.rank == 3) f3::tma_load_3d(smem, &p.map, &bar, p.coord[0], p.coord[1], p.coord[2]);
    if (p.rank == 4) f3::tma_load_4d(smem, &p.map, &bar, p.coord[0], p.coord[1], p.coord[2], p.coord[3]);
  }
  if (threadIdx.x == 1) std::memcpy(p.before, smem, 2);  // the copy lands at the end of the pass
  f3::mbarrier_wait_parity(&bar, 0);
  for (std::uint32_t i = threadIdx.x; i < p.bytes / 2; i += blockDim.x) std::memcpy(&p.out[i], smem + 2 * i, 2);
}

TEST(EmuHopper, TmaBoxesZeroFillOutOfBoundsWithEachSwizzle) {
  struct shape {
    int rank;
    std::vector<cuuint64_t> dims;
    std::vector<cuuint32_t> box;
    std::vector<int> coord;
    std::vector<cuuint32_t> es = {};  // element strides (1)
  };
  for (int swz = 0; swz < 4; ++swz) {
    const int inner = swz ? (16 << swz) / 2 : 24;  // elements per box row: the swizzle span (48 bytes unswizzled)
    const std::vector<shape> shapes = {
        {2, {cuuint64_t(inner), 5}, {cuuint32_t(inner), 8}, {0, -2}},
        {2, {cuuint64_t(inner), 9}, {cuuint32_t(inner), 4}, {8, 7}},  // columns and rows past the end
        {3, {cuuint64_t(inner), 3, 4}, {cuuint32_t(inner), 2, 3}, {0, 2, -1}},
        {4, {cuuint64_t(inner), 2, 3, 2}, {cuuint32_t(inner), 2, 2, 2}, {0, -1, 2, 1}},
        // element stride 2 along rows: ceil(6 / 2) = 3 rows, 5, 7 and 9 (past the end)
        {2, {cuuint64_t(inner), 9}, {cuuint32_t(inner), 6}, {0, 5}, {1, 2}},
    };
    for (const shape& s : shapes) {
      std::size_t total = 1;
      for (auto d : s.dims) total *= d;
      std::vector<std::uint16_t> g(total);
      for (std::size_t i = 0; i < total; ++i) g[i] = static_cast<std::uint16_t>(i + 1);
      std::vector<cuuint64_t> strides;
      cuuint64_t st = 2;
      for (int i = 0; i + 1 < s.rank; ++i) strides.push_back(st *= s.dims[i]);
      tma_params p{};
      p.map = encode(CU_TENSOR_MAP_DATA_TYPE_UINT16, s.rank, g.data(), s.dims, strides, s.box, swz, s.es);
      std::vector<cuuint32_t> es = s.es, n(s.rank);
      es.resize(s.rank, 1);
      for (int i = 0; i < s.rank; ++i) n[i] = (s.box[i] + es[i] - 1) / es[i];  // elements loaded along i
      p.rank = s.rank;
      for (int i = 0; i < s.rank; ++i) p.coord[i] = s.coord[i];
      std::uint32_t rows = 1;
      for (int i = 1; i < s.rank; ++i) rows *= n[i];
      p.bytes = rows * inner * 2;
      std::vector<std::uint16_t> out(p.bytes / 2), before(1);
      p.out = out.data();
      p.before = before.data();
      const auto [e, log] = run_captured([&] { launch(tma_kernel, 1, 64, 32768, nullptr, p); });
      ASSERT_TRUE(e.empty()) << e << log;
      EXPECT_EQ(before[0], 0xFFFF) << "a read before the barrier sees the poison";
      const int row_bytes = inner * 2, chunks = swz ? 1 << swz : 1;
      for (std::uint32_t r = 0; r < rows; ++r) {
        std::uint32_t idx[4] = {0, r, 0, 0};  // box row r -> box coordinates 1..rank-1
        for (int i = 1; i < s.rank; ++i) {
          idx[i] = r;
          for (int j = 1; j < i; ++j) idx[i] /= n[j];
          idx[i] %= n[i];
        }
        for (int x = 0; x < inner; ++x) {
          long long lin = 0, mul = 1;
          bool inside = true;
          for (int i = 0; i < s.rank; ++i) {
            const long long v = s.coord[i] + (i == 0 ? x : static_cast<long long>(idx[i]) * es[i]);
            inside &= v >= 0 && v < static_cast<long long>(s.dims[i]);
            lin += v * mul;
            mul *= static_cast<long long>(s.dims[i]);
          }
          const std::uint16_t want = inside ? static_cast<std::uint16_t>(lin + 1) : 0;
          // 16-byte chunk (byte / 16) XOR the 128-byte line (mod the span's chunk count) it lies in,
          // the destination being 1024-aligned: box row r for 128B, r / 2 for 64B, r / 4 for 32B
          const int line = static_cast<int>(r) * row_bytes / 128;
          const int byte = 2 * x, chunk = swz ? ((byte / 16) ^ (line % chunks)) : byte / 16;
          const std::size_t at = (static_cast<std::size_t>(r) * row_bytes + chunk * 16 + byte % 16) / 2;
          ASSERT_EQ(out[at], want) << "swizzle " << swz_name(swz) << " rank " << s.rank << " row " << r << " x " << x;
        }
      }
    }
  }
}

TEST(EmuHopper, TensorMapEncoderFollowsTheDriverRules) {
  alignas(64) static std::uint16_t g[64 * 256];
  CUtensorMap m{};
  cuuint64_t dims[5] = {64, 256, 1, 1, 1}, strides[4] = {128, 128 * 256, 128 * 256, 128 * 256};
  cuuint32_t box[5] = {64, 64, 1, 1, 1}, es[5] = {1, 1, 1, 1, 1};
  auto enc = [&](void* a, int rank, CUtensorMapSwizzle sw) {
    ::testing::internal::CaptureStderr();
    const CUresult r = cuTensorMapEncodeTiled(&m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, rank, a, dims, strides, box, es,
                                              CU_TENSOR_MAP_INTERLEAVE_NONE, sw, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    ::testing::internal::GetCapturedStderr();
    return r;
  };
  EXPECT_EQ(enc(g, 2, CU_TENSOR_MAP_SWIZZLE_128B), CUDA_SUCCESS);
  EXPECT_EQ(enc(reinterpret_cast<char*>(g) + 8, 2, CU_TENSOR_MAP_SWIZZLE_128B),
            CUDA_ERROR_INVALID_VALUE);  // 16-B alignment
  EXPECT_EQ(enc(g, 0, CU_TENSOR_MAP_SWIZZLE_128B), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(enc(g, 6, CU_TENSOR_MAP_SWIZZLE_128B), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(enc(g, 2, CU_TENSOR_MAP_SWIZZLE_64B), CUDA_ERROR_INVALID_VALUE);  // 128-byte inner box > 64B span
  strides[0] = 120;
  EXPECT_EQ(enc(g, 2, CU_TENSOR_MAP_SWIZZLE_128B), CUDA_ERROR_INVALID_VALUE);  // stride not a multiple of 16
  strides[0] = 1ull << 40;
  EXPECT_EQ(enc(g, 2, CU_TENSOR_MAP_SWIZZLE_128B), CUDA_ERROR_INVALID_VALUE);  // stride >= 2^40
  strides[0] = 128;
  box[1] = 257;
  EXPECT_EQ(enc(g, 2, CU_TENSOR_MAP_SWIZZLE_128B), CUDA_ERROR_INVALID_VALUE);
  box[1] = 0;
  EXPECT_EQ(enc(g, 2, CU_TENSOR_MAP_SWIZZLE_128B), CUDA_ERROR_INVALID_VALUE);
  box[1] = 64;
  box[0] = 4;  // 8 bytes: not a multiple of 16
  EXPECT_EQ(enc(g, 2, CU_TENSOR_MAP_SWIZZLE_NONE), CUDA_ERROR_INVALID_VALUE);
  box[0] = 64;
  es[1] = 9;
  EXPECT_EQ(enc(g, 2, CU_TENSOR_MAP_SWIZZLE_128B), CUDA_ERROR_INVALID_VALUE);
  es[1] = 0;
  EXPECT_EQ(enc(g, 2, CU_TENSOR_MAP_SWIZZLE_128B), CUDA_ERROR_INVALID_VALUE);
  es[1] = 1;
  EXPECT_EQ(enc(g, 2, CU_TENSOR_MAP_SWIZZLE_128B), CUDA_SUCCESS);

  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q{};
  ASSERT_EQ(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q), cudaSuccess);
  EXPECT_EQ(q, cudaDriverEntryPointSuccess);
  EXPECT_EQ(fn, reinterpret_cast<void*>(&cuTensorMapEncodeTiled));
  ASSERT_EQ(cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &fn, cudaEnableDefault, &q), cudaSuccess);
  EXPECT_EQ(reinterpret_cast<PFN_cuTensorMapEncodeTiled>(fn), &cuTensorMapEncodeTiled);
  ASSERT_EQ(cudaGetDriverEntryPointByVersion("cuNoSuchThing", &fn, 12000, cudaEnableDefault, &q), cudaSuccess);
  EXPECT_EQ(q, cudaDriverEntryPointSymbolNotFound);
  EXPECT_EQ(fn, nullptr);
}

// ---- mbarrier ring: one producer thread, a consumer warpgroup, S stages, P tiles -----------
enum class ring_fault { none, no_expect_tx, wrong_parity, early_parity };
struct alignas(128) ring_params {
  CUtensorMap map;  // tiles of 64 x 64 uint16 (rows = tile * 64 + r)
  int tiles;
  ring_fault fault;
  float* sums;  // per tile: sum of its elements (computed by the consumers)
};
constexpr int kStages = 2;
__global__ void ring_kernel(const __grid_constant__ ring_params p) {
  __shared__ std::uint64_t full[kStages], empty[kStages];
  __shared__ float part[128];
  unsigned char* smem = attnbench::cuda::smem_raw;
  const int tid = threadIdx.x;
  if (tid == 0) {
    for (int s = 0; s < kStages; ++s) {
      f3::mbarrier_init(&full[s], 1);
      f3::mbarrier_init(&empty[s], 128);
    }
    f3::fence_mbarrier_init();
  }
  __syncthreads();
  if (tid < 128) {  // producer warpgroup: one elected thread issues, the others leave
    if (tid >= 32) return;
    if (!f3::elect_one_sync()) return;
    for (int j = 0; j < p.tiles; ++j) {
      const int s = j % kStages;
      if (j >= kStages) f3::mbarrier_wait_parity(&empty[s], ((j / kStages) - 1) & 1);
      if (p.fault == ring_fault::no_expect_tx)
        f3::mbarrier_arrive(&full[s]);
      else
        f3::mbarrier_arrive_expect_tx(&full[s], 64 * 64 * 2);
      f3::tma_load_2d(smem + s * 8192, &p.map, &full[s], 0, j * 64);
    }
    return;
  }
  const int c = tid - 128;
  for (int j = 0; j < p.tiles; ++j) {
    const int s = j % kStages;
    std::uint32_t parity = (j / kStages) & 1;
    if (p.fault == ring_fault::early_parity && j == 0) parity ^= 1;  // the previous phase: passes before the copy lands
    f3::mbarrier_wait_parity(&full[s], parity);
    // Waiting again with the other parity waits for the stage's next phase,
    // which needs this thread's own empty arrival first: a deadlock.
    if (p.fault == ring_fault::wrong_parity && j == 0) f3::mbarrier_wait_parity(&full[s], parity ^ 1);
    float sum = 0.f;
    for (int i = c; i < 64 * 64; i += 128) {
      std::uint16_t v;
      std::memcpy(&v, smem + s * 8192 + 2 * i, 2);
      sum += static_cast<float>(v);
    }
    part[c] = sum;
    f3::named_barrier_sync(1, 128);  // the consumers only
    if (c == 0) {
      float t = 0.f;
      for (int i = 0; i < 128; ++i) t += part[i];
      p.sums[j] = t;
    }
    f3::named_barrier_sync(1, 128);
    f3::mbarrier_arrive(&empty[s]);
  }
}

struct ring_result {
  std::vector<float> sums, want;
  std::string error, log;
};
ring_result run_ring(ring_fault fault, int tiles = 6) {
  std::vector<std::uint16_t> g(static_cast<std::size_t>(tiles) * 64 * 64);
  for (std::size_t i = 0; i < g.size(); ++i) g[i] = static_cast<std::uint16_t>((i * 37) % 1000);
  ring_params p{};
  p.map = encode(CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, g.data(), {64, cuuint64_t(tiles) * 64}, {128}, {64, 64}, 3);
  p.tiles = tiles;
  p.fault = fault;
  ring_result r;
  r.sums.assign(tiles, -1.f);
  p.sums = r.sums.data();
  std::tie(r.error, r.log) = run_captured([&] { launch(ring_kernel, 1, 256, kStages * 8192, nullptr, p); });
  r.want.assign(tiles, 0.f);
  for (int j = 0; j < tiles; ++j)
    for (int i = 0; i < 64 * 64; ++i) r.want[j] += g[static_cast<std::size_t>(j) * 4096 + i];
  return r;
}

TEST(EmuHopper, MbarrierRingOverSeveralPhases) {
  const ring_result r = run_ring(ring_fault::none);
  EXPECT_TRUE(r.error.empty()) << r.error << r.log;
  for (int j = 0; j < 6; ++j) EXPECT_EQ(r.sums[j], r.want[j]) << "tile " << j;
}

TEST(EmuHopperControl, MissingExpectTxIsReported) {
  const ring_result r = run_ring(ring_fault::no_expect_tx);
  EXPECT_NE(r.log.find("mbarrier tx-count underflow"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("missing mbarrier.arrive.expect_tx"), std::string::npos) << r.log;
  EXPECT_TRUE(std::isnan(r.sums[0]) || r.sums[0] != r.want[0]) << "the consumers passed before the copy";
}

TEST(EmuHopperControl, WrongParityDeadlocksNamingTheMbarrier) {
  const ring_result r = run_ring(ring_fault::wrong_parity);
  EXPECT_NE(r.log.find("DEADLOCK in attnbench::emu_test::(anonymous namespace)::ring_kernel"), std::string::npos)
      << r.log;
  EXPECT_NE(r.log.find("129 wait for an mbarrier"), std::string::npos) << r.log;  // the consumers and the producer
  EXPECT_NE(r.log.find(": 128 threads wait, phase 1 (parity 1)"), std::string::npos) << r.log;
}

TEST(EmuHopperControl, WrongParityPassesEarlyAndReadsThePoison) {
  const ring_result r = run_ring(ring_fault::early_parity, 2);
  EXPECT_TRUE(std::isnan(r.sums[0]) || r.sums[0] != r.want[0]) << r.sums[0];
}

__global__ void mbarrier_misuse_kernel(int what) {
  __shared__ std::uint64_t bar;
  if (threadIdx.x != 0) return;
  if (what == 0) f3::mbarrier_arrive(&bar);  // never initialised
  if (what == 1) {
    f3::mbarrier_init(&bar, 1);
    f3::mbarrier_arrive_expect_tx(&bar, 128);  // the phase now waits for 128 bytes only
    f3::mbarrier_arrive(&bar);                 // one arrival too many
  }
}

TEST(EmuHopperControl, MbarrierUseBeforeInitAndExtraArrivalsAreReported) {
  auto r = run_captured([] { launch(mbarrier_misuse_kernel, 1, 32, 0, nullptr, 0); });
  EXPECT_NE(r.second.find("mbarrier.arrive on an mbarrier never initialised"), std::string::npos) << r.second;
  r = run_captured([] { launch(mbarrier_misuse_kernel, 1, 32, 0, nullptr, 1); });
  EXPECT_NE(r.second.find("an arrival beyond the count 1 in phase 0"), std::string::npos) << r.second;
}

// ---- named barriers, elect, setmaxnreg --------------------------------------------------
__global__ void named_kernel(float* out, int mode) {
  __shared__ float s[128];
  const int t = threadIdx.x;
  if (t >= 128) {  // the second warpgroup produces
    s[t - 128] = static_cast<float>(t);
    if (mode != 1) f3::named_barrier_arrive(2, 256);
  } else {
    if (mode == 0) f3::named_barrier_sync(2, 256);
    if (mode == 2) f3::named_barrier_sync(3, 256);  // nobody else comes
    out[t] = s[127 - t];
  }
}

TEST(EmuHopper, NamedBarrierSyncWaitsForArrivals) {
  std::vector<float> out(128, -1.f);
  const auto r = run_captured([&] { launch(named_kernel, 1, 256, 0, nullptr, out.data(), 0); });
  EXPECT_TRUE(r.first.empty()) << r.first << r.second;
  for (int t = 0; t < 128; ++t) ASSERT_EQ(out[t], static_cast<float>(255 - t)) << t;
}

TEST(EmuHopper, WithoutTheNamedBarrierReadsThePoison) {  // a race by design: not under TSan (tests/emu.cmake)
  std::vector<float> out(128, -1.f);
  run_captured([&] { launch(named_kernel, 1, 256, 0, nullptr, out.data(), 1); });
  EXPECT_TRUE(std::isnan(out[0])) << "the first warpgroup runs first";
}

TEST(EmuHopperControl, NamedBarrierMissingArrivalsDeadlock) {
  std::vector<float> out(128);
  const auto r = run_captured([&] { launch(named_kernel, 1, 256, 0, nullptr, out.data(), 2); });
  EXPECT_NE(r.second.find("named barrier 3: 128 of 256 threads arrived"), std::string::npos) << r.second;
}

__global__ void elect_kernel(int* elected) {
  if (f3::elect_one_sync()) elected[threadIdx.x / 32] += threadIdx.x % 32 + 1;  // 1: lane 0 alone
}

__global__ void setmaxnreg_kernel(int mode) {
  const int wg = threadIdx.x / 128;
  if (mode == 0) {  // FA3's split, the producer first
    if (wg == 0)
      f3::setmaxnreg_dec<24>();
    else
      f3::setmaxnreg_inc<240>();
  } else if (mode == 1) {  // the inc comes before the dec that makes room: it waits
    if (wg == 2)
      f3::setmaxnreg_dec<24>();
    else
      f3::setmaxnreg_inc<240>();
  } else if (mode == 2) {
    f3::setmaxnreg_any(threadIdx.x % 128 < 64 ? 232 : 240, true);  // not uniform
  } else if (mode == 3) {
    f3::setmaxnreg_any(228, true);  // not a multiple of 8
  } else if (mode == 4) {
    f3::setmaxnreg_inc<256>();  // 3 x 128 x 256 > 64K: waits forever
  } else if (mode == 5) {
    if (threadIdx.x % 128 < 64) f3::setmaxnreg_inc<240>();  // part of the warpgroup
  }
}

TEST(EmuHopper, ElectAndSetmaxnreg) {
  std::vector<int> elected(4, 0);
  auto r = run_captured([&] { launch(elect_kernel, 1, 128, 0, nullptr, elected.data()); });
  EXPECT_TRUE(r.first.empty()) << r.second;
  for (int w = 0; w < 4; ++w) EXPECT_EQ(elected[w], 1) << "exactly lane 0 of warp " << w;
  for (int mode : {0, 1}) {
    r = run_captured([&] { launch(setmaxnreg_kernel, 1, 384, 0, nullptr, mode); });
    EXPECT_TRUE(r.first.empty()) << "mode " << mode << ": " << r.second;
  }
}

TEST(EmuHopperControl, SetmaxnregRulesAreReported) {
  auto r = run_captured([] { launch(setmaxnreg_kernel, 1, 384, 0, nullptr, 2); });
  EXPECT_NE(r.second.find("setmaxnreg not uniform across the warpgroup: thread 64 asks inc 240, thread 0 inc 232"),
            std::string::npos)
      << r.second;
  r = run_captured([] { launch(setmaxnreg_kernel, 1, 384, 0, nullptr, 3); });
  EXPECT_NE(r.second.find("setmaxnreg 228 (24..256, a multiple of 8)"), std::string::npos) << r.second;
  r = run_captured([] { launch(setmaxnreg_kernel, 1, 384, 0, nullptr, 4); });
  EXPECT_NE(r.second.find("threads wait in setmaxnreg.inc for 256 registers"), std::string::npos) << r.second;
}

TEST(EmuHopperControl, WarpgroupCollectiveReachedByPartOfTheWarpgroupDeadlocks) {
  const auto r = run_captured([] { launch(setmaxnreg_kernel, 1, 384, 0, nullptr, 5); });
  EXPECT_NE(r.second.find("warpgroup 0: 64 of 128 threads at setmaxnreg"), std::string::npos) << r.second;
}

}  // namespace
}  // namespace attnbench::emu_test

// Layout oracle of the Hopper twins (ctest emu.hopper_oracle): the address
// maps the emulator's wgmma and TMA twins use (emu_hopper_layout.hpp, the
// same header emu_hopper.cpp calls) against CuTe's host-side layout
// functions, an independent reading of the PTX ISA (CUTLASS 4.2.0.0 headers,
// scripts/setup.sh). Host-only, g++, no emulator:
//  * every GMMA shared-memory layout atom for 16-bit types (Layout_{K,MN}_
//    {INTER,SW32,SW64,SW128}_Atom<bf16>), tiled to m64 x k A tiles and
//    N x k B tiles (N = 64, 128, 256), each k16 slice described by CuTe's
//    own make_gmma_desc: the emulator's decoder must give, for every element,
//    the shared address CuTe's (swizzled) layout gives;
//  * the same for 8-bit elements (float_e4m3_t; K-major only, the one
//    majorness the ISA allows them), each k32 slice of m64 A and N = 64,
//    128, 256 B tiles of Layout_K_{INTER,SW32,SW64,SW128}_Atom;
//  * the wgmma register fragments (accumulator D for N = 8..256, A for RS)
//    against CuTe's CLayout_64xN / ALayout_64x16, and the 8-bit A fragment
//    and D of the e4m3 RS atoms (SM90_64xNx32_F32E4M3E4M3_RS_TN's traits);
//  * the TMA box swizzle: CuTe's Swizzle<B,4,3> mapped to the tensor-map
//    enum by CuTe (get_tma_swizzle_bits), and a box
//    of the atom's shape written by the emulator's TMA lands where CuTe's
//    layout puts each element (what CUTLASS's TMA copies rely on), 16-bit
//    and (K-major) 8-bit atoms;
//  * the emulator's e4m3 codec (its <cuda_fp8.h> stand-in, which the twins'
//    cvt and wgmma use) against CUTLASS's host float_e4m3_t conversions.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace {
unsigned char* g_shared_window =
    nullptr;  // CuTe's cast_smem_ptr_to_uint: offsets from this (as the emulator's smem_raw)
}
#define CUTE_CVTA_GENERIC_TO_SHARED_ACTIVATED 1
inline std::size_t __cvta_generic_to_shared(const void* p) {
  return static_cast<std::size_t>(static_cast<const unsigned char*>(p) - g_shared_window);
}

#include <gtest/gtest.h>

#include <cute/atom/copy_traits_sm90_tma_swizzle.hpp>
#include <cute/atom/mma_traits_sm90_gmma.hpp>
#include <cute/tensor.hpp>
#include <string>
#include <type_traits>

#include "tests/emu/emu_hopper_layout.hpp"
#define ATTN_EMU_FP8_CODEC_ONLY  // the stand-in's codec beside the real <cuda_fp8.h> (which libcu++ includes)
#include "tests/emu/include/cuda_fp8.h"

namespace {

using namespace cute;
namespace gmma = cute::SM90::GMMA;
namespace hop = attnbench::emu::hopper;
using T = cute::bfloat16_t;
using E8 = cute::float_e4m3_t;

alignas(1024) unsigned char g_smem[1 << 18];
constexpr int kTileAt = 4096;  // the tile's first byte in the window (a 1024-byte boundary, not 0)

// Every k16 (16-bit Elem) or k32 (8-bit) slice of a (MN x K) tile of `Atom`:
// the decoder on CuTe's descriptor vs CuTe's layout, element by element.
// Returns the elements checked.
template <class Atom, int MN, int K, gmma::Major Major, class Elem = T>
long check_tile(int swizzle_bits, const std::string& what) {
  constexpr int bytes = sizeof_bits<Elem>::value / 8, KS = 32 / bytes;  // one instruction's K
  g_shared_window = g_smem;
  auto tile = make_tensor(make_smem_ptr(reinterpret_cast<Elem*>(g_smem + kTileAt)),
                          tile_to_shape(Atom{}, Shape<Int<MN>, Int<K>>{}));
  long checked = 0;
  for (int kb = 0; kb < K / KS; ++kb) {
    auto slice = local_tile(tile, Shape<Int<MN>, Int<KS>>{}, make_coord(0, kb));
    const cute::GmmaDescriptor desc = gmma::make_gmma_desc<Major>(slice);
    const hop::smem_desc d = hop::decode_desc(desc.desc_);
    EXPECT_EQ(hop::swizzle_bits(d.swizzle), swizzle_bits) << what;
    for (int mn = 0; mn < MN; ++mn)
      for (int k = 0; k < KS; ++k) {
        const auto cute_addr = static_cast<std::uint32_t>(
            reinterpret_cast<const unsigned char*>(raw_pointer_cast(&slice(mn, k))) - g_smem);
        const std::uint32_t mine = hop::operand_address(d, Major == gmma::Major::K, mn, k, bytes);
        if (mine != cute_addr) {
          ADD_FAILURE() << what << " k-slice " << kb << " element (" << mn << "," << k << "): emulator " << mine
                        << ", CuTe " << cute_addr << " (LBO " << d.lbo << ", SBO " << d.sbo << ")";
          return checked;
        }
        ++checked;
      }
  }
  return checked;
}

template <int MN>
long check_all_atoms(const char* operand) {
  const std::string s = std::string(operand) + " " + std::to_string(MN) + "x16 ";
  long n = 0;
  n += check_tile<gmma::Layout_K_INTER_Atom<T>, MN, 16, gmma::Major::K>(0, s + "K-major INTER");
  n += check_tile<gmma::Layout_K_SW32_Atom<T>, MN, 16, gmma::Major::K>(1, s + "K-major SW32");
  n += check_tile<gmma::Layout_K_SW64_Atom<T>, MN, 32, gmma::Major::K>(2, s + "K-major SW64");
  n += check_tile<gmma::Layout_K_SW128_Atom<T>, MN, 64, gmma::Major::K>(3, s + "K-major SW128");
  n += check_tile<gmma::Layout_MN_INTER_Atom<T>, MN, 32, gmma::Major::MN>(0, s + "MN-major INTER");
  n += check_tile<gmma::Layout_MN_SW32_Atom<T>, MN, 32, gmma::Major::MN>(1, s + "MN-major SW32");
  n += check_tile<gmma::Layout_MN_SW64_Atom<T>, MN, 32, gmma::Major::MN>(2, s + "MN-major SW64");
  n += check_tile<gmma::Layout_MN_SW128_Atom<T>, MN, 32, gmma::Major::MN>(3, s + "MN-major SW128");
  return n;
}

TEST(HopperOracle, DescriptorDecoderMatchesCuteGmmaLayouts) {
  long n = check_all_atoms<64>("A");  // m64 x k16 A tiles
  n += check_all_atoms<128>("B");     // N x k16 B tiles
  n += check_all_atoms<256>("B");
  // 8 layouts x (64 + 128 + 256) rows x 16 k x their k-slices: nothing skipped
  EXPECT_EQ(n, 16L * (64 + 128 + 256) * (1 + 1 + 2 + 4 + 2 + 2 + 2 + 2));
}

// 8-bit elements: K-major atoms (16 elements per 16-byte chunk), k32 slices;
// two slices at least per layout, so LBO (INTER) and the step between atoms count.
template <int MN>
long check_8bit_atoms(const char* operand) {
  const std::string s = std::string(operand) + " " + std::to_string(MN) + "x32 e4m3 ";
  long n = 0;
  n += check_tile<gmma::Layout_K_INTER_Atom<E8>, MN, 64, gmma::Major::K, E8>(0, s + "K-major INTER");
  n += check_tile<gmma::Layout_K_SW32_Atom<E8>, MN, 64, gmma::Major::K, E8>(1, s + "K-major SW32");
  n += check_tile<gmma::Layout_K_SW64_Atom<E8>, MN, 64, gmma::Major::K, E8>(2, s + "K-major SW64");
  n += check_tile<gmma::Layout_K_SW128_Atom<E8>, MN, 128, gmma::Major::K, E8>(3, s + "K-major SW128");
  return n;
}

TEST(HopperOracle, DescriptorDecoderMatchesCute8BitLayouts) {
  long n = check_8bit_atoms<64>("A");
  n += check_8bit_atoms<128>("B");
  n += check_8bit_atoms<256>("B");
  EXPECT_EQ(n, 32L * (64 + 128 + 256) * (2 + 2 + 2 + 4));
}

template <int N>
void check_accumulator() {
  const auto layout = gmma::CLayout_64xN<N>{};  // (thread, value) -> m + 64 n
  for (int t = 0; t < 128; ++t)
    for (int v = 0; v < N / 2; ++v) {
      const int idx = layout(t, v);
      const hop::coord c = hop::d_fragment(t, v);
      ASSERT_EQ(c.row, idx % 64) << "D N=" << N << " thread " << t << " register " << v;
      ASSERT_EQ(c.col, idx / 64) << "D N=" << N << " thread " << t << " register " << v;
    }
}

TEST(HopperOracle, RegisterFragmentsMatchCute) {
  check_accumulator<8>();
  check_accumulator<64>();
  check_accumulator<128>();
  check_accumulator<256>();
  const auto a = gmma::ALayout_64x16{};  // (thread, value) -> m + 64 k
  for (int t = 0; t < 128; ++t)
    for (int v = 0; v < 8; ++v) {
      const int idx = a(t, v);
      const hop::coord c = hop::a_fragment(t, v);
      ASSERT_EQ(c.row, idx % 64) << "A thread " << t << " element " << v;
      ASSERT_EQ(c.col, idx / 64) << "A thread " << t << " element " << v;
    }
}

// The e4m3 RS atom's own layouts: A (thread, value) -> m + 64 k over 64 x 32,
// D over 64 x N. A mismatch names both linear indices (the controls' pattern).
template <class Traits, int N>
void check_e4m3_rs_traits() {
  static_assert(std::is_same_v<typename Traits::ValTypeA, E8>);
  const auto a = typename Traits::ALayout{};
  for (int t = 0; t < 128; ++t)
    for (int v = 0; v < 16; ++v) {
      const hop::coord c = hop::a_fragment_8bit(t, v);
      const int idx = a(t, v), mine = c.row + 64 * c.col;
      if (mine != idx) {
        ADD_FAILURE() << "8-bit A N=" << N << " thread " << t << " element " << v << ": emulator " << mine << ", CuTe "
                      << idx;
        return;
      }
    }
  const auto d = typename Traits::CLayout{};
  for (int t = 0; t < 128; ++t)
    for (int v = 0; v < N / 2; ++v) {
      const hop::coord c = hop::d_fragment(t, v);
      ASSERT_EQ(c.row + 64 * c.col, d(t, v)) << "e4m3 D N=" << N << " thread " << t << " register " << v;
    }
}

TEST(HopperOracle, E4m3RegisterFragmentsMatchCute) {
  check_e4m3_rs_traits<MMA_Traits<SM90_64x64x32_F32E4M3E4M3_RS_TN<>>, 64>();
  check_e4m3_rs_traits<MMA_Traits<SM90_64x128x32_F32E4M3E4M3_RS_TN<>>, 128>();
  check_e4m3_rs_traits<MMA_Traits<SM90_64x256x32_F32E4M3E4M3_RS_TN<>>, 256>();
}

// CuTe's TMA swizzle bits of a smem swizzle, as the tensor-map enum
// (CuTe's to_CUtensorMapSwizzle, which needs nvcc: DISABLE -> NONE, B32 -> 32B, ...).
template <int B>
int cu_swizzle_of(Swizzle<B, 4, 3> sw) {
  switch (detail::get_tma_swizzle_bits(sw)) {
    case TMA::SmemSwizzleBits::DISABLE: return CU_TENSOR_MAP_SWIZZLE_NONE;
    case TMA::SmemSwizzleBits::B32: return CU_TENSOR_MAP_SWIZZLE_32B;
    case TMA::SmemSwizzleBits::B64: return CU_TENSOR_MAP_SWIZZLE_64B;
    case TMA::SmemSwizzleBits::B128: return CU_TENSOR_MAP_SWIZZLE_128B;
  }
  return -1;
}

// CuTe's Swizzle<B,4,3> -> its tensor-map enum -> the emulator's TMA swizzle,
// byte for byte over a 16 KB window; then a box of the SW atom's shape.
template <int B>
void check_tma_swizzle() {
  const Swizzle<B, 4, 3> sw{};
  const int cu = cu_swizzle_of(sw);
  ASSERT_EQ(hop::tma_swizzle_bits(cu), B) << "CU_TENSOR_MAP_SWIZZLE value " << cu;
  for (std::uint32_t dst : {0u, 1024u, 8192u})
    for (std::uint32_t byte = 0; byte < 16384; ++byte)
      ASSERT_EQ(hop::tma_box_address(dst, byte, cu), static_cast<std::uint32_t>(sw(static_cast<int>(dst + byte))))
          << "swizzle bits " << B << " dst " << dst << " byte " << byte;
}

// A TMA box (span/2 elements inner, rows outer) at the tile's address holds
// element (row, x) at box byte row*span + 2x: where CuTe's K-major atom
// (rows = MN) and MN-major atom (rows = K) layouts put it.
template <int B, class KAtom, class MNAtom>
void check_box_vs_atoms() {
  g_shared_window = g_smem;
  constexpr int span = 16 << B, inner = span / 2;
  const int cu = cu_swizzle_of(Swizzle<B, 4, 3>{});
  auto k_tile = make_tensor(make_smem_ptr(reinterpret_cast<T*>(g_smem + kTileAt)),
                            tile_to_shape(KAtom{}, Shape<_64, Int<inner>>{}));
  for (int r = 0; r < 64; ++r)
    for (int x = 0; x < inner; ++x)
      ASSERT_EQ(
          hop::tma_box_address(kTileAt, r * span + 2 * x, cu) + 0u,
          static_cast<std::uint32_t>(reinterpret_cast<const unsigned char*>(raw_pointer_cast(&k_tile(r, x))) - g_smem))
          << "K-major swizzle bits " << B << " row " << r << " k " << x;
  auto mn_tile = make_tensor(make_smem_ptr(reinterpret_cast<T*>(g_smem + kTileAt)),
                             tile_to_shape(MNAtom{}, Shape<Int<inner>, _64>{}));
  for (int k = 0; k < 64; ++k)
    for (int x = 0; x < inner; ++x)
      ASSERT_EQ(
          hop::tma_box_address(kTileAt, k * span + 2 * x, cu) + 0u,
          static_cast<std::uint32_t>(reinterpret_cast<const unsigned char*>(raw_pointer_cast(&mn_tile(x, k))) - g_smem))
          << "MN-major swizzle bits " << B << " k " << k << " mn " << x;
}

// An 8-bit box (span elements inner, 64 rows) holds element (row, x) at box
// byte row*span + x: where CuTe's K-major 8-bit atom puts it.
template <int B, class KAtom>
void check_box_vs_8bit_atom() {
  g_shared_window = g_smem;
  constexpr int span = 16 << B;
  const int cu = cu_swizzle_of(Swizzle<B, 4, 3>{});
  auto k_tile = make_tensor(make_smem_ptr(reinterpret_cast<E8*>(g_smem + kTileAt)),
                            tile_to_shape(KAtom{}, Shape<_64, Int<span>>{}));
  for (int r = 0; r < 64; ++r)
    for (int x = 0; x < span; ++x)
      ASSERT_EQ(
          hop::tma_box_address(kTileAt, r * span + x, cu) + 0u,
          static_cast<std::uint32_t>(reinterpret_cast<const unsigned char*>(raw_pointer_cast(&k_tile(r, x))) - g_smem))
          << "8-bit K-major swizzle bits " << B << " row " << r << " k " << x;
}

TEST(HopperOracle, TmaSwizzleMatchesCute) {
  check_tma_swizzle<0>();
  check_tma_swizzle<1>();
  check_tma_swizzle<2>();
  check_tma_swizzle<3>();
  check_box_vs_atoms<1, gmma::Layout_K_SW32_Atom<T>, gmma::Layout_MN_SW32_Atom<T>>();
  check_box_vs_atoms<2, gmma::Layout_K_SW64_Atom<T>, gmma::Layout_MN_SW64_Atom<T>>();
  check_box_vs_atoms<3, gmma::Layout_K_SW128_Atom<T>, gmma::Layout_MN_SW128_Atom<T>>();
  check_box_vs_8bit_atom<1, gmma::Layout_K_SW32_Atom<E8>>();
  check_box_vs_8bit_atom<2, gmma::Layout_K_SW64_Atom<E8>>();
  check_box_vs_8bit_atom<3, gmma::Layout_K_SW128_Atom<E8>>();
}

// Two host codecs written by NVIDIA against the emulator's: CUTLASS's
// float_e4m3_t (its own conversion, "done to match HW") and the CUDA
// toolkit's cuda_fp8.hpp (__nv_cvt_float_to_fp8 with __NV_SATFINITE, its
// host path through double; __nv_cvt_fp8_to_halfraw): every code decoded,
// and float -> e4m3 on every 251st fp32 bit pattern (17M, both signs, NaNs
// and infinities included). All 2^32 patterns agreed once by hand.
float decode_cuda_fp8(std::uint8_t c) {
  return __half2float(__half(__nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(c), __NV_E4M3)));
}
bool same_float(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::memcmp(&a, &b, 4) == 0;
}
TEST(HopperOracle, E4m3CodecMatchesCutlassAndCudaFp8) {
  for (int c = 0; c < 256; ++c) {
    const auto u = static_cast<std::uint8_t>(c);
    const float mine = emu_e4m3_bits_to_float(u);
    ASSERT_TRUE(same_float(mine, static_cast<float>(cutlass::float_e4m3_t::bitcast(u)))) << "code " << c;
    ASSERT_TRUE(same_float(mine, decode_cuda_fp8(u))) << "code " << c;
  }
  long mismatches = 0;
  for (std::uint64_t w = 0; w <= 0xFFFFFFFFull; w += 251) {
    const auto v = static_cast<std::uint32_t>(w);
    float x;
    std::memcpy(&x, &v, 4);
    const unsigned mine = emu_float_to_e4m3_bits(x), cutlass_code = cutlass::float_e4m3_t(x).raw(),
                   cuda_code = __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3);
    if ((mine != cutlass_code || mine != cuda_code) && mismatches++ < 5)
      ADD_FAILURE() << "e4m3 of " << x << " (bits " << v << "): emulator " << mine << ", CUTLASS " << cutlass_code
                    << ", cuda_fp8.hpp " << cuda_code;
  }
  EXPECT_EQ(mismatches, 0);
}

}  // namespace

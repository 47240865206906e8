// Host stand-in for <cuda_fp8.h> (tests/emu): the e4m3 type and its
// conversions, and the emulator's own e4m3 codec, which the Hopper twins use
// (cvt_e4m3x2, the wgmma .e4m3 operands; emu_hopper.cpp). Written from the
// PTX ISA, not from the harness's codec (core/fp8.hpp): EmuHopper.Fp8Codec*
// compares the two over every code and a dense sweep of floats.
//  * .e4m3 (PTX ISA "Alternate Floating-Point Data Formats"): 1 sign, 4
//    exponent bits (bias 7), 3 mantissa bits; no infinity; NaN is 0x7F and
//    0xFF only, so S.1111.110 = 448 is the largest finite value; exponent
//    field 0: subnormals m x 2^-9.
//  * cvt.rn.satfinite.e4m3x2.f32 (PTX ISA "cvt"): round to nearest even;
//    .satfinite: NaN input -> NaN, |x| > MAX_NORM -> sign-preserved MAX_NORM
//    (infinities too). The ISA names no NaN encoding: 0x7F here (the one
//    cuda_fp8.hpp's host path gives). -0 keeps its sign (0x80), as does a
//    negative value that rounds to zero (RNE preserves the sign).
// Only E4M3 with __NV_SATFINITE is emulated; other requests abort naming it.
// With ATTN_EMU_FP8_CODEC_ONLY defined, only the two emu_* codec functions
// (the layout oracle compares them with CUTLASS's and the real cuda_fp8.h's).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

// e4m3 code -> float (exact: every e4m3 value is an fp32 normal or a small multiple of 2^-9).
inline float emu_e4m3_bits_to_float(std::uint8_t c) {
  const std::uint32_t sign = static_cast<std::uint32_t>(c & 0x80u) << 24;
  const std::uint32_t e = (c >> 3) & 0xFu, m = c & 0x7u;
  std::uint32_t u;
  if (e == 0xF && m == 0x7) {
    u = sign | 0x7FC00000u;  // NaN
  } else if (e == 0) {
    const float f = static_cast<float>(m) * 0x1p-9f;  // subnormal
    return sign ? -f : f;
  } else {
    u = sign | ((e + 127u - 7u) << 23) | (m << 20);  // 1.m x 2^(e - 7): rebias the exponent, widen the mantissa
  }
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// float -> e4m3 code, cvt.rn.satfinite.e4m3: on the fp32 bit pattern.
inline std::uint8_t emu_float_to_e4m3_bits(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, 4);
  const auto sign = static_cast<std::uint8_t>((u >> 24) & 0x80u);
  const std::uint32_t a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return 0x7F;          // NaN
  if (a >= 0x43E00000u) return sign | 0x7E;  // >= 448, infinity included: MAX_NORM (RNE never goes above it either)
  if (a >= 0x3C800000u) {                    // >= 2^-6, a normal: RNE on the 20 mantissa bits dropped; a carry
    const std::uint32_t r = (a + 0x7FFFFu + ((a >> 20) & 1u)) >> 20;  // runs into the exponent, as it should
    return static_cast<std::uint8_t>(sign | (r - ((127u - 7u) << 3)));
  }
  // Below 2^-6: q = round(|x| / 2^-9) in 0..8 (8 is the smallest normal, code 0x08).
  const std::uint32_t ef = a >> 23;   // fp32 biased exponent; |x| = m x 2^(ef - 150)
  if (ef == 0) return sign;           // fp32 subnormals: far below 2^-10
  const std::uint32_t s = 141u - ef;  // |x| / 2^-9 = m x 2^-s, s >= 21
  if (s >= 26) return sign;           // < 2^-2 of the smallest subnormal step
  const std::uint64_t m = (a & 0x7FFFFFu) | 0x800000u;
  std::uint64_t q = m >> s;
  const std::uint64_t rem = m & ((std::uint64_t{1} << s) - 1), half = std::uint64_t{1} << (s - 1);
  if (rem > half || (rem == half && (q & 1u))) ++q;
  return static_cast<std::uint8_t>(sign | q);
}

#ifndef ATTN_EMU_FP8_CODEC_ONLY
typedef unsigned char __nv_fp8_storage_t;
typedef unsigned short __nv_fp8x2_storage_t;
typedef unsigned int __nv_fp8x4_storage_t;
enum __nv_saturation_t { __NV_NOSAT, __NV_SATFINITE };
enum __nv_fp8_interpretation_t { __NV_E4M3, __NV_E5M2 };

inline void emu_fp8_unsupported(const char* what) {
  std::fprintf(stderr, "EMU cuda_fp8.h: %s is not emulated (only E4M3 with __NV_SATFINITE)\n", what);
  std::abort();
}
inline __nv_fp8_storage_t __nv_cvt_float_to_fp8(float x, __nv_saturation_t sat, __nv_fp8_interpretation_t kind) {
  if (kind != __NV_E4M3) emu_fp8_unsupported("__NV_E5M2");
  if (sat != __NV_SATFINITE) emu_fp8_unsupported("__NV_NOSAT");
  return emu_float_to_e4m3_bits(x);
}
inline __nv_fp8_storage_t __nv_cvt_double_to_fp8(double x, __nv_saturation_t sat, __nv_fp8_interpretation_t kind) {
  // Through float: a double that rounds to a float midpoint of two e4m3 values could round differently.
  return __nv_cvt_float_to_fp8(static_cast<float>(x), sat, kind);
}

struct __nv_fp8_e4m3 {
  __nv_fp8_storage_t __x = 0;
  __nv_fp8_e4m3() = default;
  explicit __nv_fp8_e4m3(float f) : __x(emu_float_to_e4m3_bits(f)) {}
  explicit operator float() const { return emu_e4m3_bits_to_float(__x); }
};
#endif  // ATTN_EMU_FP8_CODEC_ONLY

// Rounding a float to bf16 or to e4m3, kept as a float: branch-free bit
// arithmetic so the row loops vectorise (core/fp8.hpp's e4m3_round calls
// frexp/ldexp/nearbyint, ~20x slower per element). Both round to nearest,
// ties to even; tests/cpu/test_tile_kernels.cpp holds them to
// core/fp8.hpp's e4m3_round and to harness round_to on every e4m3 code, the
// midpoints between codes and random floats.
#pragma once

#include <bit>
#include <cstdint>

namespace attnbench::cpu {

// bf16: the top 16 bits of the float, rounded; infinities and NaN unchanged.
inline float bf16_round(float x) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(x);
  const std::uint32_t r = (u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u;
  return (u & 0x7F800000u) == 0x7F800000u ? x : std::bit_cast<float>(r);
}

// e4m3 (OCP E4M3FN, as cvt.rn.satfinite.e4m3x2.f32): 3 mantissa bits from
// 2^-6 up, multiples of 2^-9 below (subnormals), +-448 for larger magnitudes
// and infinities, NaN stays NaN. Selects are integer masks, every candidate
// computed: with ternaries GCC keeps the FP add under a branch (it may trap)
// and the AVX2 loop stays scalar, 15 % of an e4m3 flash2 run at 64 x 64.
inline float e4m3_round_fast(float x) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(x);
  const std::uint32_t sign = u & 0x80000000u, a = u & 0x7FFFFFFFu;
  // Normals: the fp32 mantissa rounded to 3 bits (a carry moves into the exponent).
  const std::uint32_t normal = (a + 0x7FFFFu + ((a >> 20) & 1u)) & 0xFFF00000u;
  // Subnormals: 1.5 x 2^14 has an ulp of 2^-9, so adding and subtracting it rounds to 2^-9.
  const std::uint32_t subnormal = std::bit_cast<std::uint32_t>((std::bit_cast<float>(a) + 24576.0f) - 24576.0f);
  const std::uint32_t is_sub = 0u - static_cast<std::uint32_t>(a < 0x3C800000u);   // |x| < 2^-6
  const std::uint32_t is_sat = 0u - static_cast<std::uint32_t>(a >= 0x43E00000u);  // |x| >= 448, inf, NaN
  const std::uint32_t is_nan = 0u - static_cast<std::uint32_t>(a > 0x7F800000u);
  std::uint32_t r = (subnormal & is_sub) | (normal & ~is_sub);
  r = (0x43E00000u & is_sat) | (r & ~is_sat);
  r = (a & is_nan) | (r & ~is_nan);
  return std::bit_cast<float>(r | sign);
}

}  // namespace attnbench::cpu

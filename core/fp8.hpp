// FP8 E4M3 on the host: the OCP 8-bit floating point format E4M3 ("E4M3FN",
// OCP FP8 specification v1.0; NVIDIA's .e4m3, PTX ISA "Alternate Floating
// Point Data Formats"): 1 sign bit, 4 exponent bits (bias 7), 3 mantissa
// bits, no infinities, S.1111.111 the only NaN; largest finite 448
// (S.1111.110 = 1.75 x 2^8), smallest normal 2^-6, subnormals m x 2^-9.
//
// Encoding rounds to nearest, ties to even, and saturates to +-448 like the
// device's cvt.rn.satfinite.e4m3x2.f32 (infinities too); NaN encodes as
// 0x7F. tests/cpu/test_fp8.cpp checks every code and the rounding edges, and
// tests/python/test_fp8_codec.py checks both directions against ml_dtypes.
//
// Per-tensor scaling (Transformer Engine's, FA3's descale): a tensor X is
// stored as codes c = e4m3(X / s) with s = amax(|X|) / 448 (1 when X is all
// zero), and read as X' = c * s; s is the tensor's scale ("descale" in FA3).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace attnbench {

inline constexpr float e4m3_max = 448.0f;

float e4m3_to_float(std::uint8_t code);
std::uint8_t e4m3_from_float(float x);  // RNE, saturating, NaN -> 0x7F
// The nearest e4m3 value of x (saturating), as a float.
inline float e4m3_round(float x) { return e4m3_to_float(e4m3_from_float(x)); }

// amax / 448 over x (finite values); 1 when every value is 0.
float e4m3_scale_for(std::span<const float> x);
// Codes of x / scale.
std::vector<std::uint8_t> e4m3_encode(std::span<const float> x, float scale);

}  // namespace attnbench

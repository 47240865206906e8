#include "core/fp8.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnbench {

float e4m3_to_float(std::uint8_t code) {
  const bool neg = code & 0x80u;
  const int e = (code >> 3) & 0xF, m = code & 0x7;
  float a;
  if (e == 0xF && m == 0x7)
    a = std::numeric_limits<float>::quiet_NaN();
  else if (e == 0)
    a = std::ldexp(static_cast<float>(m), -9);  // subnormal: m x 2^-9
  else
    a = std::ldexp(static_cast<float>(8 + m), e - 10);  // 1.m x 2^(e-7)
  return neg ? -a : a;
}

std::uint8_t e4m3_from_float(float x) {
  if (std::isnan(x)) return 0x7F;
  const std::uint8_t sign = std::signbit(x) ? 0x80u : 0u;
  const float a = std::fabs(x);
  if (a >= e4m3_max) return sign | 0x7Eu;  // satfinite (infinities included)
  if (a == 0) return sign;                 // +-0: frexp(0) gives no binade (it would encode 0 as -256)
  // Steps are 2^-9 below 2^-6 (subnormals) and 2^(e-3) in [2^e, 2^(e+1)); the
  // quotient is exact (a power of two) and nearbyint rounds ties to even.
  int e2 = 0;
  std::frexp(a, &e2);  // a = f x 2^e2, f in [0.5, 1)
  const int e = std::max(e2 - 1, -6);
  const float q = std::nearbyint(std::ldexp(a, 3 - e));  // in [0, 16]
  int code;
  if (e == -6 && q < 8)
    code = static_cast<int>(q);  // subnormal (q = 8 is the smallest normal, code 0x08)
  else if (q >= 16)
    code = ((e + 8) << 3);  // rounded up into the next binade
  else
    code = ((e + 7) << 3) | (static_cast<int>(q) - 8);
  return sign | static_cast<std::uint8_t>(std::min(code, 0x7E));
}

float e4m3_scale_for(std::span<const float> x) {
  float amax = 0.f;
  for (float v : x)
    if (std::isfinite(v)) amax = std::max(amax, std::fabs(v));
  if (!(amax > 0.f)) return 1.f;
  // amax below 448 x 2^-149 divides to 0: the smallest float keeps the scale positive (codes stay exact).
  return std::max(amax / e4m3_max, std::numeric_limits<float>::denorm_min());
}

std::vector<std::uint8_t> e4m3_encode(std::span<const float> x, float scale) {
  std::vector<std::uint8_t> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = e4m3_from_float(x[i] / scale);
  return out;
}

}  // namespace attnbench

// Host stand-in for <cuda_fp16.h> (tests/emu): __half as raw bits, float ->
// half round-to-nearest-even through _Float16.
#pragma once

#include <cstdint>
#include <cstring>

struct __half {
  std::uint16_t x;
};
struct __half2 {
  __half x, y;
};
inline std::uint16_t emu_float_to_half_bits(float f) {
  const _Float16 h = static_cast<_Float16>(f);
  std::uint16_t u;
  std::memcpy(&u, &h, 2);
  return u;
}
inline float emu_half_bits_to_float(std::uint16_t u) {
  _Float16 h;
  std::memcpy(&h, &u, 2);
  return static_cast<float>(h);
}
inline __half __float2half_rn(float f) { return {emu_float_to_half_bits(f)}; }
inline __half __float2half(float f) { return __float2half_rn(f); }
inline float __half2float(__half h) { return emu_half_bits_to_float(h.x); }
inline __half2 __floats2half2_rn(float lo, float hi) {
  return {{emu_float_to_half_bits(lo)}, {emu_float_to_half_bits(hi)}};
}

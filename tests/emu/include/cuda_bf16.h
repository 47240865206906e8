// Host stand-in for <cuda_bf16.h> (tests/emu): __nv_bfloat16 as raw bits,
// float -> bf16 round-to-nearest-even, NaN kept NaN.
#pragma once

#include <cstdint>
#include <cstring>

struct __nv_bfloat16 {
  std::uint16_t x;
};
struct __nv_bfloat162 {
  __nv_bfloat16 x, y;
};
inline std::uint16_t emu_float_to_bf16_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<std::uint16_t>(u >> 16);
}
inline float emu_bf16_bits_to_float(std::uint16_t h) {
  const std::uint32_t u = std::uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline __nv_bfloat16 __float2bfloat16_rn(float f) { return {emu_float_to_bf16_bits(f)}; }
inline __nv_bfloat16 __float2bfloat16(float f) { return __float2bfloat16_rn(f); }
inline float __bfloat162float(__nv_bfloat16 h) { return emu_bf16_bits_to_float(h.x); }
inline __nv_bfloat162 __floats2bfloat162_rn(float lo, float hi) {
  return {{emu_float_to_bf16_bits(lo)}, {emu_float_to_bf16_bits(hi)}};
}

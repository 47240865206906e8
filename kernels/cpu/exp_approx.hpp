// exp(x) for the CPU kernels' row operations, scalar (vectorised by the
// compiler) and as 16 AVX-512 lanes, the same formula. Cephes expf: x = n ln2 + r, |r| <= ln2/2, degree-6
// polynomial, 2^n through the exponent bits; ~1 ulp for x <= 88, 0 below
// -87.3 (so exp(-inf) = 0 and masked scores drop out exactly). Branch-free so
// loops vectorise; std::exp does not.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace attnbench::cpu {

inline constexpr float exp_lo = -87.3f, exp_hi = 88.3f;
inline constexpr float exp_c[] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                                  4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};

inline float exp_approx(float x) {
  const float xc = std::min(std::max(x, exp_lo), exp_hi);
  float fx = xc * 1.44269504088896341f;
  fx = (fx + 12582912.0f) - 12582912.0f;  // round to nearest (1.5 * 2^23 trick)
  const float r = (xc - fx * 0.693359375f) + fx * 2.12194440e-4f;
  float y = exp_c[0];
  for (int t = 1; t < 6; ++t) y = y * r + exp_c[t];
  y = y * r * r + r + 1.0f;
  const float two_n = std::bit_cast<float>((static_cast<std::int32_t>(fx) + 127) << 23);
  return x < exp_lo ? 0.0f : y * two_n;
}

#if defined(__x86_64__) && defined(__GNUC__)
// Full-mask maskz forms of max, min, cvtt and slli: GCC 12.2's unmasked forms start from
// _mm512_undefined_*(), which its own -Wmaybe-uninitialized flags at every inlining (GCC PR
// 105593, fixed in 12.3); with a constant all-ones mask GCC emits the same unmasked instruction.
inline constexpr __mmask16 all16 = 0xFFFF;
__attribute__((target("avx512f"))) inline __m512 max16(__m512 a, __m512 b) { return _mm512_maskz_max_ps(all16, a, b); }
__attribute__((target("avx512f"))) inline __m512 min16(__m512 a, __m512 b) { return _mm512_maskz_min_ps(all16, a, b); }

__attribute__((target("avx512f"))) inline __m512 exp_approx16(__m512 x) {
  const __m512 xc = min16(max16(x, _mm512_set1_ps(exp_lo)), _mm512_set1_ps(exp_hi));
  const __m512 magic = _mm512_set1_ps(12582912.0f);
  const __m512 fx = _mm512_sub_ps(_mm512_add_ps(_mm512_mul_ps(xc, _mm512_set1_ps(1.44269504088896341f)), magic), magic);
  const __m512 r = _mm512_add_ps(_mm512_sub_ps(xc, _mm512_mul_ps(fx, _mm512_set1_ps(0.693359375f))),
                                 _mm512_mul_ps(fx, _mm512_set1_ps(2.12194440e-4f)));
  __m512 y = _mm512_set1_ps(exp_c[0]);
  for (int t = 1; t < 6; ++t) y = _mm512_add_ps(_mm512_mul_ps(y, r), _mm512_set1_ps(exp_c[t]));
  y = _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(_mm512_mul_ps(y, r), r), r), _mm512_set1_ps(1.0f));
  const __m512i n = _mm512_maskz_slli_epi32(
      all16, _mm512_add_epi32(_mm512_maskz_cvttps_epi32(all16, fx), _mm512_set1_epi32(127)), 23);
  const __mmask16 underflow = _mm512_cmp_ps_mask(x, _mm512_set1_ps(exp_lo), _CMP_LT_OQ);
  return _mm512_maskz_mul_ps(static_cast<__mmask16>(~underflow), y, _mm512_castsi512_ps(n));
}
#endif

}  // namespace attnbench::cpu

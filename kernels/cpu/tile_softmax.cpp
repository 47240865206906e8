// Online softmax on transposed score tiles (tile_softmax.hpp): 16 query rows
// per AVX-512 vector; two sweeps over the tile (max, then exp and sum) while
// it sits in L1 (64 x 64 floats = 16 KiB). Without AVX-512: the same loops on
// scalars, vectorised by the compiler across the rows.
#include "kernels/cpu/tile_softmax.hpp"

#include <limits>

#include "kernels/cpu/exp_approx.hpp"
#include "kernels/cpu/tile_gemm.hpp"

namespace attnbench::cpu {

namespace {

constexpr float neg_inf = -std::numeric_limits<float>::infinity();

// online: m/l in, alpha out (flash2); else m/l out as the block's own max and sum (flash1).
template <bool online>
void softmax_columns_scalar(float* st, std::int64_t cols, std::int64_t ld, std::int64_t rows, float* m, float* l,
                            float* alpha) {
  float mx[256], mu[256], sum[256];  // rows <= Br <= 256
  for (std::int64_t i = 0; i < rows; ++i) mx[i] = online ? m[i] : neg_inf;
  for (std::int64_t j = 0; j < cols; ++j) {
    const float* sj = st + j * ld;
#pragma omp simd
    for (std::int64_t i = 0; i < rows; ++i) mx[i] = sj[i] > mx[i] ? sj[i] : mx[i];
  }
  for (std::int64_t i = 0; i < rows; ++i) {
    mu[i] = mx[i] == neg_inf ? 0.0f : mx[i];
    sum[i] = 0.0f;
  }
  for (std::int64_t j = 0; j < cols; ++j) {
    float* sj = st + j * ld;
#pragma omp simd
    for (std::int64_t i = 0; i < rows; ++i) {
      sj[i] = exp_approx(sj[i] - mu[i]);
      sum[i] += sj[i];
    }
  }
  for (std::int64_t i = 0; i < rows; ++i) {
    if constexpr (online) {
      alpha[i] = exp_approx(m[i] - mu[i]);
      l[i] = l[i] * alpha[i] + sum[i];
    } else {
      l[i] = sum[i];
    }
    m[i] = mx[i];
  }
}

#if defined(__x86_64__) && defined(__GNUC__)

template <bool online>
__attribute__((target("avx512f"))) void softmax_columns_avx512(float* st, std::int64_t cols, std::int64_t ld,
                                                               std::int64_t rows, float* m, float* l, float* alpha) {
  const __m512 ninf = _mm512_set1_ps(neg_inf);
  for (std::int64_t i0 = 0; i0 < rows; i0 += 16) {
    const std::int64_t lanes = std::min<std::int64_t>(16, rows - i0);
    const __mmask16 k = static_cast<__mmask16>((1u << lanes) - 1u);
    __m512 mx = online ? _mm512_mask_loadu_ps(ninf, k, m + i0) : ninf;
    float* s = st + i0;
    for (std::int64_t j = 0; j < cols; ++j) mx = max16(mx, _mm512_mask_loadu_ps(ninf, k, s + j * ld));
    const __mmask16 none_seen = _mm512_cmp_ps_mask(mx, ninf, _CMP_EQ_OQ);
    const __m512 mu = _mm512_mask_blend_ps(none_seen, mx, _mm512_setzero_ps());
    __m512 sum0 = _mm512_setzero_ps(), sum1 = _mm512_setzero_ps();
    std::int64_t j = 0;
    for (; j + 2 <= cols; j += 2) {
      const __m512 p0 = exp_approx16(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, s + j * ld), mu));
      const __m512 p1 = exp_approx16(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, s + (j + 1) * ld), mu));
      _mm512_mask_storeu_ps(s + j * ld, k, p0);
      _mm512_mask_storeu_ps(s + (j + 1) * ld, k, p1);
      sum0 = _mm512_add_ps(sum0, p0);
      sum1 = _mm512_add_ps(sum1, p1);
    }
    if (j < cols) {
      const __m512 p0 = exp_approx16(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, s + j * ld), mu));
      _mm512_mask_storeu_ps(s + j * ld, k, p0);
      sum0 = _mm512_add_ps(sum0, p0);
    }
    const __m512 sum = _mm512_add_ps(sum0, sum1);
    if constexpr (online) {
      const __m512 a = exp_approx16(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, m + i0), mu));
      _mm512_mask_storeu_ps(alpha + i0, k, a);
      _mm512_mask_storeu_ps(l + i0, k, _mm512_fmadd_ps(_mm512_maskz_loadu_ps(k, l + i0), a, sum));
    } else {
      _mm512_mask_storeu_ps(l + i0, k, sum);
    }
    _mm512_mask_storeu_ps(m + i0, k, mx);
  }
}

#endif

template <bool online>
void softmax_columns(float* st, std::int64_t cols, std::int64_t ld, std::int64_t rows, float* m, float* l,
                     float* alpha) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (tile_gemm_vectorised()) return softmax_columns_avx512<online>(st, cols, ld, rows, m, l, alpha);
#endif
  softmax_columns_scalar<online>(st, cols, ld, rows, m, l, alpha);
}

}  // namespace

// Both paths (AVX-512 and scalar) exponentiate every score of the tile's real rows
// and, online, one alpha per row; lanes past `rows` in the last vector are not counted.
std::int64_t online_softmax_columns(float* st, std::int64_t cols, std::int64_t ld, std::int64_t rows, float* m,
                                    float* l, float* alpha) {
  softmax_columns<true>(st, cols, ld, rows, m, l, alpha);
  return rows * (cols + 1);
}

std::int64_t block_softmax_columns(float* st, std::int64_t cols, std::int64_t ld, std::int64_t rows, float* m_blk,
                                   float* l_blk) {
  softmax_columns<false>(st, cols, ld, rows, m_blk, l_blk, nullptr);
  return rows * cols;
}

}  // namespace attnbench::cpu

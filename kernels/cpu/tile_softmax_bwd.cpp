// Backward element-wise tile steps (tile_softmax_bwd.hpp): plain loops over a
// column of query rows, compiled for AVX-512, AVX2 and baseline x86-64 and
// picked at load time (the scalar exp_approx vectorises under omp simd).
#include "kernels/cpu/tile_softmax_bwd.hpp"

#include <cmath>
#include <limits>

#include "kernels/cpu/exp_approx.hpp"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define ATTNBENCH_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define ATTNBENCH_CLONES
#endif

namespace attnbench::cpu {

ATTNBENCH_CLONES std::int64_t probabilities_from_lse_columns(float* st, std::int64_t cols, std::int64_t ld,
                                                             std::int64_t rows, const float* lse) {
  float mu[256];                                                                       // rows <= Br <= 256
  for (std::int64_t i = 0; i < rows; ++i) mu[i] = std::isinf(lse[i]) ? 0.0f : lse[i];  // -inf: scores all -inf
  for (std::int64_t j = 0; j < cols; ++j) {
    float* s = st + j * ld;
#pragma omp simd
    for (std::int64_t i = 0; i < rows; ++i) s[i] = exp_approx(s[i] - mu[i]);
  }
  return rows * cols;
}

ATTNBENCH_CLONES void softmax_grad_columns(float* dpt, const float* pt, std::int64_t cols, std::int64_t ld,
                                           std::int64_t rows, const float* delta) {
  for (std::int64_t j = 0; j < cols; ++j) {
    float* ds = dpt + j * ld;
    const float* pj = pt + j * ld;
#pragma omp simd
    for (std::int64_t i = 0; i < rows; ++i) ds[i] = pj[i] * (ds[i] - delta[i]);
  }
}

}  // namespace attnbench::cpu

// Backward element-wise tile steps (tile_softmax_bwd.hpp): plain loops along a
// row's keys, compiled for AVX-512, AVX2 and baseline x86-64 and picked at load
// time (the scalar exp_approx vectorises under omp simd).
#include "kernels/cpu/tile_softmax_bwd.hpp"

#include <cmath>

#include "kernels/cpu/exp_approx.hpp"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define ATTNBENCH_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define ATTNBENCH_CLONES
#endif

namespace attnbench::cpu {

ATTNBENCH_CLONES std::int64_t probabilities_from_lse(float* s, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                                                     const float* lse) {
  for (std::int64_t i = 0; i < rows; ++i) {
    const float mu = std::isinf(lse[i]) ? 0.0f : lse[i];  // -inf: the row's scores are all -inf
    float* si = s + i * ld;
#pragma omp simd
    for (std::int64_t j = 0; j < cols; ++j) si[j] = exp_approx(si[j] - mu);
  }
  return rows * cols;
}

ATTNBENCH_CLONES void softmax_grad(float* ds, const float* p, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                                   const float* delta) {
  for (std::int64_t i = 0; i < rows; ++i) {
    float* di = ds + i * ld;
    const float* pi = p + i * ld;
    const float dl = delta[i];
#pragma omp simd
    for (std::int64_t j = 0; j < cols; ++j) di[j] = pi[j] * (di[j] - dl);
  }
}

}  // namespace attnbench::cpu

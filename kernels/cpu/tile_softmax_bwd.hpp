// The element-wise steps of the flash backward on a score tile held query-major
// (query row i at s[i * ld], its keys contiguous): P recomputed from the
// forward's log-sum-exp, and the softmax gradient dS = P * (dP - D). Each row's
// lse or D is one scalar, so both loops vectorise along the keys.
#pragma once

#include <cstdint>

namespace attnbench::cpu {

// s[i * ld + j] <- exp(s[i * ld + j] - lse[i]) for i < rows, j < cols; a row with
// lse = -inf (no visible key: every score -inf) gets zeros. Returns the exps: rows * cols.
std::int64_t probabilities_from_lse(float* s, std::int64_t rows, std::int64_t cols, std::int64_t ld, const float* lse);

// ds[i * ld + j] <- p[i * ld + j] * (ds[i * ld + j] - delta[i]).
void softmax_grad(float* ds, const float* p, std::int64_t rows, std::int64_t cols, std::int64_t ld, const float* delta);

}  // namespace attnbench::cpu

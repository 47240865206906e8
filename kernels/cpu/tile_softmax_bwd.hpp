// The element-wise steps of the flash backward on a transposed tile (keys x
// query rows, query row i in column i, as the forward's tile_softmax.hpp):
// P recomputed from the forward's log-sum-exp, and the softmax gradient
// dS = P * (dP - D). Both vectorised across query rows (the contiguous axis).
#pragma once

#include <cstdint>

namespace attnbench::cpu {

// st[j * ld + i] <- exp(st[j * ld + i] - lse[i]) for j < cols, i < rows; a row with
// lse = -inf (no visible key: every score -inf) gets zeros. Returns the exps: rows * cols.
std::int64_t probabilities_from_lse_columns(float* st, std::int64_t cols, std::int64_t ld, std::int64_t rows,
                                            const float* lse);

// dpt[j * ld + i] <- pt[j * ld + i] * (dpt[j * ld + i] - delta[i]).
void softmax_grad_columns(float* dpt, const float* pt, std::int64_t cols, std::int64_t ld, std::int64_t rows,
                          const float* delta);

}  // namespace attnbench::cpu

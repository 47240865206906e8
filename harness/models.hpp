// Analytical FLOP and byte models, one function per variant
// (docs/models.md derives each formula). Element size follows p.type.
#pragma once

#include "harness/problem.hpp"

namespace attnbench {

// Useful FLOPs: 4 * d per visible (query, key) pair (QK^T and PV, one FMA = 2
// FLOPs), times B * H. exp, max, scaling and division are not counted.
double model_flops_softmax(const problem& p);
// Linear attention (phi = elu + 1); see docs/models.md.
double model_flops_linear(const problem& p);

// Minimum traffic: read Q, K, V once (Hkv heads of K/V), write O once.
double model_bytes_min(const problem& p);

}  // namespace attnbench

// The naive algorithm's three passes, shared by `naive` and
// `naive_gqa_expand` (which runs them on K/V already expanded to H heads).
#pragma once

#include "kernels/cpu/cpu_common.hpp"

namespace attnbench::cpu {

// s and pm are [B, H, Nq, Nkv] fp32 workspaces (S and P). Adds to `bytes` and `exps`.
void naive_forward(const problem& p, const float* q, const float* k, const float* v, float* o, float* s, float* pm,
                   byte_counter& bytes, exp_counter& exps);

}  // namespace attnbench::cpu

// The naive algorithm's three passes, shared by `naive` and
// `naive_gqa_expand` (which runs them on K/V already expanded to H heads), and the
// two tile-product passes the forward shares with the naive backward.
#pragma once

#include "kernels/cpu/cpu_common.hpp"

namespace attnbench::cpu {

// s and pm are [B, H, Nq, Nkv] fp32 workspaces (S and P). Adds to `bytes` and `exps`.
void naive_forward(const problem& p, const float* q, const float* k, const float* v, float* o, float* s, float* pm,
                   byte_counter& bytes, exp_counter& exps);

// Both passes run inside an OpenMP parallel region (their `omp for` binds to it) over the
// (query tile, batch, head) grid, `buf` a thread's buffer of at least Br d + Bc d + Br Bc
// floats. rows is [B, H, Nq, d], kv [B, Hkv, Nkv, d], scores [B, H, Nq, Nkv].
// scores = alpha rows kv^T, -inf past the mask when `masked` (S = scale Q K^T; dP = dO V^T).
void naive_rows_times_kv_t(const problem& p, const float* rows, const float* kv, float alpha, bool masked,
                           float* scores, float* buf, byte_counter& bytes);
// out = alpha scores kv (O = P V; dQ = scale dS K).
void naive_scores_times_kv(const problem& p, const float* scores, const float* kv, float alpha, float* out, float* buf,
                           byte_counter& bytes);

}  // namespace attnbench::cpu

// Launchers shared by the unfused rows (naive, naive_gqa_expand,
// cublas_unfused): a plain tiled GEMM for the naive passes, the masked
// softmax between the GEMMs, and the K/V head expansion of naive_gqa_expand.
#pragma once

#include <cstdint>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "core/problem.hpp"

namespace attnbench::cuda {

// Batched C = alpha * A * op(B) over the B*H query heads, 32 x 32 output tiles.
//   scores:  S[z] (fp32, Nq x Nkv) = alpha * Q[z] K[kv(z)]^T
//   output:  O[z] (T, Nq x d)      = P[z] (fp32) V[kv(z)]
// z = b * H + h and kv(z) = b * Hkv + h / (H / Hkv). Pointers are device
// pointers in p.type (Q, K, V, O) or fp32 (S, P).
void launch_naive_scores(const problem& p, const void* q, const void* k, float* s, float alpha, cudaStream_t st);
void launch_naive_output(const problem& p, const float* prob, const void* v, void* o, cudaStream_t st);

// Row-wise masked softmax of scaled scores S [B*H*Nq, Nkv] (fp32): writes P
// (fp32 when p_fp32, else in p.type) and lse [B*H*Nq]. Masked entries get
// P = 0; rows with no visible key get P = 0 and lse = -inf.
void launch_masked_softmax(const problem& p, const float* s, void* prob, bool p_fp32, float* lse, cudaStream_t st);

// cublas_unfused backward (softmax_backward.cu), one block per query row:
// dS = P * (dP - D) with D = rowsum(dO * O), unscaled. O, dO, P and dS in
// p.type, dP fp32 [B*H*Nq, Nkv].
void launch_softmax_backward(const problem& p, const void* o, const void* d_o, const void* prob, const float* dp,
                             void* ds, cudaStream_t st);

// K/V [B, Hkv, Nkv, d] -> [B, H, Nkv, d], query head h getting KV head h / group.
void launch_expand_kv(const problem& p, const void* src, void* dst, cudaStream_t st);

// The process's cuBLAS handle (created on first use, never destroyed; unfused_rows.cu).
cublasHandle_t cublas_handle();

// The cublas_unfused forward (unfused_rows.cu) on the caller's buffers, enqueued on
// cuda::stream(): S = Q K^T / sqrt(d) (fp32, [B*H*Nq, Nkv]), the masked softmax, P (p.type),
// O = P V (p.type) and lse; also the linformer row's attention over its projected keys.
struct cublas_forward_buffers {
  const void *q, *k, *v;
  float* s;
  void* prob;
  void* o;
  float* lse;
};
void enqueue_cublas_forward(const problem& p, const cublas_forward_buffers& f);

}  // namespace attnbench::cuda

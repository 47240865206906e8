// Byte and FLOP models of the CUDA kernels whose global-memory traffic differs
// from the CPU algorithm modeled in harness/models.hpp (docs/models_cuda.md
// derives each one). Where the GPU algorithm does what the CPU one does, the
// rows use harness/models.hpp directly (useful FLOPs, naive's executed FLOPs,
// flash1's executed FLOPs, bytes_min).
//
// "Bytes" are the global-memory requests the kernels issue, each element
// counted once per request at the block level (what a cache-less GPU would
// move); L2 hits are not subtracted. Element size of Q, K, V, O follows
// p.type; S, the softmax statistics and linear attention's state are fp32.
// memory_bytes: device bytes a run allocates (inputs, outputs, workspace).
#pragma once

#include <cstdint>

#include "harness/problem.hpp"

namespace attnbench {

// Fixed tile edges of the CUDA kernels (the models depend on them).
inline constexpr std::int64_t cuda_naive_tile = 32;      // naive GEMMs: 32 x 32 outputs, k-step 32
inline constexpr std::int64_t cuda_linear_rows = 16;     // linear output pass: rows per sub-tile
inline constexpr std::int64_t cuda_linear_state_rows = 32;  // linear state pass: state rows per block

// naive (cuda): tiled GEMM S = QK^T (fp32), masked softmax writing P (fp32)
// and lse, tiled GEMM O = PV.
double model_bytes_naive_cuda(const problem& p);
std::int64_t memory_bytes_naive_cuda(const problem& p);
// naive_gqa_expand (cuda): K and V copied to H heads, then naive with Hkv = H.
double model_bytes_naive_gqa_expand_cuda(const problem& p);
std::int64_t memory_bytes_naive_gqa_expand_cuda(const problem& p);
// cublas_unfused: two cuBLAS GEMMs (each operand counted once: the minimum a
// GEMM can move; cuBLAS's own tiling is not modeled), S in fp32, softmax
// reading S twice and writing P in p.type.
double model_bytes_cublas_unfused(const problem& p);
std::int64_t memory_bytes_cublas_unfused(const problem& p);
// flash1 (cuda): one block per (b, h, query tile) runs Algorithm 1's KV loop;
// Q_i stays in shared memory, O_i (fp32), l_i, m_i go through global memory
// between KV blocks; the last block writes O (p.type) and lse.
double model_bytes_flash1_cuda(const problem& p);
std::int64_t memory_bytes_flash1_cuda(const problem& p);
// Shared memory of one flash1 block (Q, K, V tiles in p.type with rows padded
// by 4 bytes, S in fp32, two per-row factors).
std::int64_t flash1_smem_bytes(const problem& p);
// linear (cuda): state pass per (b, KV head, 32 state rows), then output pass
// per 16 query rows (causal: chunk = Bc, intra-chunk keys read per sub-tile).
double model_bytes_linear_cuda(const problem& p);
double model_flops_executed_linear_cuda(const problem& p);
std::int64_t memory_bytes_linear_cuda(const problem& p);

}  // namespace attnbench

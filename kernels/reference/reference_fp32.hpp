// fp32 CPU reference of every row: the cpu backend's all-rows check, the
// twin of the CUDA backend's on-device fp32 reference (kernels/cuda/reference). The
// fp64 reference (attention_reference.hpp) stays the judge of rel_err on sampled rows;
// this one makes every row's error cheap enough to measure on every configuration.
//
// Per (batch, query head) and block of query rows, the blocks in parallel (OpenMP, OpenBLAS
// single-threaded meanwhile): S = Q K^T (softmax; linear: phi(Q) phi(K)^T) over the keys
// the block's rows see, by OpenBLAS's sgemm -- not the CPU kernels' AVX-512 tile
// products --, the mask and the row weights W (softmax: exp(s / sqrt(d) - m) over the
// visible keys, m their maximum; linear: s itself) in fp32 with the row sums in fp64,
// then O = W V by sgemm and the division by the row sum. Masks through core/mask.hpp:
// the global prefix and the window interval per row; sparse terms key by key (is_visible).
#pragma once

#include <vector>

#include "core/variant.hpp"

namespace attnbench {

struct reference_all_rows {
  std::vector<float> o;    // [B*H*Nq, d]; rows without a visible key: 0
  std::vector<float> lse;  // [B*H*Nq], -inf without a visible key; empty for linear
};

// Throws input_error for a mask linear attention does not define (as reference_linear).
reference_all_rows reference_fp32_all_rows(attention_math m, const host_inputs& in);

// Bytes reference_fp32_all_rows holds at its peak for p (outputs and one score block).
std::int64_t reference_fp32_bytes(const problem& p);

}  // namespace attnbench

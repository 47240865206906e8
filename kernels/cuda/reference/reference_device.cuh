// On-device fp32 reference: plain, slow, obviously right. Used by the GPU
// tests to check shapes too large for the fp64 CPU reference (which is itself
// checked against this one on small shapes).
//
// One warp per query row. Softmax: pass 1, lanes take keys j = lane, lane+32,
// ... and keep an online (max, sum) of the visible scores; pass 2 walks the
// visible keys in order, the warp computing each score together (lanes split
// d) and accumulating p * v_j into lanes' slices of the output row. Linear:
// one pass over the visible keys, accumulating w_j = phi(q).phi(k_j) times
// [v_j, 1]. Inputs in p.type, arithmetic and outputs in fp32.
#pragma once

#include <cuda_runtime.h>

#include "core/variant.hpp"

namespace attnbench::cuda {

// q, k, v: device pointers in p.type, layouts as in core/problem.hpp.
// o: [B*H*Nq, d] fp32; lse: [B*H*Nq] fp32 (-inf for rows without a visible
// key; may be null). Enqueued on `st`; rows without a visible key give zeros.
void reference_softmax_fp32_device(const problem& p, const void* q, const void* k, const void* v,
                                   float* o, float* lse, cudaStream_t st);
// Linear attention (phi = elu + 1), masks none and causal; lse is not written.
void reference_linear_fp32_device(const problem& p, const void* q, const void* k, const void* v,
                                  float* o, cudaStream_t st);

// Convenience for tests: uploads in.q/k/v (rounded to in.p.type), runs the
// reference for `math` and returns O (and lse for softmax) in fp32.
host_outputs reference_fp32_on_device(attention_math math, const host_inputs& in);

}  // namespace attnbench::cuda

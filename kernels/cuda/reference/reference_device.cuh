// On-device fp32 reference: plain and obviously right. Used by the GPU tests and the
// sweep's check of every output element (harness/cuda/device_check.cpp) on shapes too large
// for the fp64 CPU reference (which is itself checked against this one on small shapes).
//
// Softmax, by default: fp32 GEMMs on cuBLAS around a masked row softmax (reference_path
// below), the scores of up to 512 MiB of query rows at a time; the kernel below when they do
// not fit.
//
// One warp per query row. Softmax: pass 1, lanes take keys j = lane, lane+32,
// ... and keep an online (max, sum) of the visible scores (each tile of 32 keys
// staged through shared memory in slabs of 32 elements, so K is read coalesced;
// a tile without a visible key is skipped); pass 2 walks the visible keys in
// order, the warp computing each score together (lanes split d) and
// accumulating p * v_j into lanes' slices of the output row. Visibility of
// query head h (per-head layouts); sparse terms must be in device memory.
// Cost (measured on an H200, 2026-12-04: ~14 s for B4 H16 N 16k d 128 without a mask, 0.6
// TFLOP/s at 4 d FLOPs per pair; what a large forward entry waits on): pass 1 ~2 d / 32
// warp instructions per key of a visible tile, pass 2 ~(3 d / 32 + 12) per
// visible key, i.e. ~6 d FLOPs per visible pair at ~10-17 SM cycles per pair. Linear:
// one pass over the visible keys, accumulating w_j = phi(q).phi(k_j) times
// [v_j, 1]. Inputs in p.type, arithmetic and outputs in fp32.
#pragma once

#include <cuda_runtime.h>

#include "core/cuda/device_buffer.cuh"
#include "core/variant.hpp"
#include "kernels/cuda/common/device_mask.cuh"

namespace attnbench::cuda {

// How the softmax reference computes: by default fp32 GEMMs on cuBLAS (CUBLAS_COMPUTE_32F,
// no TF32) around a masked row softmax, per (batch, KV head) in pieces of at most 512 MiB of
// scores; the warp-per-row kernel above when those buffers do not fit (or when asked, for its
// tests). The GEMMs: 4 d FLOPs per pair at fp32 rates (~51 TFLOP/s on an H200) against the
// warp kernel's 0.6 TFLOP/s measured there.
enum class reference_path {
  gemm_when_it_fits,
  gemm_in_7_row_pieces,  // for its tests: pieces that split a head's rows and cross heads
  warp_kernel,
};

// The GEMM path's buffers (fp32 copies of Q, K, V and a piece of scores), returned to the
// caller: freeing them waits for the stream, so the caller keeps them past its own wait
// (harness/cuda/device_check.cpp waits under the check's deadline). Empty for the warp kernel.
struct reference_workspace {
  device_buffer q, k, v, s;
};

// q, k, v: device pointers in p.type, layouts as in core/problem.hpp.
// o: [B*H*Nq, d] fp32; lse: [B*H*Nq] fp32 (-inf for rows without a visible
// key; may be null). Enqueued on `st`; rows without a visible key give zeros.
[[nodiscard]] reference_workspace reference_softmax_fp32_device(
    const problem& p, const void* q, const void* k, const void* v, float* o, float* lse, cudaStream_t st,
    reference_path path = reference_path::gemm_when_it_fits);
// Linear attention (phi = elu + 1), masks none and causal; lse is not written.
void reference_linear_fp32_device(const problem& p, const void* q, const void* k, const void* v, float* o,
                                  cudaStream_t st);

// Convenience for tests: uploads in.q/k/v (rounded to in.p.type), runs the
// reference for `math` and returns O (and lse for softmax) in fp32.
host_outputs reference_fp32_on_device(attention_math math, const host_inputs& in,
                                      reference_path path = reference_path::gemm_when_it_fits);

}  // namespace attnbench::cuda

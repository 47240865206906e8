// cublas_unfused backward, the kernel between its GEMMs: the softmax backward.
//
// Idea: one block of 128 threads per query row, the masked softmax's grid.
// D = rowsum(dO * O) over the row's d elements (a block reduction), then
// dS = P * (dP - D) over its Nkv scores, written in the input dtype for the
// dQ and dK GEMMs (cuBLAS takes A and B of one type). The softmax scale is
// the GEMMs' alpha, not applied here. P is the forward's (0 where masked and
// on rows with no visible key), so masked pairs and empty rows get dS = 0
// without looking at the mask. Predecessor: the forward's masked softmax.
// Expected bottleneck: memory: dP (fp32) and P read, dS written, 8 + 2
// bytes per score in fp16/bf16 (12 in fp32) for two FLOPs.
#include <cstdint>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/dtype_traits.cuh"
#include "core/cuda/launch.cuh"
#include "kernels/cuda/unfused/unfused_kernels.cuh"

namespace attnbench::cuda {

namespace {

constexpr int threads = 128;

template <class T>
__global__ void __launch_bounds__(threads)
    softmax_backward_kernel(problem p, const T* o, const T* d_o, const T* prob, const float* dp, T* ds) {
  const std::int64_t row = blockIdx.x;
  float part = 0.f;
  for (std::int64_t c = threadIdx.x; c < p.d; c += threads)
    part += to_float(d_o[row * p.d + c]) * to_float(o[row * p.d + c]);
  for (int off = 16; off > 0; off /= 2) part += __shfl_xor_sync(0xffffffffu, part, off);
  __shared__ float warp_sums[threads / 32];
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = part;
  __syncthreads();
  float d_row = 0.f;
  for (int w = 0; w < threads / 32; ++w) d_row += warp_sums[w];

  const T* prow = prob + row * p.Nkv;
  const float* dprow = dp + row * p.Nkv;
  T* dsrow = ds + row * p.Nkv;
  for (std::int64_t j = threadIdx.x; j < p.Nkv; j += threads)
    dsrow[j] = from_float<T>(to_float(prow[j]) * (dprow[j] - d_row));
}

}  // namespace

void launch_softmax_backward(const problem& p, const void* o, const void* d_o, const void* prob, const float* dp,
                             void* ds, cudaStream_t st) {
  const unsigned rows = static_cast<unsigned>(p.rows());
  dispatch_dtype(p.type, [&](auto t) {
    using T = decltype(t);
    launch(softmax_backward_kernel<T>, rows, threads, 0, st, p, static_cast<const T*>(o), static_cast<const T*>(d_o),
           static_cast<const T*>(prob), dp, static_cast<T*>(ds));
  });
  ATTN_CUDA_CHECK_LAUNCH();
}

}  // namespace attnbench::cuda

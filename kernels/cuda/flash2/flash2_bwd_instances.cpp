// The flash2 backward's main-kernel instantiations (one translation unit each,
// flash2_bwd_hdim<d>_<dtype>.cu) and their lookup. Host C++.
#include "kernels/cuda/flash2/flash2_bwd_params.hpp"

namespace attnbench::cuda {

void launch_flash2_bwd_hdim64_bf16(const flash2_bwd_params&, void*);
void launch_flash2_bwd_hdim64_fp16(const flash2_bwd_params&, void*);
void launch_flash2_bwd_hdim128_bf16(const flash2_bwd_params&, void*);
void launch_flash2_bwd_hdim128_fp16(const flash2_bwd_params&, void*);

flash2_bwd_launch_fn find_flash2_bwd_kernel(int d, dtype t) {
  if (t != dtype::bf16 && t != dtype::fp16) return nullptr;
  const bool bf = t == dtype::bf16;
  if (d == 64) return bf ? launch_flash2_bwd_hdim64_bf16 : launch_flash2_bwd_hdim64_fp16;
  if (d == 128) return bf ? launch_flash2_bwd_hdim128_bf16 : launch_flash2_bwd_hdim128_fp16;
  return nullptr;
}

// flash2_bwd_traits<d, T>::smem_bytes, written out so host code needs no CUDA
// header: Q, dO, K, V tiles of 64 rows x (d + 8), dS 64 x 72 (2 bytes each),
// lse and D (64 floats each).
int flash2_bwd_smem_bytes(int d) { return 2 * (4 * 64 * (d + 8) + 64 * 72) + 4 * 2 * 64; }

}  // namespace attnbench::cuda

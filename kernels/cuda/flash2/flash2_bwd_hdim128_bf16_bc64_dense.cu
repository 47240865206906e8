// Instantiation flash2_bwd_hdim128_bf16_bc64_dense: the flash2 backward's main kernel
// (flash2_bwd_kernel.cuh), 64 x 64 tile, 4 warps of 16 keys each, for the interval masks only:
// no list walk, no sparse terms, a visit's 64 queries at once.
// The list: kernels/cuda/flash2/flash2_bwd_instances.cpp; docs/backward.md.
#include "kernels/cuda/flash2/flash2_bwd_kernel.cuh"

namespace attnbench::cuda {
void launch_flash2_bwd_hdim128_bf16_bc64_dense(const flash2_bwd_params& prm, void* stream) {
  launch_flash2_bwd<flash2_bwd_traits<128, 64, __nv_bfloat16, false>>(prm, stream);
}
}  // namespace attnbench::cuda

// Instantiation flash2_bwd_hdim128_bf16_bc128: the flash2 backward's main kernel
// (flash2_bwd_kernel.cuh), 64 x 128 tile, 8 warps of 16 keys each.
// The list: kernels/cuda/flash2/flash2_bwd_instances.cpp; docs/backward.md.
#include "kernels/cuda/flash2/flash2_bwd_kernel.cuh"

namespace attnbench::cuda {
void launch_flash2_bwd_hdim128_bf16_bc128(const flash2_bwd_params& prm, void* stream) {
  launch_flash2_bwd<flash2_bwd_traits<128, 128, __nv_bfloat16>>(prm, stream);
}
}  // namespace attnbench::cuda

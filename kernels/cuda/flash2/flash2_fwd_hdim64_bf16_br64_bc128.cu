// Instantiation flash2_fwd_hdim64_bf16_br64_bc128: 4 warps (4 over rows x 1 over keys),
// at least 1 CTA(s) per SM, Q fragments in registers.
// Generated list: kernels/cuda/flash2/flash2_instances.cpp; resources: docs/flash2.md.
#include "kernels/cuda/flash2/flash2_kernel.cuh"

namespace attnbench::cuda {
void launch_flash2_fwd_hdim64_bf16_br64_bc128(const flash2_params& prm, void* stream) {
  launch_flash2_fwd<flash2_traits<64, 64, 128, 4, 1, __nv_bfloat16, 1, true>>(prm, stream);
}
}  // namespace attnbench::cuda

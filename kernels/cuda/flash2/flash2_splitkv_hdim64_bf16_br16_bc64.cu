// Instantiation flash2_splitkv_hdim64_bf16_br16_bc64: 4 warps (1 over rows x 4 over keys),
// at least 3 CTA(s) per SM, Q fragments in registers.
// Generated list: kernels/cuda/flash2/flash2_instances.cpp; resources: docs/flash2.md.
#include "kernels/cuda/flash2/flash2_kernel.cuh"

namespace attnbench::cuda {
void launch_flash2_splitkv_hdim64_bf16_br16_bc64(const flash2_params& prm, void* stream) {
  launch_flash2_fwd<flash2_traits<64, 16, 64, 1, 4, __nv_bfloat16, 3, true>>(prm, stream);
}
}  // namespace attnbench::cuda

// Instantiation flash2_fwd_hdim128_fp16_br64_bc64: 4 warps (4 over rows x 1 over keys),
// at least 2 CTA(s) per SM, Q fragments in registers.
// Generated list: kernels/cuda/flash2/flash2_instances.cpp; resources: docs/flash2.md.
#include "kernels/cuda/flash2/flash2_kernel.cuh"

namespace attnbench::cuda {
void launch_flash2_fwd_hdim128_fp16_br64_bc64(const flash2_params& prm, void* stream) {
  launch_flash2_fwd<flash2_traits<128, 64, 64, 4, 1, __half, 2, true>>(prm, stream);
}
}  // namespace attnbench::cuda

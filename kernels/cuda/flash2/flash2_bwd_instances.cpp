// The flash2 backward's main-kernel instantiations (one translation unit each,
// flash2_bwd_hdim<d>_<dtype>_bc<Bc>.cu) and their lookup: 64 x 64 and 64 x 128 at d 64 and
// 128 (is_bwd_tile). Host C++.
#include "kernels/cuda/flash2/flash2_bwd_params.hpp"

namespace attnbench::cuda {

void launch_flash2_bwd_hdim64_bf16_bc64(const flash2_bwd_params&, void*);
void launch_flash2_bwd_hdim64_fp16_bc64(const flash2_bwd_params&, void*);
void launch_flash2_bwd_hdim128_bf16_bc64(const flash2_bwd_params&, void*);
void launch_flash2_bwd_hdim128_fp16_bc64(const flash2_bwd_params&, void*);
void launch_flash2_bwd_hdim64_bf16_bc128(const flash2_bwd_params&, void*);
void launch_flash2_bwd_hdim64_fp16_bc128(const flash2_bwd_params&, void*);
void launch_flash2_bwd_hdim128_bf16_bc128(const flash2_bwd_params&, void*);
void launch_flash2_bwd_hdim128_fp16_bc128(const flash2_bwd_params&, void*);

namespace {

struct bwd_instance {
  int d, bc;
  dtype type;
  flash2_bwd_launch_fn launch;
};

constexpr bwd_instance instances[] = {
    {64, 64, dtype::bf16, launch_flash2_bwd_hdim64_bf16_bc64},
    {64, 64, dtype::fp16, launch_flash2_bwd_hdim64_fp16_bc64},
    {128, 64, dtype::bf16, launch_flash2_bwd_hdim128_bf16_bc64},
    {128, 64, dtype::fp16, launch_flash2_bwd_hdim128_fp16_bc64},
    {64, 128, dtype::bf16, launch_flash2_bwd_hdim64_bf16_bc128},
    {64, 128, dtype::fp16, launch_flash2_bwd_hdim64_fp16_bc128},
    {128, 128, dtype::bf16, launch_flash2_bwd_hdim128_bf16_bc128},
    {128, 128, dtype::fp16, launch_flash2_bwd_hdim128_fp16_bc128},
};

}  // namespace

flash2_bwd_launch_fn find_flash2_bwd_kernel(int d, int bc, dtype t) {
  for (const bwd_instance& i : instances)
    if (i.d == d && i.bc == bc && i.type == t) return i.launch;
  return nullptr;
}

}  // namespace attnbench::cuda

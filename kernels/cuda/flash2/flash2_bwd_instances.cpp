// The flash2 backward's main-kernel instantiations (one translation unit each,
// flash2_bwd_hdim<d>_<dtype>_bc<Bc>[_dense].cu) and their lookup: 64 x 64 and 64 x 128 at d 64
// and 128 (is_bwd_tile), each able to walk the sparse row's lists and evaluate sparse terms;
// at d 128 and 64 x 64 also one with neither (_dense: the interval masks' kernel, all 64
// queries of a visit at once). Host C++.
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
void launch_flash2_bwd_hdim128_bf16_bc64_dense(const flash2_bwd_params&, void*);
void launch_flash2_bwd_hdim128_fp16_bc64_dense(const flash2_bwd_params&, void*);

namespace {

struct bwd_instance {
  int d, bc;
  dtype type;
  bool sparse;  // the sparse row's lists and the sparse terms compiled in
  flash2_bwd_launch_fn launch;
};

constexpr bwd_instance instances[] = {
    {64, 64, dtype::bf16, true, launch_flash2_bwd_hdim64_bf16_bc64},
    {64, 64, dtype::fp16, true, launch_flash2_bwd_hdim64_fp16_bc64},
    {128, 64, dtype::bf16, true, launch_flash2_bwd_hdim128_bf16_bc64},
    {128, 64, dtype::fp16, true, launch_flash2_bwd_hdim128_fp16_bc64},
    {64, 128, dtype::bf16, true, launch_flash2_bwd_hdim64_bf16_bc128},
    {64, 128, dtype::fp16, true, launch_flash2_bwd_hdim64_fp16_bc128},
    {128, 128, dtype::bf16, true, launch_flash2_bwd_hdim128_bf16_bc128},
    {128, 128, dtype::fp16, true, launch_flash2_bwd_hdim128_fp16_bc128},
    {128, 64, dtype::bf16, false, launch_flash2_bwd_hdim128_bf16_bc64_dense},
    {128, 64, dtype::fp16, false, launch_flash2_bwd_hdim128_fp16_bc64_dense},
};

}  // namespace

flash2_bwd_launch_fn find_flash2_bwd_kernel(int d, int bc, dtype t, bool sparse) {
  flash2_bwd_launch_fn found = nullptr;
  for (const bwd_instance& i : instances)
    if (i.d == d && i.bc == bc && i.type == t && (i.sparse || !sparse) && (!found || !i.sparse)) found = i.launch;
  return found;
}

}  // namespace attnbench::cuda

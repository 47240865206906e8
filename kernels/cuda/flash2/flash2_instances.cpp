// The list of flash2 kernel instantiations (one translation unit each,
// flash2_<fwd|splitkv>_hdim<d>_<dtype>_br<Br>_bc<Bc>.cu) and the lookups the
// rows use. Tile choices and their ptxas resources: docs/flash2.md.
//   64x64   4 warps, 2 CTAs/SM: short sequences, many CTAs; Q in registers
//   128x64  8 warps: default for d = 128 (128 rows share each K/V tile; 228
//           registers at d = 128 without spills, where 4 warps x 32 rows spilled
//           520 bytes)
//   128x128 8 warps: default for d = 64; at d = 128 Q is re-read from shared
//           memory (keeping it in registers spilled) and the 170 KB of shared
//           memory fit sm_90 only (sm_80 allows 163 KB)
//   128x32  4 warps x 32 rows (d = 128): FA2's layout, half the K/V shared-
//           memory reads per FLOP of the 8-warp tiles, Q re-read from smem
//   64x128  4 warps, the backward's 8-warp tile (forward of its bwd/fwd_bwd entries)
//   16x64   decode / split-KV: 4 warps split each key tile (16 keys each),
//           at least 3 CTAs/SM (<= 168 registers) to keep loads in flight
#include "kernels/cuda/flash2/flash2_params.hpp"
#include "kernels/cuda/flash2/flash2_traits.cuh"

namespace attnbench::cuda {

void launch_flash2_fwd_hdim64_fp16_br64_bc64(const flash2_params&, void*);
void launch_flash2_fwd_hdim64_bf16_br64_bc64(const flash2_params&, void*);
void launch_flash2_fwd_hdim64_fp16_br128_bc64(const flash2_params&, void*);
void launch_flash2_fwd_hdim64_bf16_br128_bc64(const flash2_params&, void*);
void launch_flash2_fwd_hdim64_fp16_br128_bc128(const flash2_params&, void*);
void launch_flash2_fwd_hdim64_bf16_br128_bc128(const flash2_params&, void*);
void launch_flash2_splitkv_hdim64_fp16_br16_bc64(const flash2_params&, void*);
void launch_flash2_splitkv_hdim64_bf16_br16_bc64(const flash2_params&, void*);
void launch_flash2_fwd_hdim128_fp16_br64_bc64(const flash2_params&, void*);
void launch_flash2_fwd_hdim128_bf16_br64_bc64(const flash2_params&, void*);
void launch_flash2_fwd_hdim128_fp16_br128_bc64(const flash2_params&, void*);
void launch_flash2_fwd_hdim128_bf16_br128_bc64(const flash2_params&, void*);
void launch_flash2_fwd_hdim128_fp16_br128_bc128(const flash2_params&, void*);
void launch_flash2_fwd_hdim128_bf16_br128_bc128(const flash2_params&, void*);
void launch_flash2_splitkv_hdim128_fp16_br16_bc64(const flash2_params&, void*);
void launch_flash2_splitkv_hdim128_bf16_br16_bc64(const flash2_params&, void*);
void launch_flash2_fwd_hdim128_fp16_br128_bc32(const flash2_params&, void*);
void launch_flash2_fwd_hdim128_bf16_br128_bc32(const flash2_params&, void*);
void launch_flash2_fwd_hdim64_fp16_br64_bc128(const flash2_params&, void*);
void launch_flash2_fwd_hdim64_bf16_br64_bc128(const flash2_params&, void*);
void launch_flash2_fwd_hdim128_fp16_br64_bc128(const flash2_params&, void*);
void launch_flash2_fwd_hdim128_bf16_br64_bc128(const flash2_params&, void*);

namespace {
const flash2_config configs[] = {
    {64, dtype::fp16, 64, 64, 4, false, flash2_traits<64, 64, 64, 4, 1, void>::smem_bytes,
     &launch_flash2_fwd_hdim64_fp16_br64_bc64, "flash2_fwd_hdim64_fp16_br64_bc64"},
    {64, dtype::bf16, 64, 64, 4, false, flash2_traits<64, 64, 64, 4, 1, void>::smem_bytes,
     &launch_flash2_fwd_hdim64_bf16_br64_bc64, "flash2_fwd_hdim64_bf16_br64_bc64"},
    {64, dtype::fp16, 128, 64, 8, false, flash2_traits<64, 128, 64, 8, 1, void>::smem_bytes,
     &launch_flash2_fwd_hdim64_fp16_br128_bc64, "flash2_fwd_hdim64_fp16_br128_bc64"},
    {64, dtype::bf16, 128, 64, 8, false, flash2_traits<64, 128, 64, 8, 1, void>::smem_bytes,
     &launch_flash2_fwd_hdim64_bf16_br128_bc64, "flash2_fwd_hdim64_bf16_br128_bc64"},
    {64, dtype::fp16, 128, 128, 8, false, flash2_traits<64, 128, 128, 8, 1, void>::smem_bytes,
     &launch_flash2_fwd_hdim64_fp16_br128_bc128, "flash2_fwd_hdim64_fp16_br128_bc128"},
    {64, dtype::bf16, 128, 128, 8, false, flash2_traits<64, 128, 128, 8, 1, void>::smem_bytes,
     &launch_flash2_fwd_hdim64_bf16_br128_bc128, "flash2_fwd_hdim64_bf16_br128_bc128"},
    {64, dtype::fp16, 16, 64, 4, true, flash2_traits<64, 16, 64, 1, 4, void>::smem_bytes,
     &launch_flash2_splitkv_hdim64_fp16_br16_bc64, "flash2_splitkv_hdim64_fp16_br16_bc64"},
    {64, dtype::bf16, 16, 64, 4, true, flash2_traits<64, 16, 64, 1, 4, void>::smem_bytes,
     &launch_flash2_splitkv_hdim64_bf16_br16_bc64, "flash2_splitkv_hdim64_bf16_br16_bc64"},
    {128, dtype::fp16, 64, 64, 4, false, flash2_traits<128, 64, 64, 4, 1, void>::smem_bytes,
     &launch_flash2_fwd_hdim128_fp16_br64_bc64, "flash2_fwd_hdim128_fp16_br64_bc64"},
    {128, dtype::bf16, 64, 64, 4, false, flash2_traits<128, 64, 64, 4, 1, void>::smem_bytes,
     &launch_flash2_fwd_hdim128_bf16_br64_bc64, "flash2_fwd_hdim128_bf16_br64_bc64"},
    {128, dtype::fp16, 128, 64, 8, false, flash2_traits<128, 128, 64, 8, 1, void>::smem_bytes,
     &launch_flash2_fwd_hdim128_fp16_br128_bc64, "flash2_fwd_hdim128_fp16_br128_bc64"},
    {128, dtype::bf16, 128, 64, 8, false, flash2_traits<128, 128, 64, 8, 1, void>::smem_bytes,
     &launch_flash2_fwd_hdim128_bf16_br128_bc64, "flash2_fwd_hdim128_bf16_br128_bc64"},
    {128, dtype::fp16, 128, 128, 8, false, flash2_traits<128, 128, 128, 8, 1, void>::smem_bytes,
     &launch_flash2_fwd_hdim128_fp16_br128_bc128, "flash2_fwd_hdim128_fp16_br128_bc128"},
    {128, dtype::bf16, 128, 128, 8, false, flash2_traits<128, 128, 128, 8, 1, void>::smem_bytes,
     &launch_flash2_fwd_hdim128_bf16_br128_bc128, "flash2_fwd_hdim128_bf16_br128_bc128"},
    {128, dtype::fp16, 16, 64, 4, true, flash2_traits<128, 16, 64, 1, 4, void>::smem_bytes,
     &launch_flash2_splitkv_hdim128_fp16_br16_bc64, "flash2_splitkv_hdim128_fp16_br16_bc64"},
    {128, dtype::bf16, 16, 64, 4, true, flash2_traits<128, 16, 64, 1, 4, void>::smem_bytes,
     &launch_flash2_splitkv_hdim128_bf16_br16_bc64, "flash2_splitkv_hdim128_bf16_br16_bc64"},
    {128, dtype::fp16, 128, 32, 4, false, flash2_traits<128, 128, 32, 4, 1, void>::smem_bytes,
     &launch_flash2_fwd_hdim128_fp16_br128_bc32, "flash2_fwd_hdim128_fp16_br128_bc32"},
    {128, dtype::bf16, 128, 32, 4, false, flash2_traits<128, 128, 32, 4, 1, void>::smem_bytes,
     &launch_flash2_fwd_hdim128_bf16_br128_bc32, "flash2_fwd_hdim128_bf16_br128_bc32"},
    {64, dtype::fp16, 64, 128, 4, false, flash2_traits<64, 64, 128, 4, 1, void>::smem_bytes,
     &launch_flash2_fwd_hdim64_fp16_br64_bc128, "flash2_fwd_hdim64_fp16_br64_bc128"},
    {64, dtype::bf16, 64, 128, 4, false, flash2_traits<64, 64, 128, 4, 1, void>::smem_bytes,
     &launch_flash2_fwd_hdim64_bf16_br64_bc128, "flash2_fwd_hdim64_bf16_br64_bc128"},
    {128, dtype::fp16, 64, 128, 4, false, flash2_traits<128, 64, 128, 4, 1, void>::smem_bytes,
     &launch_flash2_fwd_hdim128_fp16_br64_bc128, "flash2_fwd_hdim128_fp16_br64_bc128"},
    {128, dtype::bf16, 64, 128, 4, false, flash2_traits<128, 64, 128, 4, 1, void>::smem_bytes,
     &launch_flash2_fwd_hdim128_bf16_br64_bc128, "flash2_fwd_hdim128_bf16_br64_bc128"},
};
}  // namespace

const flash2_config* flash2_configs(int* count) {
  *count = static_cast<int>(sizeof(configs) / sizeof(configs[0]));
  return configs;
}

const flash2_config* find_flash2_config(int d, dtype t, std::int64_t br, std::int64_t bc) {
  for (const auto& c : configs)
    if (!c.decode && c.d == d && c.type == t && c.bm == br && c.bn == bc) return &c;
  return nullptr;
}

const flash2_config* find_flash2_decode_config(int d, dtype t) {
  for (const auto& c : configs)
    if (c.decode && c.d == d && c.type == t) return &c;
  return nullptr;
}

}  // namespace attnbench::cuda

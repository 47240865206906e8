// launch_flash2_fwd<K> of the host emulator, included by flash2_kernel.cuh
// under ATTN_FLASH2_EMULATE in place of the CUDA launcher: same tile check,
// same grid (flash2_grid), each CTA run on OS threads by emu_runtime.cpp.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>

namespace attnbench::emu {
void launch_grid(dim3 grid, int threads, std::size_t smem_bytes, const std::function<void()>& cuda_thread);
}  // namespace attnbench::emu

namespace attnbench::cuda {

template <class K>
void launch_flash2_fwd(const flash2_params& prm, void* /*stream*/) {
  if (std::string why = flash2_tile_mismatch<K>(prm); !why.empty()) throw std::runtime_error(why);
  emu::launch_grid(flash2_grid<K>(prm), K::threads, K::smem_bytes, [&prm] { flash2_fwd_kernel<K>(prm); });
}

}  // namespace attnbench::cuda

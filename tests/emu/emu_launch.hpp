// launch_flash2_fwd<K> of the host emulator, included by flash2_kernel.cuh
// under ATTN_EMULATE in place of its CUDA launcher (which that header
// keeps behind the macro): the same tile check, attribute and launch, through
// the one launch helper (core/cuda/launch.cuh), so the emulator checks the
// configuration (dynamic shared memory > 48 KB needs the attribute).
#pragma once

#include <stdexcept>
#include <string>

#include "core/cuda/launch.cuh"

namespace attnbench::cuda {

template <class K>
void launch_flash2_fwd(const flash2_params& prm, void* stream) {
  if (std::string why = flash2_tile_mismatch<K>(prm); !why.empty()) throw backend_error(why);
  static const bool configured = [] {
    ATTN_CUDA_CHECK(
        cudaFuncSetAttribute(flash2_fwd_kernel<K>, cudaFuncAttributeMaxDynamicSharedMemorySize, K::smem_bytes));
    return true;
  }();
  (void)configured;
  launch(flash2_fwd_kernel<K>, flash2_grid<K>(prm), K::threads, K::smem_bytes, static_cast<cudaStream_t>(stream), prm);
}

}  // namespace attnbench::cuda

// The one way attnbench launches a CUDA kernel:
//   attnbench::cuda::launch(kernel, grid, block, smem_bytes, stream, args...);
// With nvcc it is kernel<<<grid, block, smem_bytes, stream>>>(args...) followed
// by the launch check (ATTN_CUDA_CHECK_LAUNCH: a bad configuration throws at
// once). Under ATTN_EMULATE (the host emulator of tests/emu, compiled by the
// C++ compiler against the stand-in headers of tests/emu/include) the same
// call runs the kernel on the CPU (CUDA threads as fibers, CTA after CTA) with
// the launch checks a device makes; the kernel sources compile unchanged for
// both.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "core/cuda/cuda_check.cuh"

#if defined(ATTN_EMULATE)
#include <attn_emu_kernel_launch.hpp>  // tests/emu/include: attnbench::emu::launch_kernel
#endif

namespace attnbench::cuda {

template <class... Params, class... Args>
void launch(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t smem_bytes, cudaStream_t stream,
            Args&&... args) {
#if defined(ATTN_EMULATE)
  ::attnbench::emu::launch_kernel(kernel, grid, block, smem_bytes, stream, std::forward<Args>(args)...);
#else
  // clang-format 14 reads .cuh as C++ and would split the launch's >>> into > > >.
  // clang-format off
  kernel<<<grid, block, smem_bytes, stream>>>(std::forward<Args>(args)...);
  // clang-format on
#endif
  ATTN_CUDA_CHECK_LAUNCH();
}

}  // namespace attnbench::cuda

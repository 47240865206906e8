// attnbench::emu::launch_kernel: what attnbench::cuda::launch (core/cuda/
// launch.cuh) does under ATTN_EMULATE. The arguments are converted to the
// kernel's parameter types once (as a launch copies them into parameter
// space), then run_grid checks the configuration as a device would and runs
// the CTAs one after another, each CUDA thread a fiber (emu_fiber.cpp).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

namespace attnbench::emu {

struct launch_config {
  const void* kernel;  // identifies the kernel (its cudaFuncSetAttribute values, its name in reports)
  dim3 grid, block;
  std::size_t smem_bytes;
};
// Checks the configuration (a bad one sets the error cudaGetLastError returns
// and runs nothing), then runs thread_fn(ctx) once per CUDA thread.
void run_grid(const launch_config& c, void (*thread_fn)(void*), void* ctx);

template <class... P, class... A>
void launch_kernel(void (*kernel)(P...), dim3 grid, dim3 block, std::size_t smem_bytes, cudaStream_t, A&&... args) {
  using params_t = std::tuple<std::decay_t<P>...>;
  struct ctx_t {
    void (*k)(P...);
    const params_t* params;
  };
  const params_t params(std::forward<A>(args)...);
  ctx_t ctx{kernel, &params};
  run_grid(
      {reinterpret_cast<const void*>(kernel), grid, block, smem_bytes},
      [](void* c) {
        auto* x = static_cast<ctx_t*>(c);
        std::apply(x->k, *x->params);
      },
      &ctx);
}

}  // namespace attnbench::emu

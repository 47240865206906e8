// Host stand-in for <cuda_runtime.h> used only by the flash2 emulator
// (tests/emu, ATTN_FLASH2_EMULATE): CUDA qualifiers become nothing, threadIdx /
// blockIdx are per-OS-thread, __syncthreads and warp shuffles go to the
// emulator's barriers (emu_runtime.cpp). Just what flash2_kernel.cuh uses.
#pragma once

#include <math.h>

#include <cstdint>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __grid_constant__
#define __shared__
#define __align__(n)

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  dim3() = default;
  dim3(unsigned x_, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
extern thread_local dim3 threadIdx, blockIdx;

namespace attnbench::emu {
void syncthreads();
float shfl_xor(float v, int lane_mask);
}  // namespace attnbench::emu
#define __syncthreads() ::attnbench::emu::syncthreads()
#define __shfl_xor_sync(mask, v, m) ::attnbench::emu::shfl_xor((v), (m))

struct alignas(8) float2 { float x, y; };
struct alignas(16) float4 { float x, y, z, w; };
struct alignas(16) uint4 { unsigned x, y, z, w; };
inline float2 make_float2(float x, float y) { return {x, y}; }
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }

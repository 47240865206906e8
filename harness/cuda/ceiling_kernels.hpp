// Device helpers of the CUDA backend's ceilings (plain declarations so the
// backend itself can be host C++).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cuda_runtime.h>

#include "core/problem.hpp"

namespace attnbench::cuda {

// Fills n elements of type t (fp32/fp16/bf16) with uniform values in [-1, 1)
// from a counter-based hash of (seed, index): random, non-zero data.
void fill_uniform(void* ptr, dtype t, std::int64_t n, std::uint64_t seed, cudaStream_t st);

// One device-to-device copy of `bytes` (a multiple of 16) with 16-byte loads
// and stores, grid-stride; moves 2 * bytes through DRAM.
void launch_copy16(const void* src, void* dst, std::size_t bytes, cudaStream_t st);

}  // namespace attnbench::cuda

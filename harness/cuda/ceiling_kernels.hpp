// Device helpers of the CUDA backend's ceilings (plain declarations so the
// backend itself can be host C++): the random fill, the copy of the bandwidth
// ceiling and the ex2 chains of the exp ceiling.
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

// ---- the exp ceiling ---------------------------------------------------------------------
// Each thread runs exp2_chains_per_thread independent chains x <- -2^x through
// ex2.approx.ftz.f32 (f2::fast_exp2, the flash kernels' exp: MUFU.EX2 in SASS), so the
// multi-function units always have independent work in flight, for `steps` steps, and
// writes the sum of its chains' final values to out[global thread index]. Chain c starts
// at exp2_chain_start(c); every chain converges to the fixed point x = -2^x (-0.6412),
// so a thread that skipped steps or never ran is seen by the check below.
inline constexpr int exp2_chains_per_thread = 8;
inline constexpr int exp2_chain_threads = 256;  // per block
struct exp2_chains_launch {
  unsigned blocks = 1;
  int steps = 1;
  std::int64_t threads() const { return static_cast<std::int64_t>(blocks) * exp2_chain_threads; }
  // ex2 instructions executed per thread lane, in all.
  double exps() const { return static_cast<double>(threads()) * exp2_chains_per_thread * steps; }
};
ATTN_HD inline float exp2_chain_start(int c) { return -0.25f - 0.125f * static_cast<float>(c); }
void launch_exp2_chains(float* out, const exp2_chains_launch& l, cudaStream_t st);
// The sum every thread must write after `steps` steps: the chains computed on the host in
// float with std::exp2 (converged after ~40 steps).
float exp2_chains_expected_sum(int steps);
// Index of the first thread whose sum differs from the expected one by more than
// 1e-5 relative (ex2.approx has 2 ulp; NaN never passes), or -1 when all agree.
std::int64_t exp2_chains_first_wrong(const float* out, std::int64_t threads, int steps);

}  // namespace attnbench::cuda

// The CPU twin of the CUDA flash2_splitkv row (decode): its plan, and its runner
// with the knobs the tests turn (a forced split count; planted faults that the
// correctness tests must reject).
#pragma once

#include <memory>

#include "kernels/cpu/cpu_common.hpp"
#include "kernels/cuda/flash2/flash2_params.hpp"

namespace attnbench::cpu {

// Key tile of the decode path: 64 keys (K and V tiles of 32 KiB each at d = 128, fp32).
inline constexpr std::int64_t splitkv_bc = 64;

// p with the tile that runs: Br = the packed rows of one KV group (G * Nq) rounded up to a
// power of two in [16, 256], so one tile holds the group whenever G * Nq <= 256; Bc = 64.
problem splitkv_geometry(const problem& p);

// How p runs: the CUDA sibling's plan (pack G, the visible walk), the geometry above and the
// split count: about 4 tasks per thread, each split keeping at least 4 key tiles, at most
// 256 splits. forced_splits > 0 overrides the count (tests).
cuda::flash2_plan splitkv_plan(const problem& p, int forced_splits = 0);

// fp32 partial O and lse of the splits (0 when one split).
std::int64_t splitkv_workspace_bytes(const problem& p);

// Defects planted by the negative controls of tests/cpu/test_flash2_splitkv.cpp.
enum class splitkv_fault {
  none,
  unweighted_merge,  // the merge averages the partial O of the splits, ignoring their lse
  wrong_kv_group,    // query heads read the K/V of the next KV group
};

std::unique_ptr<runner> make_flash2_splitkv_runner(const problem& p, bool writes_lse, int forced_splits = 0,
                                                   splitkv_fault fault = splitkv_fault::none);

}  // namespace attnbench::cpu

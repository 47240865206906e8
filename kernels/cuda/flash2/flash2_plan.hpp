// Host-side plan of the flash2 family: which row runs the kernel how (pack,
// tile walk, splits; flash2_params.hpp flash2_plan), the split-KV choice, the
// rows' models and the runner factory. Host C++, for the rows, the runner and
// the GPU tests.
#pragma once

#include <cstdint>
#include <memory>

#include "core/variant.hpp"
#include "kernels/cuda/flash2/flash2_params.hpp"

namespace attnbench::cuda {

enum class flash2_row { flash2, sparse, packed, splitkv };

// Decode / split-KV tile: 16 packed rows x 64 keys (flash2_instances.cpp).
inline constexpr std::int64_t kDecodeBr = 16, kDecodeBc = 64;
inline constexpr int kMaxSplits = 256;

// The instantiation `row` runs p with (the decode one for split-KV), or
// nullptr; supports() and the runner both resolve it here.
const flash2_config* flash2_config_for(flash2_row row, const problem& p);
// How `row` runs p on `sms` multiprocessors.
flash2_plan plan_for(flash2_row row, const problem& p, int sms);
// p with the decode tile (16 x 64) in Br / Bc: what flash2_splitkv runs.
problem decode_geometry(const problem& p);
// Most key tiles any decode row tile visits.
std::int64_t splitkv_max_tiles(const problem& p);
// Splits the decode runner uses on `sms` multiprocessors.
int splitkv_num_splits(const problem& p, int sms);
// fp32 partial O and lse of the splits (0 when one split).
std::int64_t splitkv_workspace_bytes(const problem& p, int sms);

// True when the plan walks per-query-tile key-tile lists (the sparse row on a
// mask with sparse terms); then the runner builds make_kv_tile_list(geometry,
// visible) into global memory and points flash2_params::tiles at it.
inline bool plan_uses_tile_list(const flash2_plan& plan) {
  return plan.walk == tile_walk::visible && plan.pack == 1 && plan.splits == 1 && plan.geometry.mask.has_sparse();
}

// Device bytes of the mask data the runner copies (flash2_runner.cpp): the
// sparse terms, a block layout's bits, and for a listed walk the key-tile
// lists (heads x q_tiles counts, heads x q_tiles x kv_tiles indices, int32).
std::int64_t mask_device_bytes(const flash2_plan& plan);

// The row's model on the current device's SM count (132 without a device):
// kernels/models/models.hpp model_flash2_cuda over plan_for(row, p, sms).
model_figures model_flash2_row(flash2_row row, const problem& p);

// forced_splits > 0 overrides the split count of flash2_row::splitkv.
std::unique_ptr<runner> make_flash2_runner(const problem& p, bool writes_lse, flash2_row row, int forced_splits);

// The backward of the flash2 and sparse rows (p.pass bwd, fwd_bwd; flash2_bwd_runner.cpp): the
// row's forward for O and lse, then preprocess, main kernel and dQ conversion
// (flash2_bwd_params.hpp); the sparse row's main kernel visits its forward's key-tile lists
// transposed. deterministic: the flash2_bwd_deterministic row (S fp32 dQ slices, no atomics;
// S = bwd_dq_slices for the current device, or forced_slices > 0). GQA groups are split over
// bwd_head_splits CTAs for the current device, or forced_head_splits > 0 (a divisor of the group).
std::unique_ptr<runner> make_flash2_backward_runner(const problem& p, bool writes_lse, flash2_row row,
                                                    bool deterministic, int forced_slices = 0,
                                                    int forced_head_splits = 0);
// Device bytes of a backward run: device_backward_runner's buffers plus D (4 bytes per query
// row) and the fp32 dQ accumulator (4 bytes per dQ element) or, deterministic, the slices
// (4 S bytes per dQ element), the head splits' fp32 dK and dV parts (8 splits bytes per dK
// element, none with one split), the mask's device data and the sparse row's lists.
std::int64_t flash2_backward_memory_bytes(const problem& p, flash2_row row, bool deterministic);

}  // namespace attnbench::cuda

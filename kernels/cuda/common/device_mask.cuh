// The sparse terms of a problem's mask (and a block layout's bits) copied to the device, for
// every kernel that evaluates sparse_visible there: the flash2 forward and backward runners,
// the on-device fp32 reference and device_check. Defined in common_runtime.cu.
#pragma once

#include <cuda_runtime.h>

#include "core/cuda/device_buffer.cuh"
#include "core/tiles.hpp"
#include "core/variant.hpp"

namespace attnbench::cuda {

// `p` with mask.sparse pointing at the copy, which lives as long as this object.
// Problems without sparse terms are kept as they are.
struct device_mask {
  problem p;
  device_buffer terms, layout;
};
// Enqueues the copies on st and waits for them (untimed setup).
device_mask mask_on_device(const problem& p, cudaStream_t st);

// A tile walk's lists (core/tiles.hpp) copied to the device: view reads the copy, which lives as
// long as this object. The copies are enqueued on st (ordered before the kernels that read
// them; a synchronous cudaMemcpy would run on the legacy default stream, which nothing orders
// with attnbench's non-blocking stream). The caller keeps the host list alive as long, so no
// rule about pageable copies needs to hold.
struct device_tile_list {
  device_buffer num, indices;
  tile_list_view view;
};
device_tile_list tile_list_on_device(const tile_list& l, cudaStream_t st);

}  // namespace attnbench::cuda

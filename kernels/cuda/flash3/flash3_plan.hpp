// Host-side plan of the flash3 row: the packing of GQA heads, the row tile
// that follows from it, the tile walk, the model, the TMA tensor maps and the
// runner factory. Host C++ (rows, runner, GPU and emulator tests).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/variant.hpp"
#include "kernels/cuda/flash3/flash3_params.hpp"

namespace attnbench::cuda {

// The CTA's 128 rows (2 consumer warpgroups x 64) and the default key tile;
// d = 256 uses 64 keys (flash3_instances.cpp).
inline constexpr std::int64_t kFlash3Bc = 128, kFlash3Br = 128;
// Key tile of the instantiation for p's head dim and dtype (kFlash3Bc if none).
std::int64_t flash3_key_tile(const problem& p);
// Most heads of a group packed into one CTA (queries per tile = 128 / pack >= 4).
inline constexpr std::int64_t kFlash3MaxPack = 32;

struct flash3_plan {
  problem geometry;  // p with Br = pack * queries_per_tile, Bc = the key tile
  int pack = 1;
  int queries_per_tile = 128;
  tile_walk walk = tile_walk::visible;
};

// Heads of a group are packed when 1 < G <= 32; the walk visits only tiles
// holding a visible pair (core/tiles.hpp).
flash3_plan plan_flash3(const problem& p);
// The user-facing geometry of the row (Br x Bc = 128 x the key tile), for names.
problem flash3_resolve(const problem& p);
model_figures model_flash3_row(const problem& p);

// Empty when this build and device can run flash3 for p (sm_90, sm_90a code
// built, tensor-map limits), else the reason.
std::string flash3_unsupported_reason(const problem& p);

// Encodes prm.tma_q / tma_k / tma_v for the tensors at q, k, v (p.type,
// e4m3 as UINT8 codes; [B, H, Nq, d] and [B, Hkv, Nkv, d]) through the driver's
// cuTensorMapEncodeTiled reached by cudaGetDriverEntryPointByVersion (nothing
// links libcuda). Throws backend_error naming the map and the driver's code.
void encode_flash3_maps(flash3_params& prm, const void* q, const void* k, const void* v);

// Parameters of a launch for p (plan, scale, e4m3 descales; maps not yet encoded).
flash3_params make_flash3_params(const problem& p, const input_scales& scales = {});

std::unique_ptr<runner> make_flash3_runner(const problem& p, bool writes_lse);

}  // namespace attnbench::cuda

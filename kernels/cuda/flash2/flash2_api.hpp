// Host-side interface of the flash2 family for the rows file and the GPU
// tests: which row runs with which settings, the models of the rows that
// harness/models.hpp does not cover (packed GQA, split-KV), and a runner
// factory that can force the number of splits (tests of empty splits).
#pragma once

#include <cstdint>
#include <memory>

#include "harness/registry.hpp"

namespace attnbench::cuda {

enum class flash2_row { flash2, sparse, packed, splitkv };

// Decode / split-KV tile: 16 packed rows x 64 keys (flash2_instances.cpp).
inline constexpr std::int64_t kDecodeBr = 16, kDecodeBc = 64;
inline constexpr int kMaxSplits = 256;

struct flash2_settings {
  problem geometry;  // p with the kernel's tile in Br / Bc
  int pack = 1;      // query heads per CTA
  bool sparse = false;
  int splits = 1;
};
flash2_settings settings_for(flash2_row row, const problem& p, int sms);
problem decode_geometry(const problem& p);
// Most key tiles any decode row tile visits.
std::int64_t splitkv_max_tiles(const problem& p);

double model_flops_executed_packed(const problem& p);
double model_bytes_packed(const problem& p);
double model_flops_executed_splitkv(const problem& p);
double model_bytes_splitkv(const problem& p);
// The flash2 and sparse rows' bytes (and the sparse row's executed FLOPs) by
// walking the kernel's own tiles, which the rows report: a row tile that
// visits no key tile skips its Q read, which harness model_bytes_flash2 /
// model_bytes_sparse still count (tests compare the two).
double model_bytes_flash2_cuda(const problem& p);
double model_flops_executed_sparse_cuda(const problem& p);
double model_bytes_sparse_cuda(const problem& p);

// forced_splits > 0 overrides the split count of flash2_row::splitkv.
std::unique_ptr<runner> make_flash2_runner(const problem& p, flash2_row row, int forced_splits);

}  // namespace attnbench::cuda

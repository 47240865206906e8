// The runner of the flash2 family: one flash2_fwd_kernel launch (plus the
// split-KV merge when the plan splits keys) with the row's plan. Host C++
// (fmt is fine here; the .cu files must not include it).
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <cmath>
#include <memory>

#include "core/cuda/launch_limits.hpp"
#include "kernels/cuda/common/device_mask.cuh"
#include "kernels/cuda/common/device_runner.cuh"
#include "kernels/cuda/flash2/flash2_forward_launch.hpp"

namespace attnbench::cuda {

namespace {

class flash2_runner final : public device_runner {
 public:
  flash2_runner(const problem& p, bool writes_lse, flash2_row row, int forced_splits)
      : device_runner(p, writes_lse), fwd_(p, row, forced_splits, stream()) {}

  void run() override { fwd_.launch(q_.get(), k_.get(), v_.get(), o_.get(), lse_.get<float>(), stream()); }

 private:
  flash2_forward_launch fwd_;
};

}  // namespace

flash2_forward_launch::flash2_forward_launch(const problem& p, flash2_row row, int forced_splits, cudaStream_t st) {
  // The split choice needs the SM count of the device the runner runs on.
  const flash2_plan plan = plan_for(row, p, current_device_limits().sm_count);
  cfg_ = flash2_config_for(row, p);
  if (!cfg_)
    throw backend_error(fmt::format("flash2: no kernel instantiation for {}", benchmark_name("flash2", "cuda", p)));
  prm_.p = plan.geometry;
  prm_.pack = plan.pack;
  prm_.walk = plan.walk;
  prm_.splits = forced_splits > 0 ? forced_splits : plan.splits;
  prm_.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(p.d)));
  prm_.scale_log2 = static_cast<float>(1.0 / std::sqrt(static_cast<double>(p.d)) * M_LOG2E);
  // Device-side mask data, outside the timed run: the sparse terms (and a block layout's bits)
  // and, for a listed walk, the key-tile lists (their host source kept as a member).
  mask_ = mask_on_device(p, st);
  prm_.p.mask.sparse = mask_.p.mask.sparse;
  if (plan_uses_tile_list(plan)) {
    tiles_host_ = make_kv_tile_list(plan.geometry, tile_walk::visible);
    tiles_ = tile_list_on_device(tiles_host_, st);
    prm_.tiles = tiles_.view;
  }
  if (prm_.splits > 1) {
    o_part_ = device_buffer(static_cast<std::size_t>(prm_.splits) * p.rows() * p.d * 4);
    lse_part_ = device_buffer(static_cast<std::size_t>(prm_.splits) * p.rows() * 4);
  }
}

void flash2_forward_launch::launch(const void* q, const void* k, const void* v, void* o, float* lse, cudaStream_t st) {
  prm_.q = q;
  prm_.k = k;
  prm_.v = v;
  prm_.o = o;
  prm_.lse = lse;
  prm_.o_part = o_part_.get<float>();
  prm_.lse_part = lse_part_.get<float>();
  cfg_->launch(prm_, st);
  if (prm_.splits > 1) launch_splitkv_merge(prm_, st);
}

std::unique_ptr<runner> make_flash2_runner(const problem& p, bool writes_lse, flash2_row row, int forced_splits) {
  return std::make_unique<flash2_runner>(p, writes_lse, row, forced_splits);
}

}  // namespace attnbench::cuda

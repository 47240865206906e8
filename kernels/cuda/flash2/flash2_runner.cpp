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
#include "kernels/cuda/flash2/flash2_plan.hpp"

namespace attnbench::cuda {

namespace {

class flash2_runner final : public device_runner {
 public:
  flash2_runner(const problem& p, bool writes_lse, flash2_row row, int forced_splits) : device_runner(p, writes_lse) {
    // The split choice needs the SM count of the device the runner runs on.
    const flash2_plan st = plan_for(row, p, current_device_limits().sm_count);
    cfg_ = flash2_config_for(row, p);
    if (!cfg_)
      throw backend_error(fmt::format("flash2: no kernel instantiation for {}", benchmark_name("flash2", "cuda", p)));
    prm_.p = st.geometry;
    prm_.pack = st.pack;
    prm_.walk = st.walk;
    prm_.splits = forced_splits > 0 ? forced_splits : st.splits;
    prm_.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(p.d)));
    prm_.scale_log2 = static_cast<float>(1.0 / std::sqrt(static_cast<double>(p.d)) * M_LOG2E);
    // Device-side mask data: the sparse terms (and a block layout's bits) and,
    // for a listed walk, the key-tile lists, built here outside the timed run.
    // Every copy is enqueued on the runner's stream, so it is ordered before
    // the kernels that read it; a synchronous cudaMemcpy runs on the legacy default stream,
    // which nothing orders with attnbench's non-blocking stream. The lists' host source is
    // a member, alive until the runner goes (a pageable copy is staged before the call
    // returns; keeping it costs nothing and needs no such rule).
    mask_ = mask_on_device(p, stream());
    prm_.p.mask.sparse = mask_.p.mask.sparse;
    if (plan_uses_tile_list(st)) {
      tiles_host_ = make_kv_tile_list(st.geometry, tile_walk::visible);
      const kv_tile_list& l = tiles_host_;
      tile_num_ = device_buffer(l.num.size() * 4);
      tile_idx_ = device_buffer(l.indices.size() * 4);
      ATTN_CUDA_CHECK(
          cudaMemcpyAsync(tile_num_.get(), l.num.data(), l.num.size() * 4, cudaMemcpyHostToDevice, stream()));
      ATTN_CUDA_CHECK(
          cudaMemcpyAsync(tile_idx_.get(), l.indices.data(), l.indices.size() * 4, cudaMemcpyHostToDevice, stream()));
      prm_.tiles = {tile_num_.get<const std::int32_t>(), tile_idx_.get<const std::int32_t>(), l.heads, l.q_tiles,
                    l.kv_tiles};
    }
    if (prm_.splits > 1) {
      o_part_ = device_buffer(static_cast<std::size_t>(prm_.splits) * p.rows() * p.d * 4);
      lse_part_ = device_buffer(static_cast<std::size_t>(prm_.splits) * p.rows() * 4);
    }
  }

  void run() override {
    prm_.q = q_.get();
    prm_.k = k_.get();
    prm_.v = v_.get();
    prm_.o = o_.get();
    prm_.lse = lse_.get<float>();
    prm_.o_part = o_part_.get<float>();
    prm_.lse_part = lse_part_.get<float>();
    cfg_->launch(prm_, stream());
    if (prm_.splits > 1) launch_splitkv_merge(prm_, stream());
  }

 private:
  const flash2_config* cfg_ = nullptr;
  flash2_params prm_;
  device_mask mask_;         // the sparse terms on the device
  kv_tile_list tiles_host_;  // what tile_num_, tile_idx_ were copied from
  device_buffer o_part_, lse_part_, tile_num_, tile_idx_;
};

}  // namespace

std::unique_ptr<runner> make_flash2_runner(const problem& p, bool writes_lse, flash2_row row, int forced_splits) {
  return std::make_unique<flash2_runner>(p, writes_lse, row, forced_splits);
}

}  // namespace attnbench::cuda

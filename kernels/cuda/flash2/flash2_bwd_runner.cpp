// The backward runner of the CUDA flash2 row (p.pass bwd or fwd_bwd): forward()
// is the flash2 row's forward launch (O and lse at p's Br x Bc); backward() is
// the preprocess (D, dQ accumulator cleared), the main kernel and the dQ
// conversion (flash2_bwd_params.hpp), all on the runner's stream. Host C++.
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>

#include "kernels/cuda/common/device_backward_runner.cuh"
#include "core/cuda/launch_limits.hpp"
#include "kernels/cuda/flash2/flash2_bwd_params.hpp"
#include "kernels/cuda/flash2/flash2_forward_launch.hpp"

namespace attnbench::cuda {

namespace {

// fp32 dQ buffers in dQ elements: the accumulator (atomic mode), or the deterministic mode's
// S slices plus the accumulator carried between waves (none with one wave).
std::int64_t dq_slices_elems(const problem& p, std::int64_t slices) { return slices * p.q_elems(); }
std::int64_t dq_acc_elems(const problem& p, std::int64_t slices) {
  return slices == 0 || slices < bwd_kv_tiles(p) ? p.q_elems() : 0;
}
// fp32 dK, dV parts of the head splits, in elements (none with one split).
std::int64_t dkv_part_elems(const problem& p, int head_splits) {
  return head_splits > 1 ? head_splits * 2 * p.kv_elems() : 0;
}

class flash2_backward_runner final : public device_backward_runner {
 public:
  flash2_backward_runner(const problem& p, bool writes_lse, flash2_row row, bool deterministic, int slices,
                         int head_splits)
      : device_backward_runner(p, writes_lse),
        deterministic_(deterministic),
        slices_(deterministic ? std::min<std::int64_t>(slices, bwd_kv_tiles(p)) : 0),
        fwd_(p, row, 0, stream()),
        delta_(p.rows() * 4),
        dq_acc_(dq_acc_elems(p, slices_) * 4),
        dq_part_(dq_slices_elems(p, slices_) * 4),
        dkv_part_(dkv_part_elems(p, head_splits) * 4) {
    if (head_splits < 1 || p.group() % head_splits != 0)
      throw backend_error(
          fmt::format("flash2 backward: {} head splits do not divide the group of {}", head_splits, p.group()));
    main_ = find_flash2_bwd_kernel(static_cast<int>(p.d), static_cast<int>(p.Bc), p.type,
                                   row == flash2_row::sparse || p.mask.has_sparse());
    if (!main_)
      throw backend_error(
          fmt::format("flash2 backward: no kernel instantiation for {}", benchmark_name("flash2", "cuda", p)));
    // at p's tile (the row's check: is_bwd_tile); masks with sparse terms read them (and a
    // layout's bits) on the device, from the forward's copy
    bwd_.p = fwd_.device_problem();
    bwd_.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(p.d)));
    bwd_.scale_log2 = static_cast<float>(bwd_.scale * M_LOG2E);
    bwd_.head_splits = head_splits;
    if (row == flash2_row::sparse) {  // the forward's exact lists, transposed: query tiles per key tile
      q_tiles_host_ = transpose_tile_list(make_kv_tile_list(p, tile_walk::visible));
      q_tiles_ = tile_list_on_device(q_tiles_host_, stream());
      bwd_.q_tiles = q_tiles_.view;
    }
  }

 private:
  void forward() override { fwd_.launch(q_.get(), k_.get(), v_.get(), o_.get(), lse_.get<float>(), stream()); }
  void backward() override {
    bwd_.q = q_.get();
    bwd_.k = k_.get();
    bwd_.v = v_.get();
    bwd_.o = o_.get();
    bwd_.lse = lse_.get<const float>();
    bwd_.d_o = d_o_.get();
    bwd_.delta = delta_.get<float>();
    bwd_.dq_acc = dq_acc_.get<float>();  // deterministic: across waves (null with one wave)
    bwd_.dq_part = deterministic_ ? dq_part_.get<float>() : nullptr;
    bwd_.dq_slices = static_cast<int>(slices_);
    bwd_.dq = dq_.get();
    bwd_.dk = dk_.get();
    bwd_.dv = dv_.get();
    bwd_.dkv_part = dkv_part_.get<float>();  // null with one split
    launch_flash2_bwd_preprocess(bwd_, stream());
    if (!deterministic_) {
      bwd_.kt_offset = 0;
      main_(bwd_, stream());
      launch_flash2_bwd_convert_dq(bwd_, stream());
      if (bwd_.dkv_part) launch_flash2_bwd_sum_dkv(bwd_, stream());
      return;
    }
    // The main kernel indexes the slices by absolute key tile (an index relative to the wave
    // spilled 12 bytes at d = 128): its dq_part is kt_offset slices before the buffer, so that
    // the wave's key tiles land in slices 0..S-1. The address is computed as an integer; only
    // the wave's slices are touched.
    const auto base = reinterpret_cast<std::uintptr_t>(dq_part_.get<float>());
    for (bwd_.kt_offset = 0; bwd_.kt_offset < bwd_kv_tiles(bwd_.p); bwd_.kt_offset += slices_) {
      bwd_.dq_part =
          reinterpret_cast<float*>(base - static_cast<std::uintptr_t>(bwd_.kt_offset * bwd_.p.q_elems() * 4));
      main_(bwd_, stream());
      bwd_.dq_part = dq_part_.get<float>();
      launch_flash2_bwd_sum_dq(bwd_, stream());
    }
    if (bwd_.dkv_part) launch_flash2_bwd_sum_dkv(bwd_, stream());
  }

  bool deterministic_;
  std::int64_t slices_;        // deterministic mode: dQ slices (bwd_dq_slices)
  flash2_forward_launch fwd_;  // the row's forward: O and lse at p's tile
  flash2_bwd_launch_fn main_ = nullptr;
  flash2_bwd_params bwd_;
  q_tile_list q_tiles_host_;  // the sparse row: what q_tiles_ was copied from
  device_tile_list q_tiles_;
  // D [B, H, Nq]; the fp32 dQ accumulator [B, H, Nq, d] (atomic mode) or the slices
  // [slices][B, H, Nq, d] (deterministic mode); the head splits' fp32 dK, dV parts
  device_buffer delta_, dq_acc_, dq_part_, dkv_part_;
};

}  // namespace

std::unique_ptr<runner> make_flash2_backward_runner(const problem& p, bool writes_lse, flash2_row row,
                                                    bool deterministic, int forced_slices, int forced_head_splits) {
  const int sms = current_device_limits().sm_count;
  const int splits = forced_head_splits > 0 ? forced_head_splits : bwd_head_splits(p, sms);
  const int slices = forced_slices > 0 ? forced_slices : static_cast<int>(bwd_dq_slices(p, sms, splits));
  return std::make_unique<flash2_backward_runner>(p, writes_lse, row, deterministic, slices, splits);
}

std::int64_t flash2_backward_memory_bytes(const problem& p, flash2_row row, bool deterministic) {
  const int sms = current_device_limits().sm_count, splits = bwd_head_splits(p, sms);
  const std::int64_t slices = deterministic ? bwd_dq_slices(p, sms, splits) : 0;
  const std::int64_t dq_work = dq_acc_elems(p, slices) + dq_slices_elems(p, slices);
  // the sparse row's transposed lists
  const std::int64_t lists =
      row == flash2_row::sparse ? tile_list_bytes(p.mask.per_head() ? p.H : 1, bwd_kv_tiles(p), bwd_q_tiles(p)) : 0;
  const std::int64_t dkv_work = dkv_part_elems(p, splits);
  return device_backward_runner::backward_memory_bytes(p) + 4 * (p.rows() + dq_work + dkv_work) +
         mask_device_bytes(plan_for(row, p, 1)) + lists;
}

}  // namespace attnbench::cuda

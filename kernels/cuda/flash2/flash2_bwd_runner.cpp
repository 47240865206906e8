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
#include "kernels/cuda/common/device_mask.cuh"
#include "core/cuda/launch_limits.hpp"
#include "kernels/cuda/flash2/flash2_bwd_params.hpp"
#include "kernels/cuda/flash2/flash2_plan.hpp"

namespace attnbench::cuda {

namespace {

// fp32 dQ buffers in dQ elements: the accumulator (atomic mode), or the deterministic mode's
// S slices plus the accumulator carried between waves (none with one wave).
std::int64_t dq_slices_elems(const problem& p, std::int64_t slices) { return slices * p.q_elems(); }
std::int64_t dq_acc_elems(const problem& p, std::int64_t slices) {
  return slices == 0 || slices < bwd_kv_tiles(p) ? p.q_elems() : 0;
}

class flash2_backward_runner final : public device_backward_runner {
 public:
  flash2_backward_runner(const problem& p, bool writes_lse, bool deterministic, int slices)
      : device_backward_runner(p, writes_lse),
        deterministic_(deterministic),
        slices_(deterministic ? std::min<std::int64_t>(slices, bwd_kv_tiles(p)) : 0),
        delta_(p.rows() * 4),
        dq_acc_(dq_acc_elems(p, slices_) * 4),
        dq_part_(dq_slices_elems(p, slices_) * 4) {
    fwd_cfg_ = flash2_config_for(flash2_row::flash2, p);
    main_ = find_flash2_bwd_kernel(static_cast<int>(p.d), static_cast<int>(p.Bc), p.type);
    if (!fwd_cfg_ || !main_)
      throw backend_error(
          fmt::format("flash2 backward: no kernel instantiation for {}", benchmark_name("flash2", "cuda", p)));
    const flash2_plan st = plan_for(flash2_row::flash2, p, 1);
    const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(p.d)));
    fwd_.p = st.geometry;
    fwd_.pack = st.pack;
    fwd_.walk = st.walk;
    fwd_.splits = st.splits;
    fwd_.scale = scale;
    fwd_.scale_log2 = static_cast<float>(scale * M_LOG2E);
    bwd_.p = p;  // at p's tile (the row's check: is_bwd_tile)
    // Masks with sparse terms: both kernels read the terms (and a layout's bits) on the device.
    mask_ = mask_on_device(p, stream());
    fwd_.p.mask.sparse = bwd_.p.mask.sparse = mask_.p.mask.sparse;
    bwd_.scale = fwd_.scale;
    bwd_.scale_log2 = fwd_.scale_log2;
  }

 private:
  void forward() override {
    fwd_.q = q_.get();
    fwd_.k = k_.get();
    fwd_.v = v_.get();
    fwd_.o = o_.get();
    fwd_.lse = lse_.get<float>();
    fwd_cfg_->launch(fwd_, stream());
  }
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
    launch_flash2_bwd_preprocess(bwd_, stream());
    if (!deterministic_) {
      bwd_.kt_offset = 0;
      main_(bwd_, stream());
      launch_flash2_bwd_convert_dq(bwd_, stream());
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
  }

  bool deterministic_;
  std::int64_t slices_;  // deterministic mode: dQ slices (bwd_dq_slices)
  const flash2_config* fwd_cfg_ = nullptr;
  flash2_bwd_launch_fn main_ = nullptr;
  flash2_params fwd_;
  flash2_bwd_params bwd_;
  device_mask mask_;
  // D [B, H, Nq]; the fp32 dQ accumulator [B, H, Nq, d] (atomic mode) or the slices
  // [slices][B, H, Nq, d] (deterministic mode)
  device_buffer delta_, dq_acc_, dq_part_;
};

}  // namespace

std::unique_ptr<runner> make_flash2_backward_runner(const problem& p, bool writes_lse, bool deterministic,
                                                    int forced_slices) {
  const int slices =
      forced_slices > 0 ? forced_slices : static_cast<int>(bwd_dq_slices(p, current_device_limits().sm_count));
  return std::make_unique<flash2_backward_runner>(p, writes_lse, deterministic, slices);
}

std::int64_t flash2_backward_memory_bytes(const problem& p, bool deterministic) {
  const std::int64_t slices = deterministic ? bwd_dq_slices(p, current_device_limits().sm_count) : 0;
  const std::int64_t dq_work = dq_acc_elems(p, slices) + dq_slices_elems(p, slices);
  return device_backward_runner::backward_memory_bytes(p) + 4 * (p.rows() + dq_work) +
         mask_device_bytes(plan_for(flash2_row::flash2, p, 1));
}

}  // namespace attnbench::cuda

// The backward runner of the CUDA flash2 row (p.pass bwd or fwd_bwd): forward()
// is the flash2 row's forward launch (O and lse at p's Br x Bc); backward() is
// the preprocess (D, dQ accumulator cleared), the main kernel and the dQ
// conversion (flash2_bwd_params.hpp), all on the runner's stream. Host C++.
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <cmath>
#include <memory>

#include "kernels/cuda/common/device_backward_runner.cuh"
#include "kernels/cuda/common/device_mask.cuh"
#include "kernels/cuda/flash2/flash2_bwd_params.hpp"
#include "kernels/cuda/flash2/flash2_plan.hpp"

namespace attnbench::cuda {

namespace {

class flash2_backward_runner final : public device_backward_runner {
 public:
  flash2_backward_runner(const problem& p, bool writes_lse, bool deterministic)
      : device_backward_runner(p, writes_lse),
        deterministic_(deterministic),
        delta_(p.rows() * 4),
        dq_acc_(deterministic ? 0 : p.q_elems() * 4),
        dq_part_(deterministic ? bwd_kv_tiles(p) * p.q_elems() * 4 : 0) {
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
    bwd_.dq_acc = deterministic_ ? nullptr : dq_acc_.get<float>();
    bwd_.dq_part = deterministic_ ? dq_part_.get<float>() : nullptr;
    bwd_.dq = dq_.get();
    bwd_.dk = dk_.get();
    bwd_.dv = dv_.get();
    launch_flash2_bwd_preprocess(bwd_, stream());
    main_(bwd_, stream());
    if (deterministic_)
      launch_flash2_bwd_sum_dq(bwd_, stream());
    else
      launch_flash2_bwd_convert_dq(bwd_, stream());
  }

  bool deterministic_;
  const flash2_config* fwd_cfg_ = nullptr;
  flash2_bwd_launch_fn main_ = nullptr;
  flash2_params fwd_;
  flash2_bwd_params bwd_;
  device_mask mask_;
  // D [B, H, Nq]; the fp32 dQ accumulator [B, H, Nq, d] (atomic mode) or the per-key-tile
  // slices [kv_tiles][B, H, Nq, d] (deterministic mode)
  device_buffer delta_, dq_acc_, dq_part_;
};

}  // namespace

std::unique_ptr<runner> make_flash2_backward_runner(const problem& p, bool writes_lse, bool deterministic) {
  return std::make_unique<flash2_backward_runner>(p, writes_lse, deterministic);
}

std::int64_t flash2_backward_memory_bytes(const problem& p, bool deterministic) {
  const std::int64_t dq_work = deterministic ? bwd_kv_tiles(p) * p.q_elems() : p.q_elems();
  return device_backward_runner::backward_memory_bytes(p) + 4 * (p.rows() + dq_work) +
         mask_device_bytes(plan_for(flash2_row::flash2, p, 1));
}

}  // namespace attnbench::cuda

// The runner of the flash3 and flash3_fp8 rows: the plan and the tensor maps
// (encoded once, for the runner's own device buffers), the e4m3 descales of
// the inputs, then one flash3_fwd_kernel launch per run. Host C++.
#include <fmt/format.h>

#include <memory>

#include "kernels/cuda/common/device_runner.cuh"
#include "kernels/cuda/flash3/flash3_plan.hpp"

namespace attnbench::cuda {

namespace {

class flash3_runner final : public device_runner {
 public:
  flash3_runner(const problem& p, bool writes_lse) : device_runner(p, writes_lse) {
    if (std::string why = flash3_unsupported_reason(p); !why.empty()) throw backend_error(why);
    cfg_ = find_flash3_config(static_cast<int>(p.d), p.type);
    if (!cfg_)
      throw backend_error(fmt::format("flash3: no kernel instantiation for {}", benchmark_name("flash3", "cuda", p)));
    prm_ = make_flash3_params(p);
  }

  void set_inputs(const host_inputs& in) override {
    device_runner::set_inputs(in);  // e4m3: uploads the codes and keeps the scales (scales_)
    prm_.descale_q = scales_.q;
    prm_.descale_k = scales_.k;
    prm_.descale_v = scales_.v;
  }

  void run() override {
    if (encoded_for_ != q_.get()) {  // the buffers are the runner's own: encode once
      encode_flash3_maps(prm_, q_.get(), k_.get(), v_.get());
      encoded_for_ = q_.get();
    }
    prm_.o = o_.get();
    prm_.lse = lse_.get<float>();
    cfg_->launch(prm_, stream());
  }

 private:
  const flash3_config* cfg_ = nullptr;
  flash3_params prm_;
  const void* encoded_for_ = nullptr;
};

}  // namespace

std::unique_ptr<runner> make_flash3_runner(const problem& p, bool writes_lse) {
  return std::make_unique<flash3_runner>(p, writes_lse);
}

}  // namespace attnbench::cuda

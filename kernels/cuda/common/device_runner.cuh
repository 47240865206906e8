// Base of every CUDA runner: owns Q, K, V (in p.type), O (in
// output_dtype(p.type)) and the log-sum-exp (fp32) on the device, converts
// inputs on upload and outputs on download, and poisons outputs with NaN
// (all-ones bit pattern, a NaN in fp32, fp16 and bf16) so elements a kernel
// never writes show up. e4m3: Q, K, V hold the 1-byte codes of each tensor,
// e4m3_from_float(x / scale) with host_inputs::scales (exact: the host values
// are code x scale), the scales stay in scales_ for the kernel's descale, and
// O is bf16.
// Subclasses allocate their workspace in the constructor and implement run(),
// which enqueues on cuda::stream() without synchronising.
#pragma once

#include <cstdint>

#include "core/variant.hpp"
#include "core/cuda/device_buffer.cuh"

namespace attnbench::cuda {

class device_runner : public runner {
 public:
  device_runner(const problem& p, bool writes_lse);
  void set_inputs(const host_inputs& in) override;
  void poison_outputs() override;
  host_outputs get_outputs() override;

  // Device bytes of Q, K, V (dtype_bytes), O (output_bytes) and lse for p
  // (what this base allocates).
  static std::int64_t base_memory_bytes(const problem& p);

  // The device tensors, read by the cuda backend's check of every output row (docs/gpu.md,
  // harness/cuda/device_check.hpp): Q, K, V in p.type (e4m3: the codes), O in
  // output_dtype(p.type) as the last run left it, lse (null when the row writes none).
  struct device_tensors {
    const void *q, *k, *v, *o;
    const float* lse;
  };
  device_tensors tensors() const {
    return {q_.get(), k_.get(), v_.get(), o_.get(), writes_lse_ ? lse_.get<const float>() : nullptr};
  }
  const problem& problem_run() const { return p_; }

 protected:
  problem p_;
  bool writes_lse_;
  device_buffer q_, k_, v_, o_, lse_;
  input_scales scales_;  // of the last set_inputs (1 unless e4m3)
};

}  // namespace attnbench::cuda

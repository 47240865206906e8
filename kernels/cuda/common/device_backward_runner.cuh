// Base of every CUDA backward runner (docs/backward.md), the device twin of
// cpu_backward_runner: device_runner's Q, K, V, O and lse plus dO (in p.type)
// and the gradients dQ [B, H, Nq, d], dK and dV [B, Hkv, Nkv, d] (in p.type,
// as the libraries return them). set_inputs uploads and runs the row's own
// forward() once, untimed, and synchronises: the O and lse the backward reads.
// run() enqueues backward() (p.pass bwd) or forward() then backward()
// (fwd_bwd) on cuda::stream() without synchronising. Every backward writes
// its gradients in full on every run (a row that accumulates, e.g. dQ in fp32
// with atomics, clears its own accumulator inside backward(): part of the
// work, as the libraries' calls do), so nothing accumulates across runs.
#pragma once

#include <cstdint>

#include "kernels/cuda/common/device_runner.cuh"

namespace attnbench::cuda {

class device_backward_runner : public device_runner {
 public:
  device_backward_runner(const problem& p, bool writes_lse);
  void set_inputs(const host_inputs& in) override;
  void poison_outputs() override;  // bwd: the gradients; fwd_bwd: O and lse too
  void run() override;
  host_outputs get_outputs() override;

  // base_memory_bytes plus dO, dQ, dK and dV (what this base allocates).
  static std::int64_t backward_memory_bytes(const problem& p);

  struct gradient_tensors {
    const void *d_o, *dq, *dk, *dv;
  };
  gradient_tensors gradients() const { return {d_o_.get(), dq_.get(), dk_.get(), dv_.get()}; }

 protected:
  virtual void forward() = 0;   // O (and lse) from q_, k_, v_, enqueued on stream()
  virtual void backward() = 0;  // dq_, dk_, dv_ from q_, k_, v_, o_, lse_, d_o_, enqueued on stream()
  device_buffer d_o_, dq_, dk_, dv_;
};

}  // namespace attnbench::cuda

// The cuda backend's check of every output, outside the timed region:
// every element of O and lse scanned on the device (kernels/cuda/reference/row_check.cuh)
// and every row compared with the on-device fp32 reference (kernels/cuda/reference/
// reference_device.cuh), computed once per problem (tiles aside) and kept on the device
// until another problem comes. The harness adds the fp64 reference on sampled rows.
//
// Cost: the scan reads O (and lse) and the reference once, a memory-bound kernel of one
// thread per row; the reference is the warp-per-row fp32 kernel, ~6 d FLOPs per visible
// pair (docs/json_schema.md gives the H200 estimate). Waits are polled against the
// watchdog (harness/device_watchdog.hpp); the reference's own deadline is derived from
// its FLOPs.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/cuda/device_buffer.cuh"
#include "core/variant.hpp"
#include "kernels/cuda/common/device_runner.cuh"
#include "kernels/reference/row_check.hpp"

namespace attnbench::cuda {

class device_output_check {
 public:
  // r's outputs from its last run (inputs `in`, in.p the configuration's problem, as r
  // ran it): every row scanned; with a reference for `m` that fits in `free_bytes` of
  // device memory also every row's error against it (else rows_compared is 0).
  // rows_without_keys: [H * Nq] (kernels/reference/row_check.hpp). Synchronous.
  full_check check(const device_runner& r, const host_inputs& in, attention_math m,
                   std::span<const std::uint8_t> rows_without_keys, std::int64_t free_bytes);
  // Frees the kept reference unless it is p's (tiles aside).
  void keep_only(const problem& p);
  int references_made() const { return references_made_; }  // tests: once per problem

  // Device bytes the reference of p needs (kept O and lse; e4m3: its inputs in fp32 while it runs).
  static std::int64_t reference_bytes(const problem& p);
  // FLOPs the reference kernel executes for p at most (every key of every row: ~6 d per pair).
  static double reference_flops(const problem& p);

 private:
  struct kept {
    problem p;
    attention_math m = attention_math::softmax;
    device_buffer o, lse, sparse, layout;
  };
  void make_reference(const device_runner& r, const host_inputs& in, attention_math m);
  std::optional<kept> ref_;
  problem empty_for_{};
  bool have_empty_ = false;
  device_buffer empty_;
  int references_made_ = 0;
};

}  // namespace attnbench::cuda

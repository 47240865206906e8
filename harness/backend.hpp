// A backend is where runners execute (host CPU or a CUDA device). The harness
// talks to it only through this interface: availability, the JSON context it
// contributes (device, ceilings), memory left, and timing of one sample.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>

#include "core/variant.hpp"
#include "kernels/reference/row_check.hpp"

namespace attnbench {

struct timing_options {
  bool hot = false;  // skip the cache flush before each timed sample (GPU L2, CPU LLC)
  // When set, timed_sample() wraps its launches (not the flush) in a range of this name.
  std::string range;
};

class backend {
 public:
  virtual ~backend() = default;
  virtual backend_kind kind() const = 0;
  // Device description, measured and theoretical ceilings, kernel resources:
  // merged into the JSON "context" (schema in docs/json_schema.md).
  virtual nlohmann::json context(bool measure_ceilings) = 0;
  // Bytes the backend can still allocate for one run (inputs, outputs, workspace).
  virtual std::int64_t free_memory_bytes() = 0;
  // True: samples come from timed_sample() (Google Benchmark manual time).
  // False: the harness times run() itself with Google Benchmark real time.
  virtual bool manual_time() const = 0;
  // One timed sample: flush caches (unless opt.hot), then run `batch` launches
  // of r and return the seconds per launch. Throws backend_error.
  virtual double timed_sample(runner& r, int batch, const timing_options& opt) = 0;
  // True (the CPU backend): cold samples of the host path come from timed_sample(), one
  // run each after an LLC eviction outside the timed region, not from timing run() in a loop.
  virtual bool evicts_llc() const { return false; }
  // What the cache flush before a sample is, for context.timing.l2_flush.
  virtual std::string cache_flush(bool hot) const { return hot ? "none (--hot)" : "none"; }
  // Waits for queued work; throws backend_error on an asynchronous failure.
  virtual void synchronize() = 0;
  // Named range around a launch, visible in Nsight (no-op on the CPU).
  virtual void range_push(const std::string& name) = 0;
  virtual void range_pop() = 0;
  // The check of every output of r's last run where the outputs live
  // (kernels/reference/row_check.hpp), outside the timed region: the cuda backend scans
  // every element on the device and compares every row with its on-device fp32
  // reference (harness/cuda/device_check.hpp). nullopt: the harness checks the host
  // copy of the outputs itself (the cpu backend).
  virtual std::optional<full_check> check_outputs(runner& r, const host_inputs& in, attention_math m,
                                                  std::span<const std::uint8_t> rows_without_keys) {
    (void)r, (void)in, (void)m, (void)rows_without_keys;
    return std::nullopt;
  }
  // Frees what check_outputs keeps (its reference of the last problem) unless it is p's.
  virtual void keep_check_data(const problem& p) { (void)p; }
};

std::unique_ptr<backend> make_cpu_backend();
// Tests: the CPU backend with its LLC eviction and its clock (seconds) replaced.
struct cpu_timing_hooks {
  std::function<void()> evict;
  std::function<double()> now_s;
};
std::unique_ptr<backend> make_cpu_backend(cpu_timing_hooks hooks);
#ifdef ATTNBENCH_WITH_CUDA
// The CUDA backend itself (harness/cuda/, part of the CUDA module). Throws
// backend_error with the reason when no usable device is present.
std::unique_ptr<backend> make_cuda_backend();
#endif
// Through the CUDA module (harness/cuda_module.hpp), loaded on first use;
// throws backend_error with the reason when it is absent or no device is usable.
std::unique_ptr<backend> open_cuda_backend();
// "cuda" when a CUDA driver with a device is present and the CUDA backend opens,
// else "cpu"; `why` gets the reason the GPU is not used. Without a driver or
// device no CUDA library is loaded.
backend_kind best_available_backend(std::string* why = nullptr);

}  // namespace attnbench

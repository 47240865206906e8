// Device waits with a deadline (harness/device_watchdog.hpp): cudaEventQuery /
// cudaStreamQuery polled instead of cudaEventSynchronize / cudaStreamSynchronize, which
// block forever behind a hung kernel. Header-only, so the GPU tests' utilities (compiled
// against the host emulator too) use the same code as the cuda backend.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "core/cuda/cuda_check.cuh"
#include "harness/device_watchdog.hpp"

namespace attnbench::cuda {

// done, pending, or throws backend_error (sticky for the errors that poison a context)
// for an error of the work waited on.
inline poll_state query_result(cudaError_t e, const char* call) {
  if (e == cudaSuccess) return poll_state::done;
  if (e == cudaErrorNotReady) return poll_state::pending;
  throw_cuda(e, call, __FILE__, __LINE__);
}

// After a wait: the last error, which a cudaErrorNotReady answer may have left (not an error).
inline void check_last_error_after_wait() {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess && e != cudaErrorNotReady) throw_cuda(e, "cudaGetLastError() after a wait", __FILE__, __LINE__);
}

// Waits for event `e` (or stream `s`) at most `limit_s`; false when the deadline passed.
inline bool wait_event_for(cudaEvent_t e, double limit_s, const wait_clock& clock = steady_wait_clock()) {
  const bool done = poll_until_done([&] { return query_result(cudaEventQuery(e), "cudaEventQuery"); }, limit_s, clock);
  if (done) check_last_error_after_wait();
  return done;
}
inline bool wait_stream_for(cudaStream_t s, double limit_s, const wait_clock& clock = steady_wait_clock()) {
  const bool done =
      poll_until_done([&] { return query_result(cudaStreamQuery(s), "cudaStreamQuery"); }, limit_s, clock);
  if (done) check_last_error_after_wait();
  return done;
}

// The harness's waits: the current configuration's deadline for `launches` launches; on
// expiry device_wait_expired() (which does not return).
inline void wait_event(cudaEvent_t e, const std::string& what, std::int64_t launches) {
  const device_deadline& d = current_deadline();
  const double limit = d.for_launches(launches);
  const wait_clock clock = steady_wait_clock();
  const double t0 = clock.now_s();
  if (!wait_event_for(e, limit, clock)) device_wait_expired(what, clock.now_s() - t0, d.describe(launches));
}
inline void wait_stream(cudaStream_t s, const std::string& what, std::int64_t launches) {
  const device_deadline& d = current_deadline();
  const double limit = d.for_launches(launches);
  const wait_clock clock = steady_wait_clock();
  const double t0 = clock.now_s();
  if (!wait_stream_for(s, limit, clock)) device_wait_expired(what, clock.now_s() - t0, d.describe(launches));
}

}  // namespace attnbench::cuda

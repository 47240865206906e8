// Shared by the GPU tests: the skip-with-reason rule, the device wait with a
// deadline, and one "run a registry row and compare with the fp64 reference"
// step. Without a usable device every GPU test calls GTEST_SKIP() with the
// reason, so ctest lists it as skipped, never as passed.
//
// Device waits: sync_device() polls cudaStreamQuery against
// $ATTNBENCH_WAIT_TIMEOUT_S (default 10 s; the same floor as the sweep's waits,
// harness/device_watchdog.hpp). A hung kernel makes the test binary print
// "ATTNBENCH_TIMEOUT <suite.test>: ..." and end at once with status 3: every
// later test would wait on the same hung device, and a cudaFree behind it
// blocks forever. scripts/gpu_tests.sh then reruns the binary without the
// tests that already ran and without that one.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>

#include "core/cuda/device_buffer.cuh"
#include "harness/cuda/device_wait.hpp"
#include "harness/tensors.hpp"
#include "kernels/reference/attention_reference.hpp"
#include "kernels/registry.hpp"
#include "tests/gpu/tolerance.hpp"

namespace attnbench::testing {

// Empty when a CUDA device is usable, else why not.
inline std::string no_device_reason() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) return std::string("no usable CUDA device: cudaGetDeviceCount: ") + cudaGetErrorString(e);
  if (n == 0) return "no CUDA device present";
  return {};
}

#define ATTN_REQUIRE_GPU()                                                  \
  do {                                                                      \
    const std::string attn_why_ = ::attnbench::testing::no_device_reason(); \
    if (!attn_why_.empty()) GTEST_SKIP() << attn_why_;                      \
  } while (0)

// Seconds a test's device wait may take: $ATTNBENCH_WAIT_TIMEOUT_S, else 10.
inline double test_wait_limit_s() {
  if (const char* v = std::getenv("ATTNBENCH_WAIT_TIMEOUT_S"); v && *v) {
    char* end = nullptr;
    const double s = std::strtod(v, &end);
    if (end != v && *end == '\0' && s > 0 && std::isfinite(s)) return s;
  }
  return default_wait_floor_s;
}

// Waits for everything queued on cuda::stream(), at most test_wait_limit_s(); on a
// timeout ends the process (status 3) naming the running test. Throws on a device error.
inline void sync_device(const char* what = "the test's launches") {
  const double limit = test_wait_limit_s();
  if (cuda::wait_stream_for(cuda::stream(), limit)) return;
  const ::testing::TestInfo* t = ::testing::UnitTest::GetInstance()->current_test_info();
  std::fflush(stdout);
  std::fprintf(stderr,
               "ATTNBENCH_TIMEOUT %s.%s: %s did not complete within %g s ($ATTNBENCH_WAIT_TIMEOUT_S); "
               "the device is hung, the test binary ends\n",
               t ? t->test_suite_name() : "?", t ? t->name() : "?", what, limit);
  std::fflush(stderr);
  std::_Exit(3);
}

// The CUDA registry row `name` (throws when the build has none: the test fails saying so).
inline const variant& cuda_row(const char* name) {
  const variant* v = find_variant(name, backend_kind::cuda);
  if (!v) throw std::runtime_error(std::string("no cuda row ") + name);
  return *v;
}

// Runs registry row `v` on inputs `in`, its outputs poisoned first, and returns them.
inline host_outputs run_row(const variant& v, const host_inputs& in) {
  auto r = v.make(in.p);
  r->set_inputs(in);
  r->poison_outputs();
  r->run();
  sync_device();
  return r->get_outputs();
}

// O of every row of `v` on `in` against the fp64 reference of `math` (the row's own by
// default; softmax for an approximation's distance to exact attention).
inline error_report check_all_rows(const variant& v, const host_inputs& in,
                                   std::optional<attention_math> math = std::nullopt) {
  const host_outputs out = run_row(v, in);
  const std::vector<std::int64_t> rows = all_rows(in.p);
  const reference_rows ref = reference_for(math.value_or(v.math), in, rows);
  return compare_rows(in.p, out.o, {}, rows, ref.o, {});
}

struct checked_run {
  error_report err;
  host_outputs out;
};

// Runs registry row `v` on `p` (inputs from make_inputs(p, seed)), outputs
// poisoned first, and compares the rows `rows` (all rows when empty) with the
// fp64 reference. Throws on CUDA errors (the test then fails with the text).
inline checked_run run_and_check(const variant& v, const problem& p, std::int64_t max_rows = 1 << 30,
                                 std::uint64_t seed = 1234) {
  const host_inputs in = make_inputs(p, seed);
  checked_run c;
  c.out = run_row(v, in);
  const auto rows = sample_rows(p, max_rows);
  const reference_rows ref = reference_for(v.math, in, rows);
  const std::span<const double> ref_lse = v.writes_lse ? std::span<const double>(ref.lse) : std::span<const double>();
  c.err = compare_rows(p, c.out.o, c.out.lse, rows, ref.o, ref_lse);
  return c;
}

// Error bound for fp16/bf16 results: 2x the cuBLAS unfused baseline's error
// on the same problem plus a small floor, capped by the dtype's fixed bound
// (tests/gpu/tolerance.hpp); a baseline beyond the cap fails the test.
inline double low_precision_bound(double baseline_rel_err, dtype t) {
  const low_precision_tolerance tol = low_precision_tolerance_for(t, baseline_rel_err);
  EXPECT_TRUE(tol.baseline_within_cap) << "cublas_unfused's own rel-L2 error " << baseline_rel_err
                                       << " exceeds the fixed bound " << fixed_bound(t) << " of " << to_string(t);
  return tol.bound;
}

}  // namespace attnbench::testing

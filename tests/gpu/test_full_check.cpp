// On a GPU: the cuda backend's check of every output (harness/cuda/device_check.hpp)
// at the quick sweep's larger shapes. A correct row passes with every row compared against
// the on-device fp32 reference; one interior query tile re-poisoned on the device is found
// with its first row; the reference's and the scan's times are printed (the H200 figures
// docs/json_schema.md estimates: run scripts/gpu_tests.sh to measure them).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "core/mask.hpp"
#include "harness/cuda/device_check.hpp"
#include "harness/tensors.hpp"
#include "tests/gpu/cuda_cases.hpp"

namespace attnbench::testing {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TEST(CudaFullCheck, EveryRowOnTheDeviceAtLargeShapes) {
  ATTN_REQUIRE_GPU();
  const variant& row = *find_variant("flash2", backend_kind::cuda);
  for (const char* mask : {"causal", "none"})
    for (std::int64_t d : {64, 128}) {
      problem p = make_problem({1, 8, 8, 4096, 4096, d}, dtype::bf16, mask);
      SCOPED_TRACE(describe(p));
      const host_inputs in = make_inputs(p, 7);
      auto r = row.make(p);
      r->set_inputs(in);
      r->poison_outputs();
      r->run();
      sync_device();
      const auto* dr = dynamic_cast<const cuda::device_runner*>(r.get());
      ASSERT_NE(dr, nullptr);
      const std::vector<std::uint8_t> empty = rows_without_keys(p);
      cuda::device_output_check chk;
      const auto t0 = std::chrono::steady_clock::now();
      const full_check first = chk.check(*dr, in, attention_math::softmax, empty, std::int64_t{1} << 40);
      const double with_reference = seconds_since(t0);
      const auto t1 = std::chrono::steady_clock::now();
      const full_check again = chk.check(*dr, in, attention_math::softmax, empty, std::int64_t{1} << 40);
      const double scan = seconds_since(t1);
      EXPECT_EQ(chk.references_made(), 1);
      EXPECT_EQ(first.bad, 0) << "first bad row " << first.first_bad_row;
      EXPECT_EQ(first.rows_compared, p.rows());
      EXPECT_LE(first.worst_err, row_tolerance(p.type)) << "worst row " << first.worst_row;
      EXPECT_EQ(again.worst_row, first.worst_row);
      const double flops = 6.0 * double(d) * double(visible_pairs_per_head(p)) * double(p.B * p.H);
      std::printf("full check %s: reference + scan %.1f ms, scan alone %.2f ms; reference ~%.3g FLOP, %.2f TFLOP/s\n",
                  describe(p).c_str(), 1e3 * with_reference, 1e3 * scan, flops,
                  flops / std::max(with_reference - scan, 1e-9) / 1e12);
      // One interior query tile as a kernel that never wrote it leaves it: the poison.
      const std::int64_t lo = 3 * p.Nq + 37 * 64;
      const std::size_t elem = static_cast<std::size_t>(output_bytes(p.type));
      ATTN_CUDA_CHECK(cudaMemsetAsync(static_cast<char*>(const_cast<void*>(dr->tensors().o)) + lo * p.d * elem, 0xFF,
                                      64 * p.d * elem, cuda::stream()));
      sync_device();
      const full_check bad = chk.check(*dr, in, attention_math::softmax, empty, std::int64_t{1} << 40);
      EXPECT_EQ(bad.bad, 64 * p.d);
      EXPECT_EQ(bad.bad_rows, 64);
      EXPECT_EQ(bad.first_bad_row, lo);
    }
}

}  // namespace
}  // namespace attnbench::testing

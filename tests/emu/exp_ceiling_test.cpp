// The CUDA exp ceiling's kernel (harness/cuda/ceiling_kernels.cu, exp2_chains_kernel) run
// on the host emulator: its real source, launched through launch_exp2_chains as
// the cuda backend's measurement does (harness/cuda/exp_ceiling.cpp), its sums checked
// by the same exp2_chains_first_wrong. ctest emu.exp_ceiling (tests/emu_exp_ceiling.cmake).
// Controls: the check must reject the sums of fewer steps than claimed and a thread that
// never wrote (the emulator's cudaMalloc poison, NaN).
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "harness/cuda/ceiling_kernels.hpp"

namespace {

using namespace attnbench::cuda;

int failures = 0;

void expect(bool ok, const char* what) {
  std::printf("%s: %s\n", ok ? "ok" : "FAIL", what);
  failures += ok ? 0 : 1;
}

// Launches `blocks` blocks of `steps` steps into a buffer of `alloc_blocks` blocks and
// returns every thread's sum (threads past the launch hold the allocation's poison).
std::vector<float> run(unsigned blocks, int steps, unsigned alloc_blocks) {
  const std::size_t n = std::size_t(alloc_blocks) * exp2_chain_threads;
  float* out = nullptr;
  if (cudaMalloc(&out, n * sizeof(float)) != cudaSuccess) return {};
  exp2_chains_launch l;
  l.blocks = blocks;
  l.steps = steps;
  launch_exp2_chains(out, l, nullptr);
  std::vector<float> host(n);
  cudaMemcpy(host.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaDeviceSynchronize();
  cudaFree(out);
  return host;
}

}  // namespace

int main() {
  // 5 steps: the chains are far from converged, so the sums name the step count exactly.
  const std::vector<float> five = run(2, 5, 2);
  expect(five.size() == 2u * exp2_chain_threads, "the kernel ran (2 blocks x 256 threads)");
  expect(exp2_chains_first_wrong(five.data(), 2 * exp2_chain_threads, 5) == -1,
         "every thread's sum after 5 steps is the host chain's");
  bool exact = true;
  for (float s : five) exact = exact && s == exp2_chains_expected_sum(5);
  expect(exact, "the emulator's ex2 is exact: sums equal bit for bit");
  // Converged: every chain at x = -2^x.
  const std::vector<float> many = run(1, 300, 1);
  const float fixed = -0.641185744f;  // x = -2^x
  expect(exp2_chains_first_wrong(many.data(), exp2_chain_threads, 300) == -1 &&
             std::fabs(many[0] - exp2_chains_per_thread * fixed) < 1e-4f,
         "300 steps: every chain at the fixed point x = -2^x");
  // Controls: the check rejects sums of another step count, and a thread that never wrote.
  expect(exp2_chains_first_wrong(five.data(), 2 * exp2_chain_threads, 6) == 0,
         "control: 5 steps' sums checked as 6 steps' are rejected (thread 0)");
  const std::vector<float> partial = run(1, 5, 2);
  expect(exp2_chains_first_wrong(partial.data(), 2 * exp2_chain_threads, 5) == exp2_chain_threads,
         "control: a block that never ran (poisoned sums) is rejected at its first thread");
  std::printf("%s\n", failures ? "emu.exp_ceiling FAILED" : "emu.exp_ceiling passed");
  return failures ? 1 : 0;
}

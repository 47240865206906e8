// The CUDA backend's exp ceiling: exp2_chains_kernel (ceiling_kernels.cu) on
// every SM, 2048 threads per SM with 8 independent ex2.approx chains each, 4096 steps
// (~9e9 exp2 on an H200: ~2.3 ms at its 3.87e12/s), 3 warm-up launches, the median of 15
// timed by CUDA events; the last launch's sums are copied back and checked
// (exp2_chains_first_wrong) so the rate is that of work that happened. Registered with
// the harness (harness/exp_ceiling.hpp) at static initialisation, as the backend is.
// Host C++ (g++), like cuda_backend.cpp.
#include <cuda_runtime.h>

#include <algorithm>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/cuda/device_buffer.cuh"
#include "harness/cuda/ceiling_kernels.hpp"
#include "harness/cuda/device_wait.hpp"
#include "harness/exp_ceiling.hpp"

namespace attnbench::cuda {

namespace {

class events {
 public:
  events() {
    ATTN_CUDA_CHECK(cudaEventCreate(&a_));
    ATTN_CUDA_CHECK(cudaEventCreate(&b_));
  }
  ~events() {
    cudaEventDestroy(a_);
    cudaEventDestroy(b_);
  }
  events(const events&) = delete;
  events& operator=(const events&) = delete;
  cudaEvent_t a_ = nullptr, b_ = nullptr;
};

nlohmann::json measure_exp_ceiling_cuda() {
  int dev = 0, sms = 0;
  ATTN_CUDA_CHECK(cudaGetDevice(&dev));
  ATTN_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  exp2_chains_launch l;
  l.blocks = static_cast<unsigned>(std::max(1, sms)) * (2048 / exp2_chain_threads);
  l.steps = 4096;
  const cudaStream_t s = stream();
  device_buffer out(static_cast<std::size_t>(l.threads()) * sizeof(float));
  events ev;
  for (int i = 0; i < 3; ++i) launch_exp2_chains(out.get<float>(), l, s);
  std::vector<double> t;
  for (int i = 0; i < 15; ++i) {
    ATTN_CUDA_CHECK(cudaEventRecord(ev.a_, s));
    launch_exp2_chains(out.get<float>(), l, s);
    ATTN_CUDA_CHECK(cudaEventRecord(ev.b_, s));
    wait_event(ev.b_, "the exp ceiling's ex2 chains", 1);
    float ms = 0;
    ATTN_CUDA_CHECK(cudaEventElapsedTime(&ms, ev.a_, ev.b_));
    t.push_back(ms * 1e-3);
  }
  std::vector<float> host(static_cast<std::size_t>(l.threads()));
  ATTN_CUDA_CHECK(cudaMemcpyAsync(host.data(), out.get(), host.size() * sizeof(float), cudaMemcpyDeviceToHost, s));
  wait_stream(s, "the exp ceiling's result copy", 1);
  std::sort(t.begin(), t.end());
  const double median = t[t.size() / 2];
  nlohmann::json method = {
      {"kernel", "exp2_chains_kernel: ex2.approx.ftz.f32 (MUFU.EX2), 8 independent chains per thread"},
      {"sms", sms},
      {"blocks", l.blocks},
      {"threads_per_block", exp2_chain_threads},
      {"steps", l.steps},
      {"exps_per_launch", l.exps()},
      {"launches", t.size()},
      {"median_ms", median * 1e3},
      {"checked", "every thread's sum of its chains against the host's float chain"}};
  const std::int64_t bad = exp2_chains_first_wrong(host.data(), l.threads(), l.steps);
  if (bad >= 0) {
    method["error"] = fmt::format("thread {} wrote {} where {} was expected: the exp ceiling is not recorded", bad,
                                  host[static_cast<std::size_t>(bad)], exp2_chains_expected_sum(l.steps));
    return {{"exps_per_s", nullptr}, {"exp_method", method}};
  }
  return {{"exps_per_s", l.exps() / median}, {"exp_method", method}};
}

const bool exp_ceiling_registered = (register_cuda_exp_ceiling(&measure_exp_ceiling_cuda), true);

}  // namespace
}  // namespace attnbench::cuda

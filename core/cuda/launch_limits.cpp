#include "core/cuda/launch_limits.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>

namespace attnbench::cuda {

const device_limits& current_device_limits() {
  static const device_limits lim = [] {
    device_limits l;
    int n = 0, dev = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0 || cudaGetDevice(&dev) != cudaSuccess) {
      cudaGetLastError();  // clear the error a machine without a GPU leaves
      return l;
    }
    auto attr = [&](cudaDeviceAttr a, std::int64_t& dst) {
      int v = 0;
      if (cudaDeviceGetAttribute(&v, a, dev) == cudaSuccess)
        dst = v;
      else
        cudaGetLastError();
    };
    attr(cudaDevAttrMaxGridDimX, l.grid_x);
    attr(cudaDevAttrMaxGridDimY, l.grid_y);
    attr(cudaDevAttrMaxGridDimZ, l.grid_z);
    attr(cudaDevAttrMaxThreadsPerBlock, l.threads_per_block);
    attr(cudaDevAttrMaxSharedMemoryPerBlockOptin, l.smem_optin);
    std::int64_t sms = l.sm_count;
    attr(cudaDevAttrMultiProcessorCount, sms);
    l.sm_count = static_cast<int>(sms);
    std::int64_t major = l.cc_major, minor = l.cc_minor;
    attr(cudaDevAttrComputeCapabilityMajor, major);
    attr(cudaDevAttrComputeCapabilityMinor, minor);
    l.cc_major = static_cast<int>(major);
    l.cc_minor = static_cast<int>(minor);
    l.from_device = true;
    return l;
  }();
  return lim;
}

support check_launch(const launch_shape& s, const std::string& what) {
  const device_limits& l = current_device_limits();
  const char* whose = l.from_device ? "the device's" : "sm_90's";
  auto over = [&](const char* field, std::int64_t v, std::int64_t limit) {
    return support::no(fmt::format("{}: {} = {} exceeds {} limit {}", what, field, v, whose, limit));
  };
  if (s.grid_x > l.grid_x) return over("grid x", s.grid_x, l.grid_x);
  if (s.grid_y > l.grid_y) return over("grid y", s.grid_y, l.grid_y);
  if (s.grid_z > l.grid_z) return over("grid z", s.grid_z, l.grid_z);
  if (s.threads > l.threads_per_block) return over("threads per block", s.threads, l.threads_per_block);
  if (s.smem_bytes > l.smem_optin)
    return support::no(fmt::format("{}: {} KB shared memory per block exceeds {} limit {} KB", what,
                                   s.smem_bytes / 1024, whose, l.smem_optin / 1024));
  return support::yes();
}

}  // namespace attnbench::cuda

// One check of a launch against the device's limits, for every CUDA row's
// supports(): grid extents, threads per block and dynamic shared memory. The
// limits come from the current device; without one (dry runs, listing on a
// machine with no GPU) from sm_90's values, named as such in the reason.
#pragma once

#include <cstdint>
#include <string>

#include "core/variant.hpp"

namespace attnbench::cuda {

struct device_limits {
  std::int64_t grid_x = 2147483647, grid_y = 65535, grid_z = 65535;
  std::int64_t threads_per_block = 1024;
  std::int64_t smem_optin = 232448;  // bytes of dynamic shared memory a block may opt into
  int sm_count = 132;
  int cc_major = 9, cc_minor = 0;  // compute capability
  bool from_device = false;        // false: no usable device, sm_90 (H100/H200) values
};
// Queried once per process (cudaDeviceGetAttribute on the current device).
const device_limits& current_device_limits();

struct launch_shape {
  std::int64_t grid_x = 1, grid_y = 1, grid_z = 1;
  std::int64_t threads = 1;
  std::int64_t smem_bytes = 0;  // dynamic shared memory per block
};

// yes, or no("<what>: grid y = 70000 exceeds the device's limit 65535").
support check_launch(const launch_shape& l, const std::string& what);

}  // namespace attnbench::cuda

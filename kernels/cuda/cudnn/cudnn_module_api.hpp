// The seam between the cudnn_sdpa row (cudnn_rows.cpp, in the CUDA module) and its
// implementation (cudnn_sdpa.cpp, built alone into libattnbench_cudnn.so, the only
// object that needs libcudnn.so.9 and libnvrtc). The row loads that module with dlopen
// the first time it is asked anything, so a cuDNN that is absent or does not load
// disables cudnn_sdpa alone, with dlopen's reason, and every other CUDA row works
// (docs/cudnn.md "Loading").
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/variant.hpp"

namespace attnbench::cuda {

// 2: the backward (docs/backward.md): p.pass picks the graphs, `deterministic` cuDNN's deterministic
// backward algorithm (the cudnn_sdpa_deterministic row).
inline constexpr int cudnn_sdpa_api_version = 2;

struct cudnn_sdpa_api {
  int version;  // cudnn_sdpa_api_version of the module
  support (*supports)(const problem& p, bool deterministic);
  std::int64_t (*workspace_bytes)(const problem& p, bool deterministic);
  std::unique_ptr<runner> (*make_runner)(const problem& p, bool deterministic);
  std::string (*validate_deviceless)(const problem& p, int sm_version, int sm_count);
};

}  // namespace attnbench::cuda

// The module's one entry point (looked up with dlsym).
extern "C" const attnbench::cuda::cudnn_sdpa_api* attnbench_cudnn_sdpa_api();

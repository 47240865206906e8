// The layout the attnbench executable and its separately built CUDA module
// (libattnbench_cuda.so, harness/cuda_module.cpp) must share: every type that crosses between
// them by value or through the registry. A module built from other sources (a build tree where
// only `attnbench` was rebuilt after a pull) is refused at load with one line instead of
// crashing in the registry. Bump module_abi_version for a change of meaning that keeps every
// size (new enum values in the same width).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "core/variant.hpp"

namespace attnbench {

inline constexpr std::uint64_t module_abi_version = 1;

static_assert(std::is_standard_layout_v<problem>, "offsetof below");

constexpr std::uint64_t module_abi_stamp() {
  const std::uint64_t parts[] = {module_abi_version,
                                 sizeof(problem),
                                 alignof(problem),
                                 offsetof(problem, type),
                                 offsetof(problem, mask),
                                 offsetof(problem, Br),
                                 offsetof(problem, phi),
                                 offsetof(problem, pass),
                                 offsetof(problem, dstate),
                                 sizeof(mask_spec),
                                 sizeof(sparse_terms),
                                 sizeof(variant),
                                 sizeof(capabilities),
                                 sizeof(model_figures),
                                 sizeof(host_inputs),
                                 sizeof(host_outputs),
                                 sizeof(input_scales),
                                 sizeof(runner),
                                 static_cast<std::uint64_t>(attention_math_count)};
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a over the bytes of each part
  for (const std::uint64_t v : parts)
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xffu;
      h *= 1099511628211ull;
    }
  return h;
}

}  // namespace attnbench

// The CUDA backend as a loadable module. core/cuda, kernels/cuda and harness/cuda are
// built into libattnbench_cuda.so (beside the executable; $ATTNBENCH_CUDA_MODULE
// overrides the path), which links cudart and cuBLAS. attnbench loads it with dlopen
// only when a command asks for CUDA (--backend cuda|auto, list of all rows), so a
// CPU-only run maps no CUDA library: a small CPU `attnbench run` (2 cores, no GPU) went
// from 0.089 s and 220 MiB peak RSS with cudart + cuBLAS linked in to 0.008 s and 8.5 MiB.
// The module registers its rows (kernels/cuda/cuda_rows.cpp) and its backend factory
// (harness/cuda/cuda_backend.cpp) at its static initialisation; the GPU tests and the
// host emulator link the same objects directly, which registers them at start-up.
// The module does not need cuDNN: the cudnn_sdpa row loads libattnbench_cudnn.so (beside
// it; $ATTNBENCH_CUDNN_MODULE overrides) on first use, so a cuDNN that does not load
// disables that row alone (docs/cudnn.md).
#pragma once

#include <memory>
#include <string>

#include "harness/backend.hpp"

namespace attnbench {

// Makes the CUDA rows and backend available: a no-op when the CUDA part is linked in or
// already loaded. False with the reason (built without CUDA, module absent, dlopen's
// error such as a missing libcudart) otherwise. Must run before the registry is read.
bool load_cuda_module(std::string* why);

// Called by the CUDA part at its static initialisation.
void register_cuda_backend_factory(std::unique_ptr<backend> (*make)());

// True when libcuda.so.1 loads, cuInit succeeds and a device is present (the driver
// API only, no runtime library); `why` gets the reason when not.
bool cuda_driver_has_device(std::string* why);

}  // namespace attnbench

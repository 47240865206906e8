// What the cudnn_sdpa row (cudnn_rows.cpp, forwarding to cudnn_sdpa.cpp in
// libattnbench_cudnn.so) offers besides its row, for tests; declared only where the row
// is built (ATTNBENCH_WITH_CUDNN).
#pragma once

#include <string>

#include "core/problem.hpp"

namespace attnbench::cuda {

// cudnn-frontend's validation of the row's graph for p on compute capability
// sm_version (90 = Hopper) with sm_count multiprocessors, without a device: the frontend's support rules
// for this cuDNN version (head dims, band, Nq vs Nkv, GQA). Empty when
// valid, else cuDNN's message. Plans and kernels still need a device.
// Through libattnbench_cudnn.so (loaded on first use): when it does not load, its reason.
std::string cudnn_sdpa_validate_deviceless(const problem& p, int sm_version, int sm_count);

// Why libattnbench_cudnn.so did not load (cudnn_sdpa is then disabled alone); empty when it did.
std::string cudnn_module_error();

}  // namespace attnbench::cuda

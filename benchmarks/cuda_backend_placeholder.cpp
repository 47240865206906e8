// Linked only while no CUDA backend source defines make_cuda_backend()
// (see benchmarks/CMakeLists.txt): the harness then reports this reason and
// uses the cpu backend.
#include "harness/backend.hpp"

namespace attnbench {

std::unique_ptr<backend> make_cuda_backend() {
  throw backend_error("the CUDA backend (harness/cuda/) is not implemented in this build");
}

}  // namespace attnbench

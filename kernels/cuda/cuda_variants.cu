#include "harness/registry.hpp"

namespace attnbench {
void add_cuda_variants(std::vector<variant>&) {}
}  // namespace attnbench

#include "harness/registry.hpp"

namespace attnbench {
void add_cpu_variants(std::vector<variant>&) {}
}  // namespace attnbench

// The emulator's registry holds the CUDA rows only: the CPU kernel families
// (kernels/cpu) are tested natively by tests/cpu and not built here.
#include "kernels/registry.hpp"

namespace attnbench {
void add_cpu_variants(std::vector<variant>&) {}
}  // namespace attnbench

// Temporary empty row providers for CUDA kernel families not yet written.
// Each family's launch file defines its own function; delete it here then.
#include "harness/registry.hpp"

namespace attnbench {
}  // namespace attnbench

// Admission: whether a supported configuration fits in memory before anything
// is allocated. The runner's own allocations (row.memory_bytes) go against the
// backend's free memory; the harness's host copies of inputs and outputs
// against the host's (on the CPU backend both are host memory, checked as one).
#pragma once

#include "core/variant.hpp"
#include "harness/backend.hpp"
#include "harness/sweep.hpp"

namespace attnbench {

struct memory_need {
  double run_bytes = 0;   // row.memory_bytes(p); 0 when the row states none
  double host_bytes = 0;  // host copies of inputs and outputs the harness keeps (float32)
};
memory_need memory_need_of(const configuration& c);

// ok, or no("needs 1.50 GiB, 0.75 GiB free") naming the memory that is short.
support admit(backend& be, const configuration& c);

}  // namespace attnbench

// Internals of the fiber runtime (emu_fiber.cpp) that the instruction twins
// (emu_runtime.cpp) use: the running CUDA thread and its cp.async queues, the
// dynamic shared memory bounds of the running launch, error reporting.
#pragma once

#include <cstddef>
#include <vector>

namespace attnbench::emu {

struct async_copy {
  unsigned char* dst;
  const unsigned char* src;
  int src_bytes;
};
struct thread_state {
  std::vector<std::vector<async_copy>> groups;  // committed cp.async groups, oldest first
  std::vector<async_copy> pending;              // not yet committed
};
thread_state& current_thread();           // the running CUDA thread
unsigned current_lane();
const unsigned char* dynamic_smem_begin();  // of the running kernel (the extern __shared__ array it uses)
std::size_t dynamic_smem_bytes();           // of the running launch
void set_dynamic_smem(const unsigned char* begin);  // the array kernels of this TU declare

}  // namespace attnbench::emu

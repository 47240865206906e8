// Internals of the fiber runtime (emu_fiber.cpp) that the instruction twins
// (emu_runtime.cpp) use: the running CUDA thread and its cp.async queues, the
// dynamic shared memory bounds of the running launch, error reporting.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace attnbench::emu {

struct async_copy {
  unsigned char* dst;
  const unsigned char* src;
  int src_bytes;
  int bytes = 16;  // the copy's size (cp-size): 16, or 4 (cp_async_4)
};
struct thread_state {
  std::vector<std::vector<async_copy>> groups;  // committed cp.async groups, oldest first
  std::vector<async_copy> pending;              // not yet committed
};
thread_state& current_thread();  // the running CUDA thread
unsigned current_lane();
const unsigned char* dynamic_smem_begin();          // of the running kernel (the extern __shared__ array it uses)
std::size_t dynamic_smem_bytes();                   // of the running launch
void set_dynamic_smem(const unsigned char* begin);  // the array kernels of this TU declare

// ---- Hopper support (emu_hopper.cpp) -------------------------------------------
bool in_kernel_thread();
unsigned current_tid();  // in the CTA
unsigned cta_threads();
bool in_shared(const void* p, std::size_t n);  // inside the __shared__ storage (the static TLS block)
void note_progress();                          // an event that may let a waiting thread go on
// The runtime's own bookkeeping in a running fiber (TSan ignore region), and
// happens-before edges (TSan release/acquire on a sync object's address).
void runtime_section_begin();
void runtime_section_end();
struct runtime_guard {
  runtime_guard() { runtime_section_begin(); }
  ~runtime_guard() { runtime_section_end(); }
  runtime_guard(const runtime_guard&) = delete;
  runtime_guard& operator=(const runtime_guard&) = delete;
};
void hb_release(const void* sync);
void hb_acquire(const void* sync);
// Warpgroup collective (128 consecutive threads): each deposits `bytes` (<= 64)
// at its slot; the last to arrive runs complete(ctx, slots) (128 slots, 64
// bytes apart) before any goes on. Returns the slots, valid until the
// thread's next warpgroup collective.
enum wg_op : int { wg_fence = 1, wg_mma, wg_commit, wg_wait, wg_setmaxnreg };
const unsigned char* warpgroup_exchange(int op, const void* mine, std::size_t bytes,
                                        void (*complete)(void*, const unsigned char*), void* ctx);
void named_barrier(int id, int nthreads, bool wait);
// Suspends the running thread until wake_mbarrier(bar), or until a pass in
// which nothing could run after something had changed (a poll may return false).
void block_on_mbarrier(const void* bar);
void wake_mbarrier(const void* bar);
// Scheduler hooks (emu_hopper.cpp): per CTA, after each pass (performs queued
// TMA copies; true if any), at the end, and the mbarrier part of a deadlock
// report (waiters(bar) counts the threads waiting for bar).
void hopper_cta_begin(unsigned nthreads);
bool hopper_end_of_pass();
void hopper_cta_end(bool deadlocked);
std::string hopper_deadlock_detail(unsigned (*waiters)(const void* bar));

}  // namespace attnbench::emu

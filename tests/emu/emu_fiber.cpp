// The fiber runtime of the host emulator (tests/emu/README.md): every CUDA
// thread of a CTA is a fiber with its own stack, switched by a hand-written
// x86-64 context switch (callee-saved registers, mxcsr and the x87 control
// word; no signal mask, so no system call per switch as with swapcontext, and
// no extra dependency as with Boost.Context). CTAs run one after another on
// the calling OS thread; inside a CTA the scheduler resumes each runnable
// fiber in thread order until it reaches a scheduling point:
//   * __syncthreads: released when every thread of the CTA has arrived;
//   * a warp collective (shuffles, votes, __syncwarp and the ldmatrix/mma
//     twins): released when every lane of the warp has arrived at the same
//     collective; the lanes' operands are exchanged through a per-warp slot
//     array (two generations, so a fast lane cannot overwrite operands a slow
//     one has yet to read).
// A pass over the CTA with nothing runnable while threads remain is a
// deadlock (a barrier reached by part of the CTA, a collective by part of a
// warp, a thread that exited while others wait): reported with the kernel's
// name, the launch fails with cudaErrorLaunchFailure.
// Shared memory: `__shared__` is `thread_local` (include/cuda_runtime.h), so
// all of it -- static arrays and the extern dynamic arrays defined below --
// lives in the executable's static TLS block; that block is saved before a
// launch, filled with 0xFF (NaN in fp16, bf16 and fp32) before every CTA and
// restored after the launch (of the two 227 KB extern arrays only the first
// smem_bytes of the launch). The runtime itself keeps no thread_local state.
// Sanitizers (ATTNBENCH_EMU_SANITIZE, tests/emu/README.md "Sanitizers"):
//   * ASan: every switch is announced (__sanitizer_start_switch_fiber /
//     __sanitizer_finish_switch_fiber, each fiber keeps its fake stack), fiber
//     stacks are unpoisoned when (re)initialised, the dynamic shared memory
//     beyond the launch's size is poisoned during the launch, and cudaMalloc
//     allocates exactly the bytes asked for (a read past the end is reported).
//   * TSan: every CUDA thread is a TSan fiber and switches do NOT synchronise;
//     happens-before comes only from __syncthreads and __syncwarp (arrival:
//     release, departure: acquire), from the launch (host -> every thread of
//     each CTA) and from the end of each CTA (its threads -> host; CTAs are
//     therefore ordered, as the emulator runs them). Shuffles, votes,
//     ldmatrix and mma exchange registers, not memory: no ordering, as on a
//     device. The runtime's own bookkeeping is invisible to TSan (ignore
//     regions): only the kernels' memory accesses are checked, so a missing
//     barrier between two threads of a CTA is a data race report.
#include "tests/emu/emu_fiber.hpp"

#include <cuda_runtime.h>
#include <cxxabi.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tests/emu/emu_control.hpp"
#include "tests/emu/emu_kernel_launch.hpp"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ATTN_EMU_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define ATTN_EMU_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(ATTN_EMU_ASAN)
#define ATTN_EMU_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__) && !defined(ATTN_EMU_TSAN)
#define ATTN_EMU_TSAN 1
#endif
#if ATTN_EMU_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#if ATTN_EMU_TSAN
#include <sanitizer/tsan_interface.h>
extern "C" void __tsan_ignore_thread_begin();  // libtsan, not declared by its header
extern "C" void __tsan_ignore_thread_end();
#endif

namespace {
// ---- sanitizer hooks (no-ops without them) ---------------------------------------
// ASan: announce a switch to the stack [lo, lo + bytes); `fake` keeps the
// leaving context's fake stack (nullptr: a fresh fiber starting).
inline void asan_start_switch(void** fake, const void* lo, std::size_t bytes) {
#if ATTN_EMU_ASAN
  __sanitizer_start_switch_fiber(fake, lo, bytes);
#else
  (void)fake, (void)lo, (void)bytes;
#endif
}
inline void asan_finish_switch(void* fake, const void** old_lo, std::size_t* old_bytes) {
#if ATTN_EMU_ASAN
  __sanitizer_finish_switch_fiber(fake, old_lo, old_bytes);
#else
  (void)fake, (void)old_lo, (void)old_bytes;
#endif
}
inline void asan_poison(const void* p, std::size_t n, bool poisoned) {
#if ATTN_EMU_ASAN
  if (poisoned)
    __asan_poison_memory_region(p, n);
  else
    __asan_unpoison_memory_region(p, n);
#else
  (void)p, (void)n, (void)poisoned;
#endif
}
// TSan: fiber contexts, ignore regions (the runtime's bookkeeping), and the
// happens-before edges of barriers (release at arrival, acquire at departure).
inline void* tsan_current() {
#if ATTN_EMU_TSAN
  return __tsan_get_current_fiber();
#else
  return nullptr;
#endif
}
inline void* tsan_create() {
#if ATTN_EMU_TSAN
  return __tsan_create_fiber(0);
#else
  return nullptr;
#endif
}
inline void tsan_destroy(void* f) {
#if ATTN_EMU_TSAN
  if (f) __tsan_destroy_fiber(f);
#else
  (void)f;
#endif
}
inline void tsan_name(void* f, unsigned tid) {
#if ATTN_EMU_TSAN
  char name[40];
  std::snprintf(name, sizeof name, "CUDA thread %u of the CTA", tid);
  __tsan_set_fiber_name(f, name);
#else
  (void)f, (void)tid;
#endif
}
// A deadlock abandons the threads still waiting (inside the runtime, in an
// ignore region). Their history joins `self` (a synchronising switch there and
// back; nothing runs in between), the ignore region is closed and the context
// destroyed (TSan aborts on destroying one with ignores enabled).
inline void tsan_abandon(void* f, void* self) {
#if ATTN_EMU_TSAN
  if (!f) return;
  __tsan_switch_to_fiber(f, 0);
  __tsan_ignore_thread_end();
  __tsan_switch_to_fiber(self, 0);
  __tsan_destroy_fiber(f);
#else
  (void)f, (void)self;
#endif
}
inline void tsan_switch(void* f) {  // no synchronisation: only barriers order memory
#if ATTN_EMU_TSAN
  __tsan_switch_to_fiber(f, __tsan_switch_to_fiber_no_sync);
#else
  (void)f;
#endif
}
inline void tsan_ignore(bool begin) {
#if ATTN_EMU_TSAN
  if (begin)
    __tsan_ignore_thread_begin();
  else
    __tsan_ignore_thread_end();
#else
  (void)begin;
#endif
}
inline void tsan_release(void* sync) {
#if ATTN_EMU_TSAN
  __tsan_release(sync);
#else
  (void)sync;
#endif
}
inline void tsan_acquire(void* sync) {
#if ATTN_EMU_TSAN
  __tsan_acquire(sync);
#else
  (void)sync;
#endif
}
// The runtime's own state (scheduler, barrier counters, warp slots) in a
// running fiber: not a kernel's memory, not checked.
struct runtime_section {
  runtime_section() { tsan_ignore(true); }
  ~runtime_section() { tsan_ignore(false); }
  runtime_section(const runtime_section&) = delete;
  runtime_section& operator=(const runtime_section&) = delete;
};
// Sync objects of the happens-before edges (only their addresses matter).
char g_hb_cta_start, g_hb_cta_end;  // host -> CTA, CTA -> host
char g_hb_bar[2];                   // __syncthreads, by barrier parity
char g_hb_warp[32][2];              // __syncwarp, by warp and collective parity
char g_hb_named[16][2];             // named barriers, by id and generation parity
}  // namespace

// ---- the extern __shared__ arrays of the kernels -------------------------------
// flash2_kernel.cuh: `extern __shared__ __align__(128) unsigned char smem_raw[]`
// at block scope in namespace attnbench::cuda.
// Its users call the TLS init function _ZTH... unconditionally (g++ 12);
// the array needs no initialisation, so it is a no-op.
namespace attnbench::cuda {
thread_local __attribute__((aligned(1024))) unsigned char smem_raw[232448];  // 1024: the 128B swizzle's repeat
}
extern "C" void attn_emu_smem_raw_tls_init() __asm__("_ZTHN9attnbench4cuda8smem_rawE");
extern "C" void attn_emu_smem_raw_tls_init() {}
// flash1.cu: `extern __shared__ __align__(16) unsigned char smem[]` at block
// scope in attnbench::cuda's unnamed namespace; g++ gives that declaration
// external linkage under this mangled name (and calls a TLS init function
// __tls_init it never defines: the no-op below).
extern thread_local __attribute__((aligned(128))) unsigned char attn_emu_flash1_smem[232448] __asm__(
    "_ZN9attnbench4cuda12_GLOBAL__N_14smemE");
thread_local __attribute__((aligned(128))) unsigned char attn_emu_flash1_smem[232448];
extern "C" void __tls_init() {}

dim3 threadIdx, blockIdx, blockDim, gridDim;

// ---- context switch ------------------------------------------------------------
extern "C" void attn_emu_switch(void** save_sp, void* new_sp);
extern "C" void attn_emu_trampoline();
asm(R"(
  .text
  .globl attn_emu_switch
  .hidden attn_emu_switch
  .type attn_emu_switch,@function
attn_emu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size attn_emu_switch, .-attn_emu_switch
  .globl attn_emu_trampoline
  .hidden attn_emu_trampoline
  .type attn_emu_trampoline,@function
attn_emu_trampoline:
  movq %r12, %rdi
  callq *%r13
  ud2
  .size attn_emu_trampoline, .-attn_emu_trampoline
)");

namespace attnbench::emu {
namespace {

#if ATTN_EMU_ASAN || ATTN_EMU_TSAN
constexpr std::size_t kStackBytes = 1024 * 1024;  // instrumented frames are larger (redzones)
#else
constexpr std::size_t kStackBytes = 256 * 1024;
#endif
constexpr std::size_t kGuardBytes = 4096;
constexpr std::size_t kMaxDynamicSmem = 232448;  // sm_90: 227 KB opt-in
constexpr std::size_t kDefaultDynamicSmem = 48 * 1024;

enum class fstate { runnable, at_barrier, at_warp, at_warpgroup, at_named_barrier, at_mbarrier, done };

struct fiber {
  void* sp = nullptr;
  unsigned char* stack = nullptr;  // lowest usable byte (above the guard page)
  fstate state = fstate::runnable;
  unsigned tid = 0;
  dim3 idx;
  unsigned wgen = 0;           // warp collectives this thread has passed
  unsigned bgen = 0;           // __syncthreads this thread has passed
  unsigned wggen = 0;          // warpgroup collectives this thread has passed
  int named_id = -1;           // the named barrier it waits at
  const void* mbar = nullptr;  // the mbarrier it waits for
  bool parked = false;         // finished its CUDA thread; waits in fiber_main for the next one
  thread_state ts;
  void* asan_fake = nullptr;  // its ASan fake stack while switched out
  void* tsan = nullptr;       // its TSan fiber
  fiber() = default;
  fiber(const fiber&) = delete;
  fiber& operator=(const fiber&) = delete;
  ~fiber() {  // at exit: the TSan context of a parked fiber (not of one running the exit)
    if (parked) tsan_destroy(tsan);
  }
};

struct warp_state {
  unsigned arrived[2] = {0, 0};
  unsigned want = 0;  // lanes that exist
  int op[2] = {0, 0};
  unsigned mask[2] = {0, 0};
  alignas(16) unsigned char slot[2][32][64];
};

// Warpgroup collectives (128 consecutive threads): as warp_state, by thread
// of the warpgroup; the last to arrive runs the collective's completion.
struct warpgroup_state {
  unsigned arrived[2] = {0, 0};
  unsigned want = 0;  // threads that exist
  int op[2] = {0, 0};
  alignas(16) unsigned char slot[2][128][64];
};
// Named barriers (bar.sync / bar.arrive id, n).
struct named_barrier_state {
  unsigned arrived = 0, want = 0, gen = 0;
};

struct cta_state {
  unsigned n = 0, done = 0, at_barrier = 0;
  std::vector<warp_state> warps;
  std::vector<warpgroup_state> warpgroups;
  named_barrier_state named[16];
  unsigned long progress = 0, progress_at_wake = ~0ul;  // events other than a failed mbarrier try_wait
};

// Process-wide (the emulator is single-threaded: one launch at a time).
std::vector<std::unique_ptr<fiber>> g_fibers;
cta_state g_cta;
fiber* g_cur = nullptr;
void* g_sched_sp = nullptr;
const void* g_sched_stack = nullptr;  // the scheduler's stack (ASan), as a fiber last saw it
std::size_t g_sched_stack_bytes = 0;
void* g_sched_tsan = nullptr;  // the scheduler's TSan context
void (*g_thread_fn)(void*) = nullptr;
void* g_thread_ctx = nullptr;
const void* g_kernel = nullptr;
std::size_t g_smem_bytes = 0;
bool g_in_kernel = false;
cudaError_t g_last_error = cudaSuccess;
long g_errors = 0;
bool g_device_hung = false;                 // settings::deadlock_hangs: a deadlock left the device hung
std::map<const void*, int> g_max_dyn_smem;  // cudaFuncSetAttribute(MaxDynamicSharedMemorySize)
std::map<std::uintptr_t, std::size_t> g_allocs;
std::mutex g_alloc_mutex;

// ---- kernel names (ELF symbol table of the running executable) -------------------
std::string kernel_name(const void* fn) {
  static std::map<const void*, std::string> cache;
  if (auto it = cache.find(fn); it != cache.end()) return it->second;
  std::string name = "kernel@" + std::to_string(reinterpret_cast<std::uintptr_t>(fn));
  std::ifstream f("/proc/self/exe", std::ios::binary);
  const std::vector<char> img((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::uintptr_t bias = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* i, std::size_t, void* b) {
        *static_cast<std::uintptr_t*>(b) = i->dlpi_addr;
        return 1;  // the first entry is the executable
      },
      &bias);
  if (img.size() > sizeof(Elf64_Ehdr)) {
    const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(img.data());
    const auto* sh = reinterpret_cast<const Elf64_Shdr*>(img.data() + eh->e_shoff);
    for (int s = 0; s < eh->e_shnum; ++s) {
      if (sh[s].sh_type != SHT_SYMTAB) continue;
      const auto* sym = reinterpret_cast<const Elf64_Sym*>(img.data() + sh[s].sh_offset);
      const char* str = img.data() + sh[sh[s].sh_link].sh_offset;
      for (std::size_t k = 0; k < sh[s].sh_size / sizeof(Elf64_Sym); ++k)
        if (ELF64_ST_TYPE(sym[k].st_info) == STT_FUNC &&
            sym[k].st_value + bias == reinterpret_cast<std::uintptr_t>(fn)) {
          int status = 0;
          char* d = abi::__cxa_demangle(str + sym[k].st_name, nullptr, nullptr, &status);
          name = status == 0 && d ? d : str + sym[k].st_name;
          std::free(d);
        }
    }
  }
  return cache[fn] = name;
}

// ---- the executable's static TLS block (all __shared__ memory) ---------------------
struct tls_block {
  unsigned char* data = nullptr;
  std::size_t bytes = 0;
};
tls_block current_tls_block() {
  tls_block b;
  dl_iterate_phdr(
      [](dl_phdr_info* i, std::size_t, void* out) {
        auto* t = static_cast<tls_block*>(out);
        for (int k = 0; k < i->dlpi_phnum; ++k)
          if (i->dlpi_phdr[k].p_type == PT_TLS) {
            t->data = static_cast<unsigned char*>(i->dlpi_tls_data);
            t->bytes = i->dlpi_phdr[k].p_memsz;
          }
        return 1;  // the executable only
      },
      &b);
  return b;
}

// ---- fibers --------------------------------------------------------------------
void fiber_main(void*);

fiber& fiber_for(unsigned tid) {
  while (g_fibers.size() <= tid) {
    auto f = std::make_unique<fiber>();
    void* m = mmap(nullptr, kStackBytes + kGuardBytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) {
      std::fprintf(stderr, "EMU: cannot map a fiber stack\n");
      std::abort();
    }
    mprotect(m, kGuardBytes, PROT_NONE);  // overflow faults instead of corrupting
    f->stack = static_cast<unsigned char*>(m) + kGuardBytes;
    g_fibers.push_back(std::move(f));
  }
  return *g_fibers[tid];
}

void save_fp_control(unsigned char* at) {  // the mxcsr/x87 control words a fiber resumes with
  std::uint32_t mxcsr;
  std::uint16_t fpucw;
  asm volatile("stmxcsr %0" : "=m"(mxcsr));
  asm volatile("fnstcw %0" : "=m"(fpucw));
  std::memcpy(at, &mxcsr, 4);
  std::memcpy(at + 4, &fpucw, 2);
}

// Prepares fiber f to run the next CUDA thread. A fiber that finished its
// previous one waits in fiber_main's loop and simply goes on; a new one, or
// one abandoned inside a kernel (deadlock), gets a fresh stack frame.
void start_fiber(fiber& f) {
  f.state = fstate::runnable;
  f.wgen = 0;
  f.bgen = 0;
  f.wggen = 0;
  f.named_id = -1;
  f.mbar = nullptr;
  f.ts.groups.clear();
  f.ts.pending.clear();
  if (f.parked) {
    f.parked = false;
    save_fp_control(static_cast<unsigned char*>(f.sp));  // as a fresh fiber would: the launcher's
    return;
  }
  auto top = reinterpret_cast<std::uintptr_t>(f.stack + kStackBytes) & ~std::uintptr_t(15);
  auto* sp = reinterpret_cast<std::uint64_t*>(top - 16 - 64);
  asan_poison(f.stack, kStackBytes, false);  // redzones of frames that never returned
  save_fp_control(reinterpret_cast<unsigned char*>(sp));
  sp[1] = 0;                                                      // r15
  sp[2] = 0;                                                      // r14
  sp[3] = reinterpret_cast<std::uint64_t>(&fiber_main);           // r13: entry
  sp[4] = reinterpret_cast<std::uint64_t>(&f);                    // r12: its argument
  sp[5] = 0;                                                      // rbx
  sp[6] = 0;                                                      // rbp
  sp[7] = reinterpret_cast<std::uint64_t>(&attn_emu_trampoline);  // return address
  f.sp = sp;
  f.asan_fake = nullptr;  // a fiber abandoned inside a kernel (deadlock) loses its fake stack
  if (!f.tsan) {          // new, or abandoned (run_cta destroyed its context)
    f.tsan = tsan_create();
    tsan_name(f.tsan, f.tid);
  }
}

// Scheduler -> fiber f, until f reaches a scheduling point.
// (Everything the switch needs is read before tsan_switch: after it, TSan
// counts accesses to the context switched to.)
void resume(fiber& f) {
  g_cur = &f;
  threadIdx = f.idx;
  void* const sp = f.sp;
  void* fake = nullptr;
  asan_start_switch(&fake, f.stack, kStackBytes);
  tsan_switch(f.tsan);
  attn_emu_switch(&g_sched_sp, sp);
  asan_finish_switch(fake, nullptr, nullptr);
}

// Running fiber -> scheduler; returns when the scheduler resumes it.
void to_scheduler() {
  fiber* me = g_cur;
  void* const sp = g_sched_sp;
  asan_start_switch(&me->asan_fake, g_sched_stack, g_sched_stack_bytes);
  tsan_switch(g_sched_tsan);
  attn_emu_switch(&me->sp, sp);
  asan_finish_switch(me->asan_fake, &g_sched_stack, &g_sched_stack_bytes);
}

// A fiber's life: one CUDA thread after another (one per CTA it takes part in).
void fiber_main(void* arg) {
  auto* f = static_cast<fiber*>(arg);
  asan_finish_switch(nullptr, &g_sched_stack, &g_sched_stack_bytes);  // first entry: no fake stack yet
  for (;;) {
    tsan_acquire(&g_hb_cta_start);  // the host's writes before the launch, the previous CTAs
    g_thread_fn(g_thread_ctx);
    {
      runtime_section rs;
      if (!f->ts.groups.empty() || !f->ts.pending.empty()) report("kernel exits with cp.async groups outstanding");
      f->state = fstate::done;
      f->parked = true;
      ++g_cta.done;
      ++g_cta.progress;
    }
    tsan_release(&g_hb_cta_end);  // this thread's writes, for the host after the CTA
    to_scheduler();               // parked outside any ignore region: its TSan fiber can be destroyed
  }
}

void set_error(cudaError_t e) {
  if (g_last_error == cudaSuccess) g_last_error = e;
}

const char* op_name(int op) {
  switch (op) {
    case op_syncwarp: return "__syncwarp";
    case op_shfl: return "__shfl_sync";
    case op_shfl_xor: return "__shfl_xor_sync";
    case op_shfl_down: return "__shfl_down_sync";
    case op_shfl_up: return "__shfl_up_sync";
    case op_vote: return "__ballot/any/all_sync";
    case op_ldmatrix: return "ldmatrix";
    case op_mma: return "mma.sync";
    case op_elect: return "elect.sync";
  }
  return "?";
}
const char* wg_op_name(int op) {
  switch (op) {
    case wg_fence: return "wgmma.fence";
    case wg_mma: return "wgmma.mma_async";
    case wg_commit: return "wgmma.commit_group";
    case wg_wait: return "wgmma.wait_group";
    case wg_setmaxnreg: return "setmaxnreg";
  }
  return "?";
}

// Why nothing can run: which threads wait where.
void report_deadlock(const dim3& b) {
  std::string why;
  unsigned at_bar = 0, exited = 0, at_warp = 0, at_wg = 0, at_named = 0, at_mbar = 0;
  for (unsigned t = 0; t < g_cta.n; ++t) {
    const fiber& f = *g_fibers[t];
    at_bar += f.state == fstate::at_barrier;
    exited += f.state == fstate::done;
    at_warp += f.state == fstate::at_warp;
    at_wg += f.state == fstate::at_warpgroup;
    at_named += f.state == fstate::at_named_barrier;
    at_mbar += f.state == fstate::at_mbarrier;
  }
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "DEADLOCK in %s, block (%u,%u,%u): of %u threads %u wait at __syncthreads, %u at a warp "
                "collective, %u exited",
                kernel_name(g_kernel).c_str(), b.x, b.y, b.z, g_cta.n, at_bar, at_warp, exited);
  why = buf;
  if (at_wg || at_named || at_mbar) {
    std::snprintf(buf, sizeof buf, ", %u at a warpgroup collective, %u at a named barrier, %u wait for an mbarrier",
                  at_wg, at_named, at_mbar);
    why += buf;
  }
  for (std::size_t w = 0; w < g_cta.warpgroups.size(); ++w) {
    const warpgroup_state& ws = g_cta.warpgroups[w];
    for (int par = 0; par < 2; ++par)
      if (ws.arrived[par] != 0 && ws.arrived[par] != ws.want) {
        std::snprintf(buf, sizeof buf, "; warpgroup %zu: %u of %u threads at %s", w, ws.arrived[par], ws.want,
                      wg_op_name(ws.op[par]));
        why += buf;
      }
  }
  for (int id = 0; id < 16; ++id)
    if (g_cta.named[id].arrived) {
      std::snprintf(buf, sizeof buf, "; named barrier %d: %u of %u threads arrived (generation %u)", id,
                    g_cta.named[id].arrived, g_cta.named[id].want, g_cta.named[id].gen);
      why += buf;
    }
  if (at_mbar)
    why += hopper_deadlock_detail([](const void* bar) {
      unsigned n = 0;
      for (unsigned t = 0; t < g_cta.n; ++t) n += g_fibers[t]->state == fstate::at_mbarrier && g_fibers[t]->mbar == bar;
      return n;
    });
  for (std::size_t w = 0; w < g_cta.warps.size(); ++w) {
    const warp_state& ws = g_cta.warps[w];
    for (int par = 0; par < 2; ++par)
      if (ws.arrived[par] != 0 && ws.arrived[par] != ws.want) {
        std::snprintf(buf, sizeof buf, "; warp %zu: lanes 0x%08x of 0x%08x at %s", w, ws.arrived[par], ws.want,
                      op_name(ws.op[par]));
        why += buf;
      }
  }
  if (config().deadlock_hangs) {  // as on a GPU: nothing reported, the device never finishes
    g_device_hung = true;
    std::fprintf(stderr, "EMU %s (deadlock_hangs: the device is now hung)\n", why.c_str());
    return;
  }
  ++g_errors;
  std::fprintf(stderr, "EMU %s\n", why.c_str());
  set_error(cudaErrorLaunchFailure);
}

// Runs one CTA; false on deadlock.
bool run_cta(const dim3& b, unsigned nthreads) {
  g_cta.n = nthreads;
  g_cta.done = 0;
  g_cta.at_barrier = 0;
  g_cta.warps.assign((nthreads + 31) / 32, warp_state{});
  for (std::size_t w = 0; w < g_cta.warps.size(); ++w) {
    const unsigned lanes = std::min(32u, nthreads - static_cast<unsigned>(32 * w));
    g_cta.warps[w].want = lanes == 32 ? 0xffffffffu : (1u << lanes) - 1;
  }
  g_cta.warpgroups.resize((nthreads + 127) / 128);  // slots need no reset
  for (std::size_t w = 0; w < g_cta.warpgroups.size(); ++w) {
    warpgroup_state& ws = g_cta.warpgroups[w];
    ws.arrived[0] = ws.arrived[1] = 0;
    ws.op[0] = ws.op[1] = 0;
    ws.want = std::min(128u, nthreads - static_cast<unsigned>(128 * w));
  }
  for (named_barrier_state& nb : g_cta.named) nb = named_barrier_state{};
  g_cta.progress = 0;
  g_cta.progress_at_wake = ~0ul;
  hopper_cta_begin(nthreads);
  blockIdx = b;
  for (unsigned t = 0; t < nthreads; ++t) {
    fiber& f = fiber_for(t);
    f.tid = t;
    f.idx = dim3(t % blockDim.x, (t / blockDim.x) % blockDim.y, t / (blockDim.x * blockDim.y));
    start_fiber(f);
  }
  tsan_release(&g_hb_cta_start);  // the host (and the previous CTAs) before this CTA
  while (g_cta.done < nthreads) {
    bool ran = false;
    for (unsigned t = 0; t < nthreads; ++t) {
      fiber& f = *g_fibers[t];
      if (f.state != fstate::runnable) continue;
      resume(f);
      ran = true;
    }
    // Queued TMA copies land at the end of the pass (they may complete mbarrier phases).
    if (hopper_end_of_pass()) {
      ++g_cta.progress;
      continue;
    }
    if (!ran && g_cta.done < nthreads && g_cta.progress != g_cta.progress_at_wake) {
      // Threads polling mbarriers (try_wait returned false) may do other work
      // between polls: resume them once after every pass that changed anything.
      bool woke = false;
      for (unsigned t = 0; t < nthreads; ++t) {
        fiber& f = *g_fibers[t];
        if (f.state == fstate::at_mbarrier) {
          f.state = fstate::runnable;
          woke = true;
        }
      }
      g_cta.progress_at_wake = g_cta.progress;
      if (woke) continue;
    }
    if (!ran && g_cta.done < nthreads) {
      report_deadlock(b);
      for (unsigned t = 0; t < nthreads; ++t) {  // abandoned: start_fiber gives them a fresh frame
        fiber& f = *g_fibers[t];
        if (f.state == fstate::done) continue;
        tsan_abandon(f.tsan, g_sched_tsan);
        f.tsan = nullptr;
      }
      tsan_acquire(&g_hb_cta_end);
      g_cur = nullptr;
      hopper_cta_end(true);
      return false;
    }
  }
  tsan_acquire(&g_hb_cta_end);  // every thread of the CTA before the host goes on
  g_cur = nullptr;
  hopper_cta_end(false);
  return true;
}

}  // namespace

// ---- device side -------------------------------------------------------------
thread_state& current_thread() { return g_cur->ts; }
bool in_kernel_thread() { return g_cur != nullptr; }
unsigned current_tid() { return g_cur->tid; }
unsigned cta_threads() { return g_cta.n; }
bool in_shared(const void* p, std::size_t n) {
  const tls_block b = current_tls_block();
  const auto* q = static_cast<const unsigned char*>(p);
  return q >= b.data && q + n <= b.data + b.bytes;
}
void note_progress() { ++g_cta.progress; }
void runtime_section_begin() { tsan_ignore(true); }
void runtime_section_end() { tsan_ignore(false); }
void hb_release(const void* sync) { tsan_release(const_cast<void*>(sync)); }
void hb_acquire(const void* sync) { tsan_acquire(const_cast<void*>(sync)); }

const unsigned char* warpgroup_exchange(int op, const void* mine, std::size_t bytes,
                                        void (*complete)(void*, const unsigned char*), void* ctx) {
  if (!g_cur) {
    report("warpgroup collective outside a kernel");
    static unsigned char dummy[128 * 64];
    return dummy;
  }
  runtime_section rs;
  fiber* me = g_cur;
  warpgroup_state& w = g_cta.warpgroups[me->tid / 128];
  if (w.want != 128) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s in warpgroup %u, which has %u threads (a warpgroup is 128)", wg_op_name(op),
                  me->tid / 128, w.want);
    report(buf);
  }
  const int par = static_cast<int>(me->wggen & 1);
  if (w.arrived[par] == 0) {
    w.op[par] = op;
  } else if (w.op[par] != op) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "threads of one warpgroup at different collectives (%s and %s)",
                  wg_op_name(w.op[par]), wg_op_name(op));
    report(buf);
  }
  if (bytes) std::memcpy(w.slot[par][me->tid % 128], mine, bytes);
  ++me->wggen;
  ++g_cta.progress;
  if (++w.arrived[par] == w.want) {  // complete: the last to arrive runs the completion, releases the others
    w.arrived[par] = 0;
    if (complete) complete(ctx, &w.slot[par][0][0]);
    const unsigned base = me->tid & ~127u;
    for (unsigned l = 0; l < 128 && base + l < g_cta.n; ++l) {
      fiber& f = *g_fibers[base + l];
      if (f.state == fstate::at_warpgroup) f.state = fstate::runnable;
    }
  } else {
    me->state = fstate::at_warpgroup;
    to_scheduler();
  }
  return &w.slot[par][0][0];
}

// bar.sync / bar.arrive id, n: released when n threads have arrived.
void named_barrier(int id, int nthreads, bool wait) {
  if (!g_cur) return report("named barrier outside a kernel");
  runtime_section rs;
  char buf[200];
  if (id < 1 || id > 15) {
    std::snprintf(buf, sizeof buf, "named barrier id %d (1..15 here; 0 is __syncthreads's)", id);
    return report(buf);
  }
  if (nthreads <= 0 || nthreads % 32 != 0 || static_cast<unsigned>(nthreads) > g_cta.n) {
    std::snprintf(buf, sizeof buf, "named barrier %d with %d threads (a multiple of 32, at most the CTA's %u)", id,
                  nthreads, g_cta.n);
    return report(buf);
  }
  named_barrier_state& nb = g_cta.named[id];
  if (nb.arrived == 0) {
    nb.want = static_cast<unsigned>(nthreads);
  } else if (nb.want != static_cast<unsigned>(nthreads)) {
    std::snprintf(buf, sizeof buf, "named barrier %d: %d threads given while others of this phase gave %u", id,
                  nthreads, nb.want);
    report(buf);
  }
  fiber* me = g_cur;
  char* hb = &g_hb_named[id][nb.gen & 1];
  tsan_release(hb);
  ++g_cta.progress;
  if (++nb.arrived >= nb.want) {
    nb.arrived = 0;
    ++nb.gen;
    for (unsigned t = 0; t < g_cta.n; ++t) {
      fiber& f = *g_fibers[t];
      if (f.state == fstate::at_named_barrier && f.named_id == id) f.state = fstate::runnable;
    }
  } else if (wait) {
    me->state = fstate::at_named_barrier;
    me->named_id = id;
    to_scheduler();
    me->named_id = -1;
  }
  if (wait) tsan_acquire(hb);
}

void block_on_mbarrier(const void* bar) {
  runtime_section rs;
  fiber* me = g_cur;
  me->state = fstate::at_mbarrier;
  me->mbar = bar;
  to_scheduler();
  me->mbar = nullptr;
}
void wake_mbarrier(const void* bar) {
  for (unsigned t = 0; t < g_cta.n; ++t) {
    fiber& f = *g_fibers[t];
    if (f.state == fstate::at_mbarrier && f.mbar == bar) f.state = fstate::runnable;
  }
}
unsigned current_lane() { return g_cur->tid % 32; }
std::size_t dynamic_smem_bytes() { return g_smem_bytes; }
const unsigned char* dynamic_smem_begin() { return attnbench::cuda::smem_raw; }

void report(const char* what) {
  runtime_section rs;
  if (g_errors++ < 20) {
    if (g_cur)
      std::fprintf(stderr, "EMU ERROR in %s (block %u,%u,%u thread %u): %s\n", kernel_name(g_kernel).c_str(),
                   blockIdx.x, blockIdx.y, blockIdx.z, g_cur->tid, what);
    else
      std::fprintf(stderr, "EMU ERROR: %s\n", what);
  }
  set_error(cudaErrorLaunchFailure);
}

void syncthreads() {
  if (!g_cur) return report("__syncthreads outside a kernel");
  runtime_section rs;
  fiber* me = g_cur;
  // Two sync objects by barrier parity: the last to arrive goes on and may
  // reach the next barrier before the others have left this one.
  char* hb = &g_hb_bar[me->bgen++ & 1];
  tsan_release(hb);
  if (++g_cta.at_barrier == g_cta.n) {  // the last to arrive releases everyone and goes on
    g_cta.at_barrier = 0;
    for (unsigned t = 0; t < g_cta.n; ++t)
      if (g_fibers[t]->state == fstate::at_barrier) g_fibers[t]->state = fstate::runnable;
  } else {
    me->state = fstate::at_barrier;
    to_scheduler();
  }
  tsan_acquire(hb);
}

const unsigned char* warp_exchange(int op, unsigned mask, const void* mine, std::size_t bytes) {
  if (!g_cur) {
    report("warp collective outside a kernel");
    static unsigned char dummy[32 * 64];
    return dummy;
  }
  runtime_section rs;
  fiber* me = g_cur;
  warp_state& w = g_cta.warps[me->tid / 32];
  const unsigned lane = me->tid % 32;
  const int par = static_cast<int>(me->wgen & 1);
  // Only __syncwarp orders memory between lanes (CUDA guarantees no more);
  // the other collectives exchange register values through the slots.
  char* hb = op == op_syncwarp ? &g_hb_warp[(me->tid / 32) % 32][par] : nullptr;
  if (hb) tsan_release(hb);
  if ((mask & w.want) != w.want) report("warp collective with a mask that leaves out lanes of the warp (not emulated)");
  if (w.arrived[par] == 0) {
    w.op[par] = op;
    w.mask[par] = mask;
  } else if (w.op[par] != op) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "lanes of one warp at different collectives (%s and %s)", op_name(w.op[par]),
                  op_name(op));
    report(buf);
  }
  if (bytes) std::memcpy(w.slot[par][lane], mine, bytes);
  w.arrived[par] |= 1u << lane;
  ++me->wgen;
  if (w.arrived[par] == w.want) {  // complete: release the others, go on
    w.arrived[par] = 0;
    const unsigned base = me->tid & ~31u;
    for (unsigned l = 0; l < 32 && base + l < g_cta.n; ++l) {
      fiber& f = *g_fibers[base + l];
      if (f.state == fstate::at_warp) f.state = fstate::runnable;
    }
  } else {
    me->state = fstate::at_warp;
    to_scheduler();
  }
  if (hb) tsan_acquire(hb);
  return &w.slot[par][0][0];
}

void run_grid(const launch_config& c, void (*thread_fn)(void*), void* ctx) {
  runtime_section rs;  // the scheduler's own accesses (TLS save/poison/restore, fiber state) are not checked
  g_sched_tsan = tsan_current();
  auto reject = [&](cudaError_t e, const std::string& why) {
    ++g_errors;
    std::fprintf(stderr, "EMU launch of %s rejected: %s\n", kernel_name(c.kernel).c_str(), why.c_str());
    set_error(e);
  };
  const dim3 g = c.grid, b = c.block;
  const std::uint64_t threads = std::uint64_t(b.x) * b.y * b.z;
  if (g_device_hung) return;  // queued behind the hung kernel: never runs
  if (g_in_kernel) return reject(cudaErrorLaunchFailure, "launch from inside a kernel (not emulated)");
  if (g.x == 0 || g.y == 0 || g.z == 0 || b.x == 0 || b.y == 0 || b.z == 0)
    return reject(cudaErrorInvalidConfiguration, "a grid or block extent is 0");
  if (g.x > 2147483647u || g.y > 65535u || g.z > 65535u)
    return reject(cudaErrorInvalidConfiguration, "grid (" + std::to_string(g.x) + "," + std::to_string(g.y) + "," +
                                                     std::to_string(g.z) + ") exceeds 2^31-1 x 65535 x 65535");
  if (b.x > 1024 || b.y > 1024 || b.z > 64 || threads > 1024)
    return reject(cudaErrorInvalidConfiguration, std::to_string(threads) + " threads per block (max 1024)");
  if (c.smem_bytes > kMaxDynamicSmem)
    return reject(cudaErrorInvalidValue, std::to_string(c.smem_bytes) + " bytes of dynamic shared memory (max 232448)");
  if (c.smem_bytes > kDefaultDynamicSmem) {
    auto it = g_max_dyn_smem.find(c.kernel);
    if (it == g_max_dyn_smem.end() || static_cast<std::size_t>(it->second) < c.smem_bytes)
      return reject(cudaErrorInvalidValue,
                    std::to_string(c.smem_bytes) +
                        " bytes of dynamic shared memory without cudaFuncSetAttribute(MaxDynamicSharedMemorySize) "
                        "allowing them");
  }
  const tls_block tls = current_tls_block();
  // The TLS block minus the two big extern arrays (whose first smem_bytes
  // are poisoned per CTA; the kernels may not use more): saved, poisoned per
  // CTA, restored.
  struct range {
    std::size_t lo, hi;
  };
  std::vector<range> holes;
  for (unsigned char* a : {attnbench::cuda::smem_raw, attn_emu_flash1_smem}) {
    const std::size_t off = static_cast<std::size_t>(a - tls.data);
    if (a >= tls.data && off + sizeof(attnbench::cuda::smem_raw) <= tls.bytes)
      holes.push_back({off, off + sizeof(attnbench::cuda::smem_raw)});
  }
  std::sort(holes.begin(), holes.end(), [](const range& x, const range& y) { return x.lo < y.lo; });
  std::vector<range> statics;
  std::size_t at = 0;
  for (const range& h : holes) {
    if (h.lo > at) statics.push_back({at, h.lo});
    at = h.hi;
  }
  if (at < tls.bytes) statics.push_back({at, tls.bytes});
  std::vector<unsigned char> saved;
  for (const range& r : statics) saved.insert(saved.end(), tls.data + r.lo, tls.data + r.hi);
  auto poison = [&] {
    for (const range& r : statics) std::memset(tls.data + r.lo, 0xFF, r.hi - r.lo);
    for (const range& h : holes) std::memset(tls.data + h.lo, 0xFF, c.smem_bytes);
  };
  g_thread_fn = thread_fn;
  g_thread_ctx = ctx;
  g_kernel = c.kernel;
  g_smem_bytes = c.smem_bytes;
  g_in_kernel = true;
  gridDim = g;
  blockDim = b;
  // ASan: the extern arrays beyond this launch's dynamic size are not the kernel's.
  for (const range& h : holes) asan_poison(tls.data + h.lo + c.smem_bytes, h.hi - h.lo - c.smem_bytes, true);
  for (unsigned z = 0; z < g.z; ++z)
    for (unsigned y = 0; y < g.y; ++y)
      for (unsigned x = 0; x < g.x; ++x) {
        poison();  // NaN in every __shared__ array
        if (!run_cta(dim3(x, y, z), static_cast<unsigned>(threads))) goto out;
      }
out : {
  std::size_t o = 0;
  for (const range& r : statics) {
    std::memcpy(tls.data + r.lo, saved.data() + o, r.hi - r.lo);
    o += r.hi - r.lo;
  }
}
  for (const range& h : holes) asan_poison(tls.data + h.lo, h.hi - h.lo, false);
  g_in_kernel = false;
  g_kernel = nullptr;
}

cudaError_t func_set_attribute(const void* fn, cudaFuncAttribute attr, int value) {
  if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize) {
    if (value < 0 || static_cast<std::size_t>(value) > kMaxDynamicSmem) {
      set_error(cudaErrorInvalidValue);
      return cudaErrorInvalidValue;
    }
    g_max_dyn_smem[fn] = value;
  }
  return cudaSuccess;
}

// ---- emu_control.hpp ------------------------------------------------------------
long errors() { return g_errors; }
void reset_errors() {
  g_errors = 0;
  g_last_error = cudaSuccess;
  g_device_hung = false;
}
bool device_hung() { return g_device_hung; }

}  // namespace attnbench::emu

// ---- CUDA runtime API on host memory ------------------------------------------------
using attnbench::emu::g_allocs;
using attnbench::emu::g_alloc_mutex;
using attnbench::emu::g_last_error;

namespace {
cudaError_t fail_with(cudaError_t e) {
  attnbench::emu::set_error(e);
  return e;
}
// [p, p + n) inside one allocation (device pointer), or not device memory at all.
bool in_device_alloc(const void* p, std::size_t n) {
  std::lock_guard<std::mutex> lock(g_alloc_mutex);
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  auto it = g_allocs.upper_bound(a);
  if (it == g_allocs.begin()) return false;
  --it;
  return a >= it->first && a + n <= it->first + it->second;
}
bool looks_device(const void* p) {
  std::lock_guard<std::mutex> lock(g_alloc_mutex);
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  auto it = g_allocs.upper_bound(a);
  if (it == g_allocs.begin()) return false;
  --it;
  return a >= it->first && a < it->first + it->second;
}
// A copy touching device memory must stay inside its allocation.
bool range_ok(const void* p, std::size_t n) { return !looks_device(p) || in_device_alloc(p, n); }
struct CUevent_rec {
  std::chrono::steady_clock::time_point t;
};
}  // namespace
struct CUstream_st {
  int id;
};
struct CUevent_st {
  CUevent_rec r;
};

cudaError_t cudaMalloc(void** p, std::size_t bytes) {
  if (!p) return fail_with(cudaErrorInvalidValue);
#if ATTN_EMU_ASAN
  const std::size_t n = bytes;  // exactly: ASan reports a kernel reading past the end
#else
  const std::size_t n = (bytes + 255) / 256 * 256;
#endif
  void* m = nullptr;
  if (n && posix_memalign(&m, 256, n) != 0) return fail_with(cudaErrorMemoryAllocation);
  if (m) {
    std::memset(m, 0xFF, n);  // a kernel that reads memory it never wrote sees NaN
    std::lock_guard<std::mutex> lock(g_alloc_mutex);
    g_allocs[reinterpret_cast<std::uintptr_t>(m)] = bytes;
  }
  *p = m;
  return cudaSuccess;
}
cudaError_t cudaFree(void* p) {
  if (!p) return cudaSuccess;
  {
    std::lock_guard<std::mutex> lock(g_alloc_mutex);
    auto it = g_allocs.find(reinterpret_cast<std::uintptr_t>(p));
    if (it == g_allocs.end()) return fail_with(cudaErrorInvalidValue);
    g_allocs.erase(it);
  }
  std::free(p);
  return cudaSuccess;
}
cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind) {
  return cudaMemcpyAsync(dst, src, bytes, kind, nullptr);
}
cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, cudaStream_t) {
  if (bytes == 0) return cudaSuccess;
  if (!dst || !src || kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault) return fail_with(cudaErrorInvalidValue);
  if ((kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice) && !in_device_alloc(dst, bytes))
    return fail_with(cudaErrorInvalidValue);
  if ((kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice) && !in_device_alloc(src, bytes))
    return fail_with(cudaErrorInvalidValue);
  if (!range_ok(dst, bytes) || !range_ok(src, bytes)) return fail_with(cudaErrorInvalidValue);
  std::memmove(dst, src, bytes);
  return cudaSuccess;
}
cudaError_t cudaMemset(void* p, int value, std::size_t bytes) { return cudaMemsetAsync(p, value, bytes, nullptr); }
cudaError_t cudaMemsetAsync(void* p, int value, std::size_t bytes, cudaStream_t) {
  if (bytes == 0) return cudaSuccess;
  if (!in_device_alloc(p, bytes)) return fail_with(cudaErrorInvalidValue);
  std::memset(p, value, bytes);
  return cudaSuccess;
}
cudaError_t cudaMemset2DAsync(void* p, std::size_t pitch, int value, std::size_t width, std::size_t height,
                              cudaStream_t) {
  if (width == 0 || height == 0) return cudaSuccess;
  if (width > pitch) return fail_with(cudaErrorInvalidValue);
  if (!in_device_alloc(p, pitch * (height - 1) + width)) return fail_with(cudaErrorInvalidValue);
  for (std::size_t r = 0; r < height; ++r) std::memset(static_cast<unsigned char*>(p) + r * pitch, value, width);
  return cudaSuccess;
}
cudaError_t cudaStreamCreate(cudaStream_t* s) { return cudaStreamCreateWithFlags(s, 0); }
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned) {
  if (!s) return fail_with(cudaErrorInvalidValue);
  *s = new CUstream_st{1};
  return cudaSuccess;
}
cudaError_t cudaStreamDestroy(cudaStream_t s) {
  delete s;
  return cudaSuccess;
}
namespace {
// A blocking wait on a hung device never returns on a GPU: end the process instead.
cudaError_t blocking_wait(const char* call) {
  if (!attnbench::emu::device_hung()) return cudaSuccess;
  std::fprintf(stderr, "EMU HANG: %s on a hung device (deadlock_hangs) would block forever on a GPU\n", call);
  std::fflush(stderr);
  std::_Exit(124);
}
}  // namespace
cudaError_t cudaStreamSynchronize(cudaStream_t) { return blocking_wait("cudaStreamSynchronize"); }
cudaError_t cudaStreamQuery(cudaStream_t) { return attnbench::emu::device_hung() ? cudaErrorNotReady : cudaSuccess; }
cudaError_t cudaDeviceSynchronize() { return blocking_wait("cudaDeviceSynchronize"); }
cudaError_t cudaEventCreate(cudaEvent_t* e) { return cudaEventCreateWithFlags(e, 0); }
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned) {
  if (!e) return fail_with(cudaErrorInvalidValue);
  *e = new CUevent_st{};
  return cudaSuccess;
}
cudaError_t cudaEventDestroy(cudaEvent_t e) {
  delete e;
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t) {
  if (!e) return fail_with(cudaErrorInvalidResourceHandle);
  e->r.t = std::chrono::steady_clock::now();
  return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t e) {
  return e ? blocking_wait("cudaEventSynchronize") : fail_with(cudaErrorInvalidResourceHandle);
}
cudaError_t cudaEventQuery(cudaEvent_t e) {
  if (!e) return fail_with(cudaErrorInvalidResourceHandle);
  return attnbench::emu::device_hung() ? cudaErrorNotReady : cudaSuccess;
}
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t a, cudaEvent_t b) {
  if (!ms || !a || !b) return fail_with(cudaErrorInvalidValue);
  *ms = std::chrono::duration<float, std::milli>(b->r.t - a->r.t).count();
  return cudaSuccess;
}
cudaError_t cudaGetDeviceCount(int* n) {
  if (!n) return fail_with(cudaErrorInvalidValue);
  *n = 1;
  return cudaSuccess;
}
cudaError_t cudaGetDevice(int* d) {
  if (!d) return fail_with(cudaErrorInvalidValue);
  *d = 0;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int d) { return d == 0 ? cudaSuccess : fail_with(cudaErrorInvalidDevice); }
// An sm_90 (H200-like) device.
cudaError_t cudaDeviceGetAttribute(int* v, cudaDeviceAttr a, int dev) {
  if (!v) return fail_with(cudaErrorInvalidValue);
  if (dev != 0) return fail_with(cudaErrorInvalidDevice);
  switch (a) {
    case cudaDevAttrMaxThreadsPerBlock: *v = 1024; break;
    case cudaDevAttrMaxGridDimX: *v = 2147483647; break;
    case cudaDevAttrMaxGridDimY: *v = 65535; break;
    case cudaDevAttrMaxGridDimZ: *v = 65535; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *v = 49152; break;
    case cudaDevAttrClockRate: *v = 1980000; break;
    case cudaDevAttrMultiProcessorCount: *v = 132; break;
    case cudaDevAttrMemoryClockRate: *v = 2619000; break;
    case cudaDevAttrGlobalMemoryBusWidth: *v = 6144; break;
    case cudaDevAttrL2CacheSize: *v = 50331648; break;
    case cudaDevAttrComputeCapabilityMajor: *v = 9; break;
    case cudaDevAttrComputeCapabilityMinor: *v = 0; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *v = 232448; break;
    default: return fail_with(cudaErrorInvalidValue);
  }
  return cudaSuccess;
}
cudaError_t cudaGetLastError() {
  const cudaError_t e = g_last_error;
  g_last_error = cudaSuccess;
  return e;
}
cudaError_t cudaPeekAtLastError() { return g_last_error; }
const char* cudaGetErrorName(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
    case cudaErrorNoDevice: return "cudaErrorNoDevice";
    case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
    case cudaErrorIllegalAddress: return "cudaErrorIllegalAddress";
    default: return "cudaErrorUnknown";
  }
}
const char* cudaGetErrorString(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorLaunchFailure: return "unspecified launch failure (emulator: see EMU lines above)";
    case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
    default: return "unknown error";
  }
}

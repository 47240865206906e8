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

// ---- the extern __shared__ arrays of the kernels -------------------------------
// flash2_kernel.cuh: `extern __shared__ __align__(128) unsigned char smem_raw[]`
// at block scope in namespace attnbench::cuda.
// Its users call the TLS init function _ZTH... unconditionally (g++ 12);
// the array needs no initialisation, so it is a no-op.
namespace attnbench::cuda {
thread_local __attribute__((aligned(128))) unsigned char smem_raw[232448];
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

constexpr std::size_t kStackBytes = 256 * 1024;
constexpr std::size_t kGuardBytes = 4096;
constexpr std::size_t kMaxDynamicSmem = 232448;  // sm_90: 227 KB opt-in
constexpr std::size_t kDefaultDynamicSmem = 48 * 1024;

enum class fstate { runnable, at_barrier, at_warp, done };

struct fiber {
  void* sp = nullptr;
  unsigned char* stack = nullptr;  // lowest usable byte (above the guard page)
  fstate state = fstate::runnable;
  unsigned tid = 0;
  dim3 idx;
  unsigned wgen = 0;  // warp collectives this thread has passed
  thread_state ts;
};

struct warp_state {
  unsigned arrived[2] = {0, 0};
  unsigned want = 0;  // lanes that exist
  int op[2] = {0, 0};
  unsigned mask[2] = {0, 0};
  alignas(16) unsigned char slot[2][32][64];
};

struct cta_state {
  unsigned n = 0, done = 0, at_barrier = 0;
  std::vector<warp_state> warps;
};

// Process-wide (the emulator is single-threaded: one launch at a time).
std::vector<std::unique_ptr<fiber>> g_fibers;
cta_state g_cta;
fiber* g_cur = nullptr;
void* g_sched_sp = nullptr;
void (*g_thread_fn)(void*) = nullptr;
void* g_thread_ctx = nullptr;
const void* g_kernel = nullptr;
std::size_t g_smem_bytes = 0;
bool g_in_kernel = false;
cudaError_t g_last_error = cudaSuccess;
long g_errors = 0;
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
  dl_iterate_phdr([](dl_phdr_info* i, std::size_t, void* b) {
    *static_cast<std::uintptr_t*>(b) = i->dlpi_addr;
    return 1;  // the first entry is the executable
  }, &bias);
  if (img.size() > sizeof(Elf64_Ehdr)) {
    const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(img.data());
    const auto* sh = reinterpret_cast<const Elf64_Shdr*>(img.data() + eh->e_shoff);
    for (int s = 0; s < eh->e_shnum; ++s) {
      if (sh[s].sh_type != SHT_SYMTAB) continue;
      const auto* sym = reinterpret_cast<const Elf64_Sym*>(img.data() + sh[s].sh_offset);
      const char* str = img.data() + sh[sh[s].sh_link].sh_offset;
      for (std::size_t k = 0; k < sh[s].sh_size / sizeof(Elf64_Sym); ++k)
        if (ELF64_ST_TYPE(sym[k].st_info) == STT_FUNC && sym[k].st_value + bias == reinterpret_cast<std::uintptr_t>(fn)) {
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
  dl_iterate_phdr([](dl_phdr_info* i, std::size_t, void* out) {
    auto* t = static_cast<tls_block*>(out);
    for (int k = 0; k < i->dlpi_phnum; ++k)
      if (i->dlpi_phdr[k].p_type == PT_TLS) {
        t->data = static_cast<unsigned char*>(i->dlpi_tls_data);
        t->bytes = i->dlpi_phdr[k].p_memsz;
      }
    return 1;  // the executable only
  }, &b);
  return b;
}

// ---- fibers --------------------------------------------------------------------
void fiber_main(void*);

fiber& fiber_for(unsigned tid) {
  while (g_fibers.size() <= tid) {
    auto f = std::make_unique<fiber>();
    void* m = mmap(nullptr, kStackBytes + kGuardBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
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

void start_fiber(fiber& f) {
  auto top = reinterpret_cast<std::uintptr_t>(f.stack + kStackBytes) & ~std::uintptr_t(15);
  auto* sp = reinterpret_cast<std::uint64_t*>(top - 16 - 64);
  std::uint32_t mxcsr;
  std::uint16_t fpucw;
  asm volatile("stmxcsr %0" : "=m"(mxcsr));
  asm volatile("fnstcw %0" : "=m"(fpucw));
  std::memcpy(reinterpret_cast<unsigned char*>(sp), &mxcsr, 4);
  std::memcpy(reinterpret_cast<unsigned char*>(sp) + 4, &fpucw, 2);
  sp[1] = 0;                                                  // r15
  sp[2] = 0;                                                  // r14
  sp[3] = reinterpret_cast<std::uint64_t>(&fiber_main);       // r13: entry
  sp[4] = reinterpret_cast<std::uint64_t>(&f);                // r12: its argument
  sp[5] = 0;                                                  // rbx
  sp[6] = 0;                                                  // rbp
  sp[7] = reinterpret_cast<std::uint64_t>(&attn_emu_trampoline);  // return address
  f.sp = sp;
  f.state = fstate::runnable;
  f.wgen = 0;
  f.ts.groups.clear();
  f.ts.pending.clear();
}

void to_scheduler() { attn_emu_switch(&g_cur->sp, g_sched_sp); }

void fiber_main(void* arg) {
  auto* f = static_cast<fiber*>(arg);
  g_thread_fn(g_thread_ctx);
  if (!f->ts.groups.empty() || !f->ts.pending.empty()) report("kernel exits with cp.async groups outstanding");
  f->state = fstate::done;
  ++g_cta.done;
  to_scheduler();
  std::abort();  // never resumed
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
  }
  return "?";
}

// Why nothing can run: which threads wait where.
void report_deadlock(const dim3& b) {
  std::string why;
  unsigned at_bar = 0, exited = 0, at_warp = 0;
  for (unsigned t = 0; t < g_cta.n; ++t) {
    const fiber& f = *g_fibers[t];
    at_bar += f.state == fstate::at_barrier;
    exited += f.state == fstate::done;
    at_warp += f.state == fstate::at_warp;
  }
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "DEADLOCK in %s, block (%u,%u,%u): of %u threads %u wait at __syncthreads, %u at a warp "
                "collective, %u exited",
                kernel_name(g_kernel).c_str(), b.x, b.y, b.z, g_cta.n, at_bar, at_warp, exited);
  why = buf;
  for (std::size_t w = 0; w < g_cta.warps.size(); ++w) {
    const warp_state& ws = g_cta.warps[w];
    for (int par = 0; par < 2; ++par)
      if (ws.arrived[par] != 0 && ws.arrived[par] != ws.want) {
        std::snprintf(buf, sizeof buf, "; warp %zu: lanes 0x%08x of 0x%08x at %s", w, ws.arrived[par], ws.want,
                      op_name(ws.op[par]));
        why += buf;
      }
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
  blockIdx = b;
  for (unsigned t = 0; t < nthreads; ++t) {
    fiber& f = fiber_for(t);
    f.tid = t;
    f.idx = dim3(t % blockDim.x, (t / blockDim.x) % blockDim.y, t / (blockDim.x * blockDim.y));
    start_fiber(f);
  }
  while (g_cta.done < nthreads) {
    bool ran = false;
    for (unsigned t = 0; t < nthreads; ++t) {
      fiber& f = *g_fibers[t];
      if (f.state != fstate::runnable) continue;
      g_cur = &f;
      threadIdx = f.idx;
      attn_emu_switch(&g_sched_sp, f.sp);
      ran = true;
    }
    if (!ran && g_cta.done < nthreads) {
      report_deadlock(b);
      g_cur = nullptr;
      return false;
    }
  }
  g_cur = nullptr;
  return true;
}

}  // namespace

// ---- device side -------------------------------------------------------------
thread_state& current_thread() { return g_cur->ts; }
unsigned current_lane() { return g_cur->tid % 32; }
std::size_t dynamic_smem_bytes() { return g_smem_bytes; }
const unsigned char* dynamic_smem_begin() { return attnbench::cuda::smem_raw; }

void report(const char* what) {
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
  fiber* me = g_cur;
  if (++g_cta.at_barrier == g_cta.n) {  // the last to arrive releases everyone and goes on
    g_cta.at_barrier = 0;
    for (unsigned t = 0; t < g_cta.n; ++t)
      if (g_fibers[t]->state == fstate::at_barrier) g_fibers[t]->state = fstate::runnable;
    return;
  }
  me->state = fstate::at_barrier;
  to_scheduler();
}

const unsigned char* warp_exchange(int op, unsigned mask, const void* mine, std::size_t bytes) {
  if (!g_cur) {
    report("warp collective outside a kernel");
    static unsigned char dummy[32 * 64];
    return dummy;
  }
  fiber* me = g_cur;
  warp_state& w = g_cta.warps[me->tid / 32];
  const unsigned lane = me->tid % 32;
  const int par = static_cast<int>(me->wgen & 1);
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
  return &w.slot[par][0][0];
}

void run_grid(const launch_config& c, void (*thread_fn)(void*), void* ctx) {
  auto reject = [&](cudaError_t e, const std::string& why) {
    ++g_errors;
    std::fprintf(stderr, "EMU launch of %s rejected: %s\n", kernel_name(c.kernel).c_str(), why.c_str());
    set_error(e);
  };
  const dim3 g = c.grid, b = c.block;
  const std::uint64_t threads = std::uint64_t(b.x) * b.y * b.z;
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
  for (unsigned z = 0; z < g.z; ++z)
    for (unsigned y = 0; y < g.y; ++y)
      for (unsigned x = 0; x < g.x; ++x) {
        poison();  // NaN in every __shared__ array
        if (!run_cta(dim3(x, y, z), static_cast<unsigned>(threads))) goto out;
      }
out:
  {
    std::size_t o = 0;
    for (const range& r : statics) {
      std::memcpy(tls.data + r.lo, saved.data() + o, r.hi - r.lo);
      o += r.hi - r.lo;
    }
  }
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
}

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
  const std::size_t n = (bytes + 255) / 256 * 256;
  void* m = n ? std::aligned_alloc(256, n) : nullptr;
  if (n && !m) return fail_with(cudaErrorMemoryAllocation);
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
cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
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
cudaError_t cudaEventSynchronize(cudaEvent_t e) { return e ? cudaSuccess : fail_with(cudaErrorInvalidResourceHandle); }
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

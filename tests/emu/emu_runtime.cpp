// Runtime of the flash2 host emulator: one OS thread per CUDA thread, a
// std::barrier per CTA for __syncthreads and one per warp for the
// warp-collective instructions (ldmatrix, mma, shfl), and the PTX twins
// declared in emu_ptx.hpp. Compiled with the CUDA stand-ins of include/.
#include <atomic>
#include <barrier>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "kernels/cuda/flash2/flash2_kernel.cuh"
#include "tests/emu/emu_control.hpp"

// The kernel's `extern __shared__ unsigned char smem_raw[]` (declared at block
// scope inside namespace attnbench::cuda): one buffer, as CTAs run one at a time.
namespace attnbench::cuda {
alignas(128) unsigned char smem_raw[232 * 1024];
}
thread_local dim3 threadIdx, blockIdx;

namespace attnbench::emu {
namespace {

settings g_settings;
std::atomic<long> g_errors{0};
std::size_t g_smem_limit = 0;
std::vector<byte_range> g_reads;

struct warp_ctx {
  std::barrier<> bar{32};
  const unsigned char* addr[32];
  std::uint32_t a[32][4], b[32][2];
  float shfl[32];
};
struct cta_ctx {
  std::unique_ptr<std::barrier<>> bar;
  std::vector<std::unique_ptr<warp_ctx>> warps;
};
cta_ctx* g_cta = nullptr;

struct copy {
  unsigned char* dst;
  const unsigned char* src;
  int src_bytes;
};
thread_local std::vector<std::vector<copy>> t_groups;  // committed, oldest first
thread_local std::vector<copy> t_pending;              // not yet committed

void fail(const char* what) {
  if (g_errors++ < 20)
    std::fprintf(stderr, "EMU ERROR (block %u,%u,%u thread %u): %s\n", blockIdx.x, blockIdx.y, blockIdx.z,
                 threadIdx.x, what);
}
void do_copy(const copy& c) {
  if (c.src_bytes == 0 && g_settings.inject == fault::no_zero_fill) return;
  for (int i = 0; i < 16; ++i) c.dst[i] = i < c.src_bytes ? c.src[i] : 0;
}
warp_ctx& my_warp() { return *g_cta->warps[threadIdx.x / 32]; }
const unsigned char* smem_begin() { return attnbench::cuda::smem_raw; }

}  // namespace

const char* to_string(fault f) {
  switch (f) {
    case fault::none: return "none";
    case fault::ldmatrix_swap_mid: return "ldmatrix_swap_mid";
    case fault::drop_trans: return "drop_trans";
    case fault::wait_one_less: return "wait_one_less";
    case fault::no_zero_fill: return "no_zero_fill";
  }
  return "?";
}
settings& config() { return g_settings; }
long errors() { return g_errors.load(); }
void reset_errors() { g_errors = 0; }
void set_readable(std::initializer_list<byte_range> reads) { g_reads.assign(reads.begin(), reads.end()); }

void syncthreads() { g_cta->bar->arrive_and_wait(); }

float shfl_xor(float v, int lane_mask) {
  warp_ctx& w = my_warp();
  const int lane = threadIdx.x & 31;
  w.shfl[lane] = v;
  w.bar.arrive_and_wait();
  const float r = w.shfl[lane ^ lane_mask];
  w.bar.arrive_and_wait();
  return r;
}

void launch_grid(dim3 grid, int threads, std::size_t smem_bytes, const std::function<void()>& cuda_thread) {
  if (smem_bytes > sizeof(attnbench::cuda::smem_raw)) {
    fail("dynamic shared memory larger than the emulator's buffer");
    return;
  }
  g_smem_limit = smem_bytes;
  for (unsigned z = 0; z < grid.z; ++z)
    for (unsigned y = 0; y < grid.y; ++y)
      for (unsigned x = 0; x < grid.x; ++x) {
        std::memset(attnbench::cuda::smem_raw, 0xFF, smem_bytes);  // NaN in fp16, bf16 and fp32
        cta_ctx c;
        c.bar = std::make_unique<std::barrier<>>(threads);
        for (int w = 0; w < threads / 32; ++w) c.warps.push_back(std::make_unique<warp_ctx>());
        g_cta = &c;
        std::vector<std::thread> th;
        th.reserve(threads);
        for (int t = 0; t < threads; ++t)
          th.emplace_back([&, t] {
            threadIdx = dim3{static_cast<unsigned>(t), 0, 0};
            blockIdx = dim3{x, y, z};
            t_groups.clear();
            t_pending.clear();
            cuda_thread();
            if (!t_groups.empty() || !t_pending.empty()) fail("kernel exits with cp.async groups outstanding");
          });
        for (auto& t : th) t.join();
        g_cta = nullptr;
      }
}

}  // namespace attnbench::emu

namespace attnbench::cuda::f2 {
using namespace attnbench::emu;

void cp_async_16(void* smem, const void* gmem, int src_bytes) {
  auto* d = static_cast<unsigned char*>(smem);
  auto* s = static_cast<const unsigned char*>(gmem);
  if ((reinterpret_cast<std::uintptr_t>(d) & 15) || (reinterpret_cast<std::uintptr_t>(s) & 15))
    fail("cp.async address not 16-byte aligned");
  if (d < smem_begin() || d + 16 > smem_begin() + g_smem_limit) fail("cp.async destination outside dynamic smem");
  if (src_bytes != 0 && src_bytes != 16) fail("cp.async src-size other than 0 or 16");
  if (src_bytes > 0) {
    bool ok = false;
    for (const byte_range& r : g_reads) {
      auto* lo = static_cast<const unsigned char*>(r.lo);
      ok |= s >= lo && s + src_bytes <= lo + r.bytes;
    }
    if (!ok) fail("cp.async reads outside every input tensor");
  }
  const copy c{d, s, src_bytes};
  if (g_settings.early_copy)
    do_copy(c);
  else
    t_pending.push_back(c);
}

// cp.async.commit_group: the uncommitted copies of this thread become a group.
void cp_async_commit() {
  t_groups.push_back(std::move(t_pending));
  t_pending.clear();
}

// cp.async.wait_group N: all but the newest N committed groups are complete
// (copies are performed here, the latest moment the PTX ISA allows).
void cp_async_wait_n(int n) {
  if (!t_pending.empty()) fail("wait_group with uncommitted cp.async (they are not waited for)");
  if (g_settings.inject == fault::wait_one_less) ++n;
  while (static_cast<int>(t_groups.size()) > n) {
    for (const copy& c : t_groups.front()) do_copy(c);
    t_groups.erase(t_groups.begin());
  }
}

// ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16: lanes 8i..8i+7 address
// rows 0..7 of matrix i; lane l receives in register i row l/4, elements
// 2(l%4), 2(l%4)+1 of matrix i -- with .trans, of its transpose, i.e. stored
// elements (row 2(l%4), col l/4) and (row 2(l%4)+1, col l/4).
void ldmatrix_x4_any(std::uint32_t (&r)[4], const void* p, bool trans) {
  warp_ctx& w = my_warp();
  const int lane = threadIdx.x & 31;
  auto* a = static_cast<const unsigned char*>(p);
  if (reinterpret_cast<std::uintptr_t>(a) & 15) fail("ldmatrix row address not 16-byte aligned");
  if (a < smem_begin() || a + 16 > smem_begin() + g_smem_limit) fail("ldmatrix outside dynamic smem");
  w.addr[lane] = a;
  w.bar.arrive_and_wait();
  if (trans && g_settings.inject == fault::drop_trans) trans = false;
  const int g = lane >> 2, t = lane & 3;
  for (int i = 0; i < 4; ++i) {
    std::uint16_t lo, hi;
    if (!trans) {
      std::memcpy(&lo, w.addr[8 * i + g] + 4 * t, 2);
      std::memcpy(&hi, w.addr[8 * i + g] + 4 * t + 2, 2);
    } else {
      std::memcpy(&lo, w.addr[8 * i + 2 * t] + 2 * g, 2);
      std::memcpy(&hi, w.addr[8 * i + 2 * t + 1] + 2 * g, 2);
    }
    r[i] = std::uint32_t(lo) | (std::uint32_t(hi) << 16);
  }
  if (!trans && g_settings.inject == fault::ldmatrix_swap_mid) std::swap(r[1], r[2]);
  w.bar.arrive_and_wait();
}

// mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}: PTX ISA "Matrix Fragments
// for mma.m16n8k16 with floating point type", g = lane / 4, t = lane % 4:
//   A: a_i (i = 0..7), row g for i in {0,1,4,5} else g + 8, col 2t + (i & 1) + 8 (i >= 4);
//      register j holds a_2j (low half), a_2j+1.
//   B: b_i, row (k) 2t + (i & 1) + 8 (i >= 2), col (n) g.
//   C/D: c_i, row g + 8 (i >= 2), col 2t + (i & 1).
// Products are exact in fp32; they are summed in k order onto the accumulator.
void mma_16816_any(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0, std::uint32_t b1, bool bf16) {
  warp_ctx& w = my_warp();
  const int lane = threadIdx.x & 31;
  for (int i = 0; i < 4; ++i) w.a[lane][i] = a[i];
  w.b[lane][0] = b0;
  w.b[lane][1] = b1;
  w.bar.arrive_and_wait();
  auto val = [bf16](std::uint32_t reg, int half) {
    const auto u = static_cast<std::uint16_t>(reg >> (16 * half));
    return bf16 ? emu_bf16_bits_to_float(u) : emu_half_bits_to_float(u);
  };
  auto A = [&](int m, int k) {
    const int L = 4 * (m & 7) + ((k & 7) >> 1);
    const int reg = (m >= 8 ? 1 : 0) + (k >= 8 ? 2 : 0);
    return val(w.a[L][reg], k & 1);
  };
  auto B = [&](int k, int n) {
    const int L = 4 * n + ((k & 7) >> 1);
    return val(w.b[L][k >= 8 ? 1 : 0], k & 1);
  };
  const int g = lane >> 2, t = lane & 3;
  for (int i = 0; i < 4; ++i) {
    const int m = g + 8 * (i >> 1), n = 2 * t + (i & 1);
    float acc = d[i];
    for (int k = 0; k < 16; ++k) acc += A(m, k) * B(k, n);
    d[i] = acc;
  }
  w.bar.arrive_and_wait();
}

}  // namespace attnbench::cuda::f2

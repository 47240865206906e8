// The flash2 instruction twins (emu_ptx.hpp) on the fiber runtime
// (emu_fiber.cpp): cp.async queues per CUDA thread, ldmatrix and mma.sync as
// warp collectives whose operands are exchanged through the warp's slots.
// Also the emulator settings and fault switches of emu_control.hpp.
#include <cstdio>
#include <cstring>
#include <vector>

#include "kernels/cuda/flash2/flash2_kernel.cuh"
#include "tests/emu/emu_control.hpp"
#include "tests/emu/emu_fiber.hpp"

namespace attnbench::emu {
namespace {

settings g_settings;
std::vector<byte_range> g_reads;

void fail(const char* what) { report(what); }
using copy = async_copy;
void do_copy(const copy& c) {
  if (c.src_bytes == 0 && g_settings.inject == fault::no_zero_fill) return;
  for (int i = 0; i < c.bytes; ++i) c.dst[i] = i < c.src_bytes ? c.src[i] : 0;
}
const unsigned char* smem_begin() { return dynamic_smem_begin(); }

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
void set_readable(std::initializer_list<byte_range> reads) { g_reads.assign(reads.begin(), reads.end()); }

}  // namespace attnbench::emu

namespace attnbench::cuda::f2 {
using namespace attnbench::emu;

// cp.async of `bytes` (16: .cg, 4: .ca): both addresses aligned to it, the destination in
// dynamic shared memory, src-size 0 (zero fill) or all of it, the source inside an input
// tensor when the test names them; copied at issue (early_copy) or at the wait.
static void cp_async_n(void* smem, const void* gmem, int src_bytes, int bytes) {
  auto* d = static_cast<unsigned char*>(smem);
  auto* s = static_cast<const unsigned char*>(gmem);
  const auto misaligned = static_cast<std::uintptr_t>(bytes - 1);
  if ((reinterpret_cast<std::uintptr_t>(d) & misaligned) || (reinterpret_cast<std::uintptr_t>(s) & misaligned))
    fail(bytes == 16 ? "cp.async address not 16-byte aligned" : "cp.async address not 4-byte aligned");
  if (d < smem_begin() || d + bytes > smem_begin() + dynamic_smem_bytes())
    fail("cp.async destination outside dynamic smem");
  if (src_bytes != 0 && src_bytes != bytes) fail("cp.async src-size other than 0 or the copy's size");
  if (src_bytes > 0 && !g_reads.empty()) {  // the test names the input tensors
    bool ok = false;
    for (const byte_range& r : g_reads) {
      auto* lo = static_cast<const unsigned char*>(r.lo);
      ok |= s >= lo && s + src_bytes <= lo + r.bytes;
    }
    if (!ok) fail("cp.async reads outside every input tensor");
  }
  const copy c{d, s, src_bytes, bytes};
  if (g_settings.early_copy)
    do_copy(c);
  else
    current_thread().pending.push_back(c);
}
void cp_async_16(void* smem, const void* gmem, int src_bytes) { cp_async_n(smem, gmem, src_bytes, 16); }
void cp_async_4(void* smem, const void* gmem, int src_bytes) { cp_async_n(smem, gmem, src_bytes, 4); }

// atomicAdd on float2 (red.global.add.v2.f32): the pair must be 8-byte aligned. CTAs run one
// after another, so the read-modify-write is atomic here (as the fp32 atomicAdd's).
void atomic_add2(float* p, float a, float b) {
  if (reinterpret_cast<std::uintptr_t>(p) & 7) fail("float2 atomicAdd address not 8-byte aligned");
  p[0] += a;
  p[1] += b;
}

// cp.async.commit_group: the uncommitted copies of this thread become a group.
void cp_async_commit() {
  thread_state& t = current_thread();
  t.groups.push_back(std::move(t.pending));
  t.pending.clear();
}

// cp.async.wait_group N: all but the newest N committed groups are complete
// (copies are performed here, the latest moment the PTX ISA allows).
void cp_async_wait_n(int n) {
  thread_state& t = current_thread();
  if (!t.pending.empty()) fail("wait_group with uncommitted cp.async (they are not waited for)");
  if (g_settings.inject == fault::wait_one_less) ++n;
  while (static_cast<int>(t.groups.size()) > n) {
    for (const copy& c : t.groups.front()) do_copy(c);
    t.groups.erase(t.groups.begin());
  }
}

// ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16: lanes 8i..8i+7 address
// rows 0..7 of matrix i; lane l receives in register i row l/4, elements
// 2(l%4), 2(l%4)+1 of matrix i -- with .trans, of its transpose, i.e. stored
// elements (row 2(l%4), col l/4) and (row 2(l%4)+1, col l/4).
void ldmatrix_x4_any(std::uint32_t (&r)[4], const void* p, bool trans) {
  auto* a = static_cast<const unsigned char*>(p);
  if (reinterpret_cast<std::uintptr_t>(a) & 15) fail("ldmatrix row address not 16-byte aligned");
  if (a < smem_begin() || a + 16 > smem_begin() + dynamic_smem_bytes()) fail("ldmatrix outside dynamic smem");
  const unsigned char* s = warp_exchange(op_ldmatrix, 0xffffffffu, &a, sizeof a);
  auto addr = [s](int l) {
    const unsigned char* q;
    std::memcpy(&q, s + 64 * l, sizeof q);
    return q;
  };
  const int lane = static_cast<int>(current_lane());
  if (trans && g_settings.inject == fault::drop_trans) trans = false;
  const int g = lane >> 2, t = lane & 3;
  for (int i = 0; i < 4; ++i) {
    std::uint16_t lo, hi;
    if (!trans) {
      std::memcpy(&lo, addr(8 * i + g) + 4 * t, 2);
      std::memcpy(&hi, addr(8 * i + g) + 4 * t + 2, 2);
    } else {
      std::memcpy(&lo, addr(8 * i + 2 * t) + 2 * g, 2);
      std::memcpy(&hi, addr(8 * i + 2 * t + 1) + 2 * g, 2);
    }
    r[i] = std::uint32_t(lo) | (std::uint32_t(hi) << 16);
  }
  if (!trans && g_settings.inject == fault::ldmatrix_swap_mid) std::swap(r[1], r[2]);
}

// mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}: PTX ISA "Matrix Fragments
// for mma.m16n8k16 with floating point type", g = lane / 4, t = lane % 4:
//   A: a_i (i = 0..7), row g for i in {0,1,4,5} else g + 8, col 2t + (i & 1) + 8 (i >= 4);
//      register j holds a_2j (low half), a_2j+1.
//   B: b_i, row (k) 2t + (i & 1) + 8 (i >= 2), col (n) g.
//   C/D: c_i, row g + 8 (i >= 2), col 2t + (i & 1).
// Products are exact in fp32; they are summed in k order onto the accumulator.
void mma_16816_any(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0, std::uint32_t b1, bool bf16) {
  const std::uint32_t mine[6] = {a[0], a[1], a[2], a[3], b0, b1};
  const unsigned char* s = warp_exchange(op_mma, 0xffffffffu, mine, sizeof mine);
  auto reg = [s](int l, int j) {
    std::uint32_t v;
    std::memcpy(&v, s + 64 * l + 4 * j, 4);
    return v;
  };
  auto val = [bf16](std::uint32_t r, int half) {
    const auto u = static_cast<std::uint16_t>(r >> (16 * half));
    return bf16 ? emu_bf16_bits_to_float(u) : emu_half_bits_to_float(u);
  };
  auto A = [&](int m, int k) {
    return val(reg(4 * (m & 7) + ((k & 7) >> 1), (m >= 8 ? 1 : 0) + (k >= 8 ? 2 : 0)), k & 1);
  };
  auto B = [&](int k, int n) { return val(reg(4 * n + ((k & 7) >> 1), 4 + (k >= 8 ? 1 : 0)), k & 1); };
  const int lane = static_cast<int>(current_lane());
  const int g = lane >> 2, t = lane & 3;
  for (int i = 0; i < 4; ++i) {
    const int m = g + 8 * (i >> 1), n = 2 * t + (i & 1);
    float acc = d[i];
    for (int k = 0; k < 16; ++k) acc += A(m, k) * B(k, n);
    d[i] = acc;
  }
}

}  // namespace attnbench::cuda::f2

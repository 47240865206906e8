// Host twins of the Hopper (sm_90a) PTX building blocks of the flash3 kernels
// (kernels/cuda/flash3/flash3_ptx.cuh), included there instead of the inline
// PTX when ATTN_EMULATE is set. This file is the seam's contract: the
// kernel side implements the same names and signatures with inline PTX, the
// emulator side (tests/emu/emu_hopper.cpp) implements them from the PTX ISA
// text. Semantics each twin must follow are written beside it.
//
// Collectives: "warpgroup" = 128 consecutive threads 128k..128k+127 of the
// CTA; every thread of the warpgroup must reach the same operation (the
// .sync.aligned forms), else the emulator reports it like a divergent warp
// collective. "warp" collectives as in flash2's twins.
//
// Emulator notes for the kernel side (tests/emu, added with the twins):
//  * Shared-memory operands of TMA and wgmma must live in the dynamic shared
//    memory declared as flash2 does, `extern __shared__ __align__(128)
//    unsigned char smem_raw[]` at block scope in namespace attnbench::cuda
//    (the emulator defines that array, 1024-byte aligned). mbarriers may be
//    anywhere in shared memory (static __shared__ too).
//  * Shared-window addresses (descriptor start address, cvta.to.shared): the
//    stand-in cuda_runtime.h provides `__cvta_generic_to_shared(p)`: the
//    offset of p from smem_raw's first byte (so address bits 4-9, the
//    swizzle phase, are those of the host pointer). Build descriptors from it.
//  * <cuda.h> and <cudaTypedefs.h> are stand-ins (CUtensorMap, enums,
//    PFN_cuTensorMapEncodeTiled); cudaGetDriverEntryPoint and
//    cudaGetDriverEntryPointByVersion return the emulator's encoder.
//  * Swizzles act on shared-window address bits (Swizzle<B,4,3>: 16-byte
//    chunk bits 4.. XOR bits 7..), in TMA and wgmma alike (CuTe's model;
//    checked against CuTe by emu.hopper_oracle). A swizzled TMA box row must
//    be exactly the swizzle span; destinations 128-byte aligned.
//  * Where the emulator is stricter or weaker than the ISA: tx-count may not
//    go negative (arm expect_tx before the copies complete); any thread's
//    fence.proxy.async publishes every generic write so far (the ISA: only
//    its own); __syncthreads waits for every thread of the CTA, exited ones
//    included (use a named barrier once threads have returned); named
//    barrier ids 1..15. Also reported: a wgmma operand byte TMA wrote with
//    another swizzle than the descriptor's; wgmma operands that differ
//    across the warpgroup; wgmma.wait_group with uncommitted mma_async;
//    wgmma groups outstanding at exit. setmaxnreg starts at
//    min(256, 65536 / (128 x warpgroups)) rounded down to 8 (168 for 384
//    threads), and an inc waits until decs leave room.
#pragma once

#include <cuda.h>  // CUtensorMap (the emulator's stand-in under tests/emu/include)

#include <cstdint>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace attnbench::cuda::f3 {

// ---- mbarrier (PTX ISA "Parallel Synchronization and Communication
// Instructions: mbarrier"), all on shared::cta, 64-bit objects in shared memory.
// mbarrier.init.shared::cta.b64 [bar], count
void mbarrier_init(std::uint64_t* bar, std::uint32_t arrive_count);
// fence.mbarrier_init.release.cluster (makes the init visible to the async proxy)
void fence_mbarrier_init();
// mbarrier.arrive.shared::cta.b64 _, [bar]   (release.cta)
void mbarrier_arrive(std::uint64_t* bar);
// mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], tx_bytes
void mbarrier_arrive_expect_tx(std::uint64_t* bar, std::uint32_t tx_bytes);
// mbarrier.try_wait.parity.shared::cta.b64 p, [bar], parity: true once the phase
// with that parity has completed. In the emulator a false return is a
// scheduling point (the fiber yields), so a spin loop makes progress.
bool mbarrier_try_wait_parity(std::uint64_t* bar, std::uint32_t parity);
inline void mbarrier_wait_parity(std::uint64_t* bar, std::uint32_t parity) {
  while (!mbarrier_try_wait_parity(bar, parity)) {
  }
}

// ---- TMA: cp.async.bulk.tensor.Nd.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// [smem_dst], [map, {c0, ...}], [bar]. One thread issues it. The box given by
// the tensor map (cuTensorMapEncodeTiled, reached through
// cudaGetDriverEntryPoint / cudaGetDriverEntryPointByVersion) is copied with
// the map's swizzle into smem_dst; elements outside the tensor are zero; the
// box's byte count is then complete_tx'd on bar. Coordinates are in elements,
// innermost first, and may be negative or past the end (zero fill).
// The emulator performs queued copies at the end of a scheduler pass, never
// inside the issuing call, so a consumer that does not wait for the barrier
// reads the poison, and a barrier without expect_tx completes early.
void tma_load_2d(void* smem_dst, const CUtensorMap* map, std::uint64_t* bar, int c0, int c1);
void tma_load_3d(void* smem_dst, const CUtensorMap* map, std::uint64_t* bar, int c0, int c1, int c2);
void tma_load_4d(void* smem_dst, const CUtensorMap* map, std::uint64_t* bar, int c0, int c1, int c2, int c3);
// prefetch.tensormap [map] (a hint; the emulator only checks the pointer)
void tma_prefetch_descriptor(const CUtensorMap* map);

// fence.proxy.async.shared::cta: orders this thread's generic-proxy writes to
// shared memory before later async-proxy (wgmma, TMA) accesses. The emulator
// reports an async-proxy read of shared bytes written by the generic proxy
// with no such fence in between.
void fence_proxy_async_shared();

// ---- wgmma (PTX ISA "Asynchronous Warpgroup Level Matrix Multiply-Accumulate").
// Warpgroup collectives.
// wgmma.fence.sync.aligned: required before the first wgmma.mma_async of each
// batch (after any register access to its accumulators / A fragments); the
// emulator reports a wgmma.mma_async with no wgmma.fence since the
// warpgroup's previous wgmma.wait_group.
void wgmma_fence();
// wgmma.commit_group.sync.aligned
void wgmma_commit_group();
// wgmma.wait_group.sync.aligned N: all but the newest N committed groups are
// complete. The emulator executes a group's multiplies here (not at issue),
// so accumulators read before the wait hold their old values, and shared
// memory overwritten before the wait changes the result.
void wgmma_wait_group_n(int n);
template <int N>
inline void wgmma_wait_group() {
  wgmma_wait_group_n(N);
}

// Shared-memory matrix descriptor (64 bits, PTX ISA "Matrix Descriptor Format"):
// start address >> 4 in bits 0-13, leading-dimension byte offset >> 4 in
// 16-29, stride-dimension byte offset >> 4 in 32-45, base offset in 49-51,
// swizzle mode in 62-63 (0 none/interleave, 1 128B, 2 64B, 3 32B). The kernel
// side builds descriptors with its own encoder; the emulator decodes them.

// wgmma.mma_async.sync.aligned.m64n{N}k16.f32.{bf16|f16}.{bf16|f16}
//   D (64 x N, fp32, N/2 registers per thread in the accumulator fragment
//   layout of the PTX ISA) = A (64 x 16) * B (16 x N) + (scale_d ? D : 0).
// _ss: A and B from shared-memory descriptors; _rs: A from registers (4 x b32
// per thread, the register fragment layout of A for .f16/.bf16). trans_b = 1
// is imm-trans-b (B is MN-major in shared memory), 0 is K-major. A in shared
// memory is K-major (imm-trans-a = 0).
// The emulator's one generic twin of every form below (element type, K = 16
// for the 16-bit types, 32 for e4m3; a_regs null for SS).
enum class wgmma_elem : int { f16 = 0, bf16 = 1, e4m3 = 2 };
void wgmma_any(float* d, int n, const std::uint32_t* a_regs, std::uint64_t desc_a, std::uint64_t desc_b, int trans_b,
               wgmma_elem type, int scale_d);
template <class T>
constexpr wgmma_elem wgmma_elem_of() {
  static_assert(std::is_same_v<T, __nv_bfloat16> || std::is_same_v<T, __half>);
  return std::is_same_v<T, __nv_bfloat16> ? wgmma_elem::bf16 : wgmma_elem::f16;
}
template <class T, int N, int TransB>
inline void wgmma_ss(float (&d)[N / 2], std::uint64_t desc_a, std::uint64_t desc_b, int scale_d) {
  static_assert(N % 8 == 0 && N >= 8 && N <= 256);
  wgmma_any(d, N, nullptr, desc_a, desc_b, TransB, wgmma_elem_of<T>(), scale_d);
}
template <class T, int N, int TransB>
inline void wgmma_rs(float (&d)[N / 2], const std::uint32_t (&a)[4], std::uint64_t desc_b, int scale_d) {
  static_assert(N % 8 == 0 && N >= 8 && N <= 256);
  wgmma_any(d, N, a, 0, desc_b, TransB, wgmma_elem_of<T>(), scale_d);
}

// ---- FP8 (e4m3) forms of the flash3_fp8 kernels --------------------------------
// wgmma.mma_async.sync.aligned.m64n{N}k32.f32.e4m3.e4m3 d, {a-desc | a-regs}, b-desc, p, 1, 1;
//   D (64 x N, fp32, N/2 registers per thread, the same accumulator fragment
//   as the 16-bit forms) = A (64 x 32) * B (32 x N) + (scale_d ? D : 0), the
//   elements OCP E4M3 (1 sign, 4 exponent bits with bias 7, 3 mantissa bits,
//   no infinities, S.1111.111 NaN; largest 448). For 8-bit types the ISA has
//   no transpose immediates: A and B are both K-major in shared memory (a
//   16-byte chunk holds 16 consecutive k of one row; the same canonical
//   layouts and swizzles as the 16-bit forms with 16 elements per chunk).
//   _rs: A from registers, 4 x b32 per thread = 16 values, the ISA's A
//   fragment for 8-bit types: value i (byte i % 4, low byte first, of
//   register i / 4) of thread t (warp w = t / 32 of the warpgroup, lane l)
//   is row 16 w + l / 4 + 8 ((i / 4) % 2), column 16 (i / 8) + 4 (l % 4) + i % 4.
// The emulator: elements decoded exactly (0x7F / 0xFF are NaN, so the 0xFF
// shared-memory poison reads as NaN); products summed in fp32, k = 0..31 in
// order onto D. Hopper's fp8 tensor cores are reported to accumulate with
// fewer mantissa bits than fp32 (DeepSeek-V3 report, arXiv 2412.19437,
// 3.3.2); the ISA specifies no accumulation precision, so the emulator's
// results can be more accurate than the device's. Checks as for the 16-bit
// forms, and a transposed (MN-major) use is reported: the ISA's transpose
// exists for .f16/.bf16 only.
template <int N>
inline void wgmma_ss_e4m3(float (&d)[N / 2], std::uint64_t desc_a, std::uint64_t desc_b, int scale_d) {
  static_assert(N % 8 == 0 && N >= 8 && N <= 256);
  wgmma_any(d, N, nullptr, desc_a, desc_b, 0, wgmma_elem::e4m3, scale_d);
}
template <int N>
inline void wgmma_rs_e4m3(float (&d)[N / 2], const std::uint32_t (&a)[4], std::uint64_t desc_b, int scale_d) {
  static_assert(N % 8 == 0 && N >= 8 && N <= 256);
  wgmma_any(d, N, a, 0, desc_b, 0, wgmma_elem::e4m3, scale_d);
}
// cvt.rn.satfinite.e4m3x2.f32 d, hi, lo: d (16 bits) = e4m3(hi) << 8 | e4m3(lo),
// rounded to nearest even; finite values beyond 448 and infinities saturate to
// +-448 (0x7E / 0xFE); NaN gives 0x7F. (The emulator: the codec of its
// <cuda_fp8.h> stand-in, checked against the harness's core/fp8.hpp.)
std::uint16_t cvt_e4m3x2(float hi, float lo);

// ---- named barriers: bar.sync id, nthreads / bar.arrive id, nthreads
// (id 0..15, nthreads a multiple of 32; id 0 is __syncthreads's). Released
// when nthreads threads have arrived (arrive does not wait).
void named_barrier_sync(int id, int nthreads);
void named_barrier_arrive(int id, int nthreads);

// elect.sync _|p, 0xffffffff: warp collective; true in exactly one lane (the lowest).
bool elect_one_sync();

// setmaxnreg.{inc|dec}.sync.aligned.u32 R: warpgroup collective; R in
// [24, 256], a multiple of 8, the same in every thread of the warpgroup (the
// emulator checks both and that the CTA's total stays within 64K registers).
void setmaxnreg_any(int regs, bool increase);
template <int R>
inline void setmaxnreg_inc() {
  setmaxnreg_any(R, true);
}
template <int R>
inline void setmaxnreg_dec() {
  setmaxnreg_any(R, false);
}

}  // namespace attnbench::cuda::f3

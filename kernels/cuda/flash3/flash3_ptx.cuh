// The one PTX seam of the flash3 kernels (sm_90a): mbarrier, TMA
// (cp.async.bulk.tensor), wgmma (16-bit and e4m3), the e4m3 conversion,
// named barriers, elect.sync, setmaxnreg.
// With ATTN_EMULATE (the host emulator, tests/emu) the same names and
// signatures come from the emulator's twins (attn_emu_hopper_ptx.hpp, the
// seam's contract); otherwise they are inline PTX here, and the wgmma forms
// (one asm string per N: N/2 accumulator registers) come from the generated
// flash3_wgmma.cuh. Common to both builds: the shared-memory matrix
// descriptor encoder (PTX ISA "Matrix Descriptor Format") and the operand
// fence that keeps the compiler from moving accumulator accesses across a
// wgmma wait.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#if defined(ATTN_EMULATE)
#include <attn_emu_hopper_ptx.hpp>  // the emulator's include path (tests/emu/include)
#else

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace attnbench::cuda::f3 {

__device__ __forceinline__ std::uint32_t smem_u32_ptx(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// ---- mbarrier (shared::cta, 64-bit objects) ---------------------------------
__device__ __forceinline__ void mbarrier_init(std::uint64_t* bar, std::uint32_t arrive_count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32_ptx(bar)), "r"(arrive_count) : "memory");
}
__device__ __forceinline__ void fence_mbarrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
__device__ __forceinline__ void mbarrier_arrive(std::uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_u32_ptx(bar)) : "memory");
}
__device__ __forceinline__ void mbarrier_arrive_expect_tx(std::uint64_t* bar, std::uint32_t tx_bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32_ptx(bar)), "r"(tx_bytes)
               : "memory");
}
__device__ __forceinline__ bool mbarrier_try_wait_parity(std::uint64_t* bar, std::uint32_t parity) {
  std::uint32_t done;
  asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
               : "=r"(done)
               : "r"(smem_u32_ptx(bar)), "r"(parity)
               : "memory");
  return done != 0;
}
__device__ __forceinline__ void mbarrier_wait_parity(std::uint64_t* bar, std::uint32_t parity) {
  while (!mbarrier_try_wait_parity(bar, parity)) {
  }
}

// ---- TMA ----------------------------------------------------------------------
__device__ __forceinline__ void tma_load_2d(void* smem_dst, const CUtensorMap* map, std::uint64_t* bar, int c0,
                                            int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], "
      "[%4];\n" ::"r"(smem_u32_ptx(smem_dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_u32_ptx(bar))
      : "memory");
}
__device__ __forceinline__ void tma_load_3d(void* smem_dst, const CUtensorMap* map, std::uint64_t* bar, int c0, int c1,
                                            int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
      "[%5];\n" ::"r"(smem_u32_ptx(smem_dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(smem_u32_ptx(bar))
      : "memory");
}
__device__ __forceinline__ void tma_load_4d(void* smem_dst, const CUtensorMap* map, std::uint64_t* bar, int c0, int c1,
                                            int c2, int c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, "
      "%5}], [%6];\n" ::"r"(smem_u32_ptx(smem_dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(smem_u32_ptx(bar))
      : "memory");
}
__device__ __forceinline__ void tma_prefetch_descriptor(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(map)) : "memory");
}
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// ---- wgmma bookkeeping (warpgroup collectives) --------------------------------
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit_group() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void wgmma_wait_group() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// ---- named barriers, elect, setmaxnreg ------------------------------------------
__device__ __forceinline__ void named_barrier_sync(int id, int nthreads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(nthreads) : "memory");
}
__device__ __forceinline__ void named_barrier_arrive(int id, int nthreads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(nthreads) : "memory");
}
__device__ __forceinline__ bool elect_one_sync() {
  std::uint32_t elected;
  asm volatile("{\n.reg .b32 r;\n.reg .pred p;\nelect.sync r|p, 0xffffffff;\nselp.u32 %0, 1, 0, p;\n}\n"
               : "=r"(elected));
  return elected != 0;
}
template <int R>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(R));
}
template <int R>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(R));
}

// ---- fp8 conversion --------------------------------------------------------------
// cvt.rn.satfinite.e4m3x2.f32 d, hi, lo: e4m3(hi) in bits 8-15, e4m3(lo) in 0-7.
__device__ __forceinline__ std::uint16_t cvt_e4m3x2(float hi, float lo) {
  std::uint16_t d;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;\n" : "=h"(d) : "f"(hi), "f"(lo));
  return d;
}

}  // namespace attnbench::cuda::f3

#include "kernels/cuda/flash3/flash3_wgmma.cuh"  // wgmma_ss / wgmma_rs / *_e4m3 per N (generated)

#endif  // ATTN_EMULATE

namespace attnbench::cuda::f3 {

// Swizzle modes as the descriptor's bits 62-63 encode them.
enum class smem_swizzle : std::uint64_t { none = 0, b128 = 1, b64 = 2, b32 = 3 };

// Shared-memory matrix descriptor (PTX ISA "Matrix Descriptor Format"):
// start address >> 4 (bits 0-13), leading-dimension byte offset >> 4
// (16-29), stride-dimension byte offset >> 4 (32-45), base offset (49-51,
// 0: every atom here starts on a 1024-byte boundary), swizzle (62-63).
__host__ __device__ constexpr std::uint64_t smem_desc(std::uint32_t smem_addr, std::uint32_t lbo_bytes,
                                                      std::uint32_t sbo_bytes, smem_swizzle swz) {
  return (static_cast<std::uint64_t>((smem_addr & 0x3FFFF) >> 4)) |
         (static_cast<std::uint64_t>((lbo_bytes & 0x3FFFF) >> 4) << 16) |
         (static_cast<std::uint64_t>((sbo_bytes & 0x3FFFF) >> 4) << 32) | (static_cast<std::uint64_t>(swz) << 62);
}

__device__ __forceinline__ std::uint32_t smem_u32(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// Keeps the compiler from moving reads or writes of an accumulator or A
// fragment register across wgmma issue / wait (the asm "touches" it).
__device__ __forceinline__ void fence_operand(float& x) {
#if !defined(ATTN_EMULATE)
  asm volatile("" : "+f"(x)::"memory");
#else
  (void)x;
#endif
}
__device__ __forceinline__ void fence_operand(std::uint32_t& x) {
#if !defined(ATTN_EMULATE)
  asm volatile("" : "+r"(x)::"memory");
#else
  (void)x;
#endif
}

}  // namespace attnbench::cuda::f3

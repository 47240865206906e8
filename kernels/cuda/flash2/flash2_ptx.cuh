// Inline-PTX building blocks of the flash2 kernels (sm_80 and later):
// cp.async with zero fill, ldmatrix (.trans for V), mma.sync m16n8k16 with
// fp32 accumulation, and packing two floats into one 32-bit register of
// fp16/bf16. Fragment layouts (PTX ISA, "Matrix Fragments for mma.m16n8k16"),
// with g = lane / 4 and t = lane % 4:
//   A 16x16 (row):  a0 (g, 2t..2t+1)  a1 (g+8, 2t..)  a2 (g, 2t+8..)  a3 (g+8, 2t+8..)
//   B 16x8  (col):  b0 (k 2t..2t+1, n g)  b1 (k 2t+8.., n g)
//   C 16x8:         c0 c1 (g, 2t..2t+1)   c2 c3 (g+8, 2t..2t+1)
// ldmatrix .x4: lanes 8i..8i+7 give the row addresses of 8x8 matrix i, and
// register i of every lane receives (row lane/4, cols 2(lane%4)..+1) of matrix
// i (of its transpose with .trans).
//
// Seam for the host emulator (tests/emu): with ATTN_EMULATE defined
// (g++, no CUDA) the same names come from the emulator's attn_emu_ptx.hpp (tests/emu/emu_ptx.hpp), host twins of
// each instruction written from the PTX ISA; the kernel body is compiled
// unchanged against them.
#pragma once

#if defined(ATTN_EMULATE)
#include <attn_emu_ptx.hpp>  // provided by the emulator's include path (tests/emu/include)
#else

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace attnbench::cuda::f2 {

// 2^x by ex2.approx.ftz: 2 ulp, exact 0 for -inf, subnormal results flushed to 0.
__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// 16-byte global -> shared copy; bytes beyond src_bytes (0 or 16) are zero-filled,
// which is how rows past Nq / Nkv become zeros without a branch around the copy.
__device__ __forceinline__ void cp_async_16(void* smem, const void* gmem, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(smem)), "l"(gmem), "r"(src_bytes));
}
// 4-byte global -> shared copy (cp.async.ca: .cg takes 16 bytes only), zero-filled when
// src_bytes is 0: the backward's lse and D rows, whose starts are 4-byte aligned only.
__device__ __forceinline__ void cp_async_4(void* smem, const void* gmem, int src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_addr(smem)), "l"(gmem), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  // "memory": shared-memory reads after the wait must not be hoisted above it.
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// The flash2 backward's dQ accumulator: adds a and b to p[0], p[1] (8-byte aligned). sm_90
// has a vector reduction for the pair (atomicAdd on float2, red.global.add.v2.f32): one request
// per pair, so a warp's atomic covers whole 32-byte sectors; sm_80 adds the two floats apart.
__device__ __forceinline__ void atomic_add2(float* p, float a, float b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  atomicAdd(reinterpret_cast<float2*>(p), make_float2(a, b));
#else
  atomicAdd(p, a);
  atomicAdd(p + 1, b);
#endif
}

__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], const void* smem) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(smem)));
}
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], const void* smem) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(smem)));
}

// D = A * B + D, 16x8x16, fp32 accumulators.
template <class T>
__device__ __forceinline__ void mma_16816(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                          std::uint32_t b1);
template <>
__device__ __forceinline__ void mma_16816<__nv_bfloat16>(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                                         std::uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
template <>
__device__ __forceinline__ void mma_16816<__half>(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                                  std::uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Two floats -> one register holding (lo, hi) as T (lo in the low half, as the
// fragment layouts expect the lower column index there).
template <class T>
__device__ __forceinline__ std::uint32_t pack2(float lo, float hi);
template <>
__device__ __forceinline__ std::uint32_t pack2<__nv_bfloat16>(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<std::uint32_t*>(&v);
}
template <>
__device__ __forceinline__ std::uint32_t pack2<__half>(float lo, float hi) {
  __half2 v = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<std::uint32_t*>(&v);
}

}  // namespace attnbench::cuda::f2

#endif  // ATTN_EMULATE

// Host twins of the PTX building blocks in kernels/cuda/flash2/flash2_ptx.cuh,
// included there instead of the inline PTX when ATTN_EMULATE is set.
// Same names and signatures; the bodies (emu_runtime.cpp) follow the PTX ISA:
// cp.async.cg 16 B and .ca 4 B with zero fill and commit/wait_group groups, ldmatrix .x4
// (.trans), mma.sync m16n8k16 f32 += f16/bf16, ex2.approx.ftz.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace attnbench::cuda::f2 {

void cp_async_16(void* smem, const void* gmem, int src_bytes);
void cp_async_4(void* smem, const void* gmem, int src_bytes);
void cp_async_commit();
void cp_async_wait_n(int n);
template <int N>
inline void cp_async_wait() {
  cp_async_wait_n(N);
}

// The backward's paired dQ atomic (red.global.add.v2.f32 on sm_90): fails unless 8-byte aligned.
void atomic_add2(float* p, float a, float b);

void ldmatrix_x4_any(std::uint32_t (&r)[4], const void* smem, bool trans);
inline void ldmatrix_x4(std::uint32_t (&r)[4], const void* smem) { ldmatrix_x4_any(r, smem, false); }
inline void ldmatrix_x4_trans(std::uint32_t (&r)[4], const void* smem) { ldmatrix_x4_any(r, smem, true); }

void mma_16816_any(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0, std::uint32_t b1, bool bf16);
template <class T>
inline void mma_16816(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0, std::uint32_t b1) {
  static_assert(std::is_same_v<T, __nv_bfloat16> || std::is_same_v<T, __half>);
  mma_16816_any(d, a, b0, b1, std::is_same_v<T, __nv_bfloat16>);
}

template <class T>
std::uint32_t pack2(float lo, float hi);
template <>
inline std::uint32_t pack2<__nv_bfloat16>(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  std::uint32_t u;
  std::memcpy(&u, &v, 4);
  return u;
}
template <>
inline std::uint32_t pack2<__half>(float lo, float hi) {
  const __half2 v = __floats2half2_rn(lo, hi);
  std::uint32_t u;
  std::memcpy(&u, &v, 4);
  return u;
}

// ex2.approx.ftz.f32: exact here (the hardware's 2 ulp are well inside the
// test bounds); subnormal results flush to 0, 2^-inf = 0.
inline float fast_exp2(float x) {
  const float r = std::exp2(x);
  return std::fpclassify(r) == FP_SUBNORMAL ? 0.f : r;
}

}  // namespace attnbench::cuda::f2

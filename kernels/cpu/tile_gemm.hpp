// Tile products of the CPU kernels: register-blocked AVX-512 micro-kernels
// for the small matrices of one tile (16..256 on a side), BLAS elsewhere.
//
// Idea: every tile product of the attention kernels can be written with its
// B operand row-major and contiguous along the output row (C[i][:] +=
// a(i, k) * B[k][:]), so one kernel serves them all: it broadcasts a(i, k)
// (A row-major: NN, or A column-major: TN, given by two strides) against
// 16-float vectors of B and keeps an MR x (NV * 16) block of C in registers.
// The NT product (Q K^T) is avoided, not packed: flash kernels compute the
// transposed scores S^T = K Q^T from a Q tile loaded transposed once per
// query tile, and read K and V in place. The epilogue scales rows of C and
// of the product (the online-softmax rescale of O and flash1's 1/l), so no
// separate pass touches the accumulator.
// Why not OpenBLAS: Debian's 0.3.21 (DYNAMIC_ARCH, "Cooperlake" kernels on
// the Zen 4 VM, "Prescott" on an Intel Xeon VM) packs both operands
// on every call: its 64x64x64 NN call is as fast as this kernel (97-114
// GFLOP/s against 100-110, one thread, across runs), its NT call is not
// (68-85), and larger tiles favour this kernel (docs/cpu.md,
// build/bin/cpu_tile_gemm).
// Without AVX-512 the same calls go to cblas.
#pragma once

#include <cstdint>
#include <string>

namespace attnbench::cpu {

// a(i, k) = a[i * row_stride + k * col_stride]: NN (row-major A) is
// {a, lda, 1}, TN (A stored as its transpose, [k x m]) is {a, 1, lda}.
struct a_operand {
  const float* a;
  std::int64_t row_stride, col_stride;
};

// What happens to C: C[i][:] = c_scale_i * C[i][:] + alpha * ab_scale_i * (A B)[i][:],
// with c_scale_i = 0 when !accumulate, else c_row_scale[i] (1 when null), and
// ab_scale_i = ab_row_scale[i] (1 when null).
struct c_update {
  bool accumulate = false;
  const float* c_row_scale = nullptr;
  const float* ab_row_scale = nullptr;
};

// C[m x n] (row-major, ldc) as c_update says, B[k x n] row-major (ldb).
void tile_gemm(std::int64_t m, std::int64_t n, std::int64_t k, float alpha, a_operand a, const float* b,
               std::int64_t ldb, float* c, std::int64_t ldc, c_update u);

// Whether tile_gemm runs the AVX-512 micro-kernels (else cblas_sgemm).
bool tile_gemm_vectorised();
// What computes the tile products, for the run's context:
// "avx512 micro-kernels" or "cblas: <OpenBLAS config> (<core>)".
std::string tile_products_description();
// Sends every tile_gemm call to cblas while on (tests and benchmarks compare the two).
void tile_gemm_force_blas(bool on);  // and the softmax pass to its scalar loops

}  // namespace attnbench::cpu

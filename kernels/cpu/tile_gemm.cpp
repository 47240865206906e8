// Tile products (tile_gemm.hpp). Micro-kernel: an MR x NV block of 16-float
// AVX-512 accumulators; per k step NV vector loads of B, MR broadcasts of
// a(i, k), MR * NV fused multiply-adds. Blocks walk n outside and m inside so
// the B panel (k x 64 floats, 16 KiB at k = 64) stays in L1 while the rows of
// A stream past it.
// Measured (2-core Zen 4 VM, one thread, build/bin/cpu_tile_gemm; table in
// docs/cpu.md): 100-110 GFLOP/s at 64x64x64 NN across runs, about the
// core's measured FMA peak (108-110), against OpenBLAS 0.3.21's 97-114 NN
// and 68-85 NT.
#include "kernels/cpu/tile_gemm.hpp"

#include <algorithm>
#include <atomic>
#include <cblas.h>
#include <vector>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define ATTNBENCH_HAVE_AVX512_KERNELS 1
#define ATTNBENCH_AVX512 __attribute__((target("avx512f")))
#endif

// OpenBLAS's own queries (not in a netlib cblas.h).
extern "C" {
char* openblas_get_config(void);
char* openblas_get_corename(void);
}

namespace attnbench::cpu {

namespace {

std::atomic<bool> force_blas{false};

// k per micro-kernel pass: 64 keeps a 64-column B panel in L1 (16 KiB);
// at d = 128 (S^T = K Q^T, k = d) 64 and 128 measured within noise of each
// other (this VM, shared with builds), 32 ~5% slower.
constexpr std::int64_t k_chunk = 64;

// The cblas path: T = alpha A B, then C = c_scale C + ab_scale T row by row.
void tile_gemm_blas(std::int64_t m, std::int64_t n, std::int64_t k, float alpha, a_operand a, const float* b,
                    std::int64_t ldb, float* c, std::int64_t ldc, c_update u) {
  const bool plain = u.c_row_scale == nullptr && u.ab_row_scale == nullptr;
  thread_local std::vector<float> tmp;
  float* t = c;
  std::int64_t ldt = ldc;
  if (!plain) {
    tmp.resize(static_cast<std::size_t>(m * n));
    t = tmp.data();
    ldt = n;
  }
  const bool tn = a.col_stride != 1;  // A stored transposed, [k x m]
  // cblas wants lda >= the stored row length even where one row is all there is.
  const std::int64_t lda = tn ? std::max(a.col_stride, m) : std::max(a.row_stride, k);
  const float beta = plain && u.accumulate ? 1.0f : 0.0f;
  cblas_sgemm(CblasRowMajor, tn ? CblasTrans : CblasNoTrans, CblasNoTrans, int(m), int(n), int(k), alpha, a.a,
              int(std::max<std::int64_t>(lda, 1)), b, int(std::max(ldb, n)), beta, t, int(ldt));
  if (plain) return;
  for (std::int64_t i = 0; i < m; ++i) {
    const float cs = !u.accumulate ? 0.0f : u.c_row_scale ? u.c_row_scale[i] : 1.0f;
    const float ps = u.ab_row_scale ? u.ab_row_scale[i] : 1.0f;
    float* ci = c + i * ldc;
    const float* ti = t + i * ldt;
    for (std::int64_t j = 0; j < n; ++j) ci[j] = (cs == 0.0f ? 0.0f : cs * ci[j]) + ps * ti[j];
  }
}

#ifdef ATTNBENCH_HAVE_AVX512_KERNELS

struct gemm_args {
  std::int64_t k;
  float alpha;
  a_operand a;
  const float* b;
  std::int64_t ldb;
  float* c;
  std::int64_t ldc;
  c_update u;
};

// C[i0 .. i0 + MR)[j0 .. j0 + 16 NV), the last vector masked by `last`.
template <int MR, int NV>
ATTNBENCH_AVX512 void micro_kernel(const gemm_args& g, std::int64_t i0, std::int64_t j0, __mmask16 last) {
  __m512 acc[MR][NV];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_setzero_ps();
  const float* a = g.a.a + i0 * g.a.row_stride;
  const std::int64_t ars = g.a.row_stride, acs = g.a.col_stride;
  const float* b = g.b + j0;
  // The next block's rows of A, one line per 16 k (NN: flash's K rows, from L2/L3):
  // +3-7% on flash2 at N = 2048 (one thread, interleaved pairs); prefetching B did nothing.
  const float* a_next = a + MR * ars;
  for (std::int64_t kk = 0; kk < g.k; ++kk) {
    if (acs == 1 && (kk & 15) == 0)
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r) _mm_prefetch(reinterpret_cast<const char*>(a_next + r * ars + kk), _MM_HINT_T0);
    __m512 bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      bv[v] = v == NV - 1 ? _mm512_maskz_loadu_ps(last, b + 16 * v) : _mm512_loadu_ps(b + 16 * v);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const __m512 av = _mm512_set1_ps(a[r * ars]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_fmadd_ps(av, bv[v], acc[r][v]);
    }
    a += acs;
    b += g.ldb;
  }
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
    const std::int64_t i = i0 + r;
    const __m512 s = _mm512_set1_ps(g.alpha * (g.u.ab_row_scale ? g.u.ab_row_scale[i] : 1.0f));
    float* c = g.c + i * g.ldc + j0;
    if (g.u.accumulate) {
      const __m512 cs = _mm512_set1_ps(g.u.c_row_scale ? g.u.c_row_scale[i] : 1.0f);
      for (int v = 0; v < NV; ++v) {
        const __mmask16 mv = v == NV - 1 ? last : __mmask16(0xffff);
        const __m512 old = _mm512_mul_ps(_mm512_maskz_loadu_ps(mv, c + 16 * v), cs);
        _mm512_mask_storeu_ps(c + 16 * v, mv, _mm512_fmadd_ps(acc[r][v], s, old));
      }
    } else {
      for (int v = 0; v < NV; ++v) {
        const __mmask16 mv = v == NV - 1 ? last : __mmask16(0xffff);
        _mm512_mask_storeu_ps(c + 16 * v, mv, _mm512_mul_ps(acc[r][v], s));
      }
    }
  }
}

// Rows of one column panel: full MR blocks, then one block of the remainder.
template <int MR, int NV>
ATTNBENCH_AVX512 void rows_tail(const gemm_args& g, std::int64_t i0, std::int64_t rem, std::int64_t j0,
                                __mmask16 last) {
  if constexpr (MR > 0) {
    if (rem == MR)
      micro_kernel<MR, NV>(g, i0, j0, last);
    else
      rows_tail<MR - 1, NV>(g, i0, rem, j0, last);
  }
}

// Register budget: MR * NV accumulators + NV B vectors + 1 broadcast <= 32.
template <int NV>
constexpr int rows_per_block = NV == 4   ? 6
                               : NV == 3 ? 8
                                         : 12;

template <int NV>
ATTNBENCH_AVX512 void column_panel(const gemm_args& g, std::int64_t m, std::int64_t j0, __mmask16 last) {
  constexpr int MR = rows_per_block<NV>;
  std::int64_t i = 0;
  for (; i + MR <= m; i += MR) micro_kernel<MR, NV>(g, i, j0, last);
  if (i < m) rows_tail<MR - 1, NV>(g, i, m - i, j0, last);
}

ATTNBENCH_AVX512 void tile_gemm_avx512(std::int64_t m, std::int64_t n, const gemm_args& g) {
  constexpr std::int64_t panel = 64;  // NV = 4
  std::int64_t j = 0;
  for (; j + panel <= n; j += panel) column_panel<4>(g, m, j, 0xffff);
  if (j == n) return;
  const std::int64_t rem = n - j, nv = (rem + 15) / 16;
  const __mmask16 last = __mmask16((1u << (rem - 16 * (nv - 1))) - 1u);
  switch (nv) {
    case 1: column_panel<1>(g, m, j, last); break;
    case 2: column_panel<2>(g, m, j, last); break;
    case 3: column_panel<3>(g, m, j, last); break;
    default: column_panel<4>(g, m, j, last); break;
  }
}

bool cpu_has_avx512() {
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
}

#else

bool cpu_has_avx512() { return false; }

#endif

}  // namespace

bool tile_gemm_vectorised() { return cpu_has_avx512() && !force_blas.load(std::memory_order_relaxed); }

std::string tile_products_description() {
  if (tile_gemm_vectorised()) return "avx512 micro-kernels";
  return std::string("cblas: ") + openblas_get_config() + " (" + openblas_get_corename() + ")";
}

void tile_gemm_force_blas(bool on) { force_blas.store(on, std::memory_order_relaxed); }

void tile_gemm(std::int64_t m, std::int64_t n, std::int64_t k, float alpha, a_operand a, const float* b,
               std::int64_t ldb, float* c, std::int64_t ldc, c_update u) {
  if (m <= 0 || n <= 0) return;
#ifdef ATTNBENCH_HAVE_AVX512_KERNELS
  if (tile_gemm_vectorised()) {
    // k in chunks of at most k_chunk so a 64-column panel of B stays in L1;
    // later chunks add to C with the product's row scale only.
    const std::int64_t kc = k_chunk;
    for (std::int64_t k0 = 0; k0 < k || k0 == 0; k0 += kc) {
      const a_operand ak{a.a + k0 * a.col_stride, a.row_stride, a.col_stride};
      const c_update uk = k0 == 0 ? u : c_update{true, nullptr, u.ab_row_scale};
      tile_gemm_avx512(m, n, gemm_args{std::min(kc, k - k0), alpha, ak, b + k0 * ldb, ldb, c, ldc, uk});
    }
    return;
  }
#endif
  tile_gemm_blas(m, n, k, alpha, a, b, ldb, c, ldc, u);
}

}  // namespace attnbench::cpu

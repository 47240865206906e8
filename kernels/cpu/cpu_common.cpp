#include "kernels/cpu/cpu_common.hpp"

#include "kernels/cpu/exp_approx.hpp"
#include "kernels/cpu/round_dtype.hpp"
#include "kernels/cpu/tile_gemm.hpp"

#include <bit>
#include <cblas.h>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <omp.h>

// Declared by OpenBLAS's cblas.h; repeated so a netlib cblas.h also compiles.
extern "C" {
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);
}

// The hot row loops are compiled for AVX-512, AVX2 and baseline x86-64 and
// picked at load time, so the default build stays portable.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define ATTNBENCH_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define ATTNBENCH_CLONES
#endif

namespace attnbench::cpu {

// ---- byte counting -------------------------------------------------------------------

void byte_counter::reset() { slots_.assign(static_cast<std::size_t>(max_threads()), slot{}); }

void byte_counter::add(std::int64_t bytes) { slots_[static_cast<std::size_t>(thread_id())].n += bytes; }

std::int64_t byte_counter::total() const {
  std::int64_t n = 0;
  for (const slot& s : slots_) n += s.n;
  return n;
}

int max_threads() { return omp_get_max_threads(); }
int thread_id() { return omp_get_thread_num(); }

// ---- BLAS ----------------------------------------------------------------------------

// Through tile_gemm (AVX-512 micro-kernels, or cblas without AVX-512);
// cblas directly for a beta other than 0 or 1.
void gemm_nt(std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a, std::int64_t lda,
             const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  if ((beta != 0.0f && beta != 1.0f) || !tile_gemm_vectorised()) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(m), int(n), int(k), alpha, a, int(lda), b, int(ldb), beta,
                c, int(ldc));
    return;
  }
  // The NT fast path: B^T packed once ([k x n], n*k moves against m*n*k
  // multiply-adds), then the NN micro-kernels.
  thread_local std::vector<float> bt;
  bt.resize(static_cast<std::size_t>(k * n));
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t x = 0; x < k; ++x) bt[x * n + j] = b[j * ldb + x];
  tile_gemm(m, n, k, alpha, {a, lda, 1}, bt.data(), n, c, ldc, {.accumulate = beta == 1.0f});
}

void gemm_nn(std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a, std::int64_t lda,
             const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  if (beta != 0.0f && beta != 1.0f) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(m), int(n), int(k), alpha, a, int(lda), b, int(ldb),
                beta, c, int(ldc));
    return;
  }
  tile_gemm(m, n, k, alpha, {a, lda, 1}, b, ldb, c, ldc, {.accumulate = beta == 1.0f});
}

void gemm_tn(std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a, std::int64_t lda,
             const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  if (beta != 0.0f && beta != 1.0f) {
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, int(m), int(n), int(k), alpha, a, int(lda), b, int(ldb), beta,
                c, int(ldc));
    return;
  }
  tile_gemm(m, n, k, alpha, {a, 1, lda}, b, ldb, c, ldc, {.accumulate = beta == 1.0f});
}

blas_single_thread::blas_single_thread() : saved_(openblas_get_num_threads()) {
  if (saved_ != 1) openblas_set_num_threads(1);
}
blas_single_thread::~blas_single_thread() {
  if (saved_ != 1) openblas_set_num_threads(saved_);
}

// ---- row operations --------------------------------------------------------------------

ATTNBENCH_CLONES float row_max(const float* x, std::int64_t n) {
  float m = -std::numeric_limits<float>::infinity();
  // The ternary, not std::max: GCC vectorises only this form of max reduction.
#pragma omp simd reduction(max : m)
  for (std::int64_t j = 0; j < n; ++j) m = x[j] > m ? x[j] : m;
  return m;
}

ATTNBENCH_CLONES float exp_sub_sum(float* x, std::int64_t n, float m, exp_counter& exps) {
  exps.add(n);
  float s = 0;
#pragma omp simd reduction(+ : s)
  for (std::int64_t j = 0; j < n; ++j) {
    x[j] = exp_approx(x[j] - m);
    s += x[j];
  }
  return s;
}

ATTNBENCH_CLONES void scale(float* x, std::int64_t n, float a) {
#pragma omp simd
  for (std::int64_t j = 0; j < n; ++j) x[j] *= a;
}

ATTNBENCH_CLONES void elu1(float* x, std::int64_t n, exp_counter& exps) {
  exps.add(n);
#pragma omp simd
  for (std::int64_t j = 0; j < n; ++j) x[j] = x[j] > 0 ? x[j] + 1.0f : exp_approx(x[j]);
}

ATTNBENCH_CLONES float tanh_score(const float* q, const float* k, const float* v, std::int64_t n) {
  float s = 0;
#pragma omp simd reduction(+ : s)
  for (std::int64_t c = 0; c < n; ++c) s += v[c] * (1.0f - 2.0f / (exp_approx(2.0f * (q[c] + k[c])) + 1.0f));
  return s;
}

ATTNBENCH_CLONES float sum(const float* x, std::int64_t n) {
  float s = 0;
#pragma omp simd reduction(+ : s)
  for (std::int64_t j = 0; j < n; ++j) s += x[j];
  return s;
}

ATTNBENCH_CLONES void round_bf16(float* x, std::int64_t n) {
#pragma omp simd
  for (std::int64_t j = 0; j < n; ++j) x[j] = bf16_round(x[j]);
}

ATTNBENCH_CLONES void offset_round_e4m3(float* x, std::int64_t n) {
#pragma omp simd
  for (std::int64_t j = 0; j < n; ++j) x[j] = e4m3_round_fast(fp8_p_offset * x[j]);
}

void mask_row(const problem& p, std::int64_t i, std::int64_t c0, float* row, std::int64_t n, float masked) {
  mask_strided(p, 0, i, c0, row, 1, n, masked);
}

void mask_strided(const problem& p, std::int64_t h, std::int64_t i, std::int64_t c0, float* row, std::int64_t stride,
                  std::int64_t n, float masked) {
  // Every key of the tile visible: row i sees all keys, or the tile lies in
  // the global prefix, or inside the row's window.
  if (i < p.mask.global || c0 + n <= p.mask.global) return;
  const span64 w = window_keys(p, i, i + 1);
  if (w.lo <= c0 && c0 + n <= w.hi) return;
  // Keys inside the window are visible; only those outside it are looked up
  // (a causal diagonal tile: half of them; mask_strided was ~5% of a causal
  // flash2 run when it looked up all).
  const std::int64_t in_lo = std::clamp(w.lo - c0, std::int64_t{0}, n);
  const std::int64_t in_hi = std::clamp(w.hi - c0, in_lo, n);
  // Outside the window: the global keys, then the sparse terms. Block terms are looked up once
  // per key block (per key, is_visible drew the random blocks' permutation each time:
  // causal+random:64,4 took 8x causal's time, N 1024); the stride's remainder is stepped per
  // key, back = i' - key falling by one (with is_visible per key flash2 took 2.93 ms at
  // causal+strided:16,64, 2.27 ms now; causal alone 1.69 ms; B 1, H 2, N 1024, d 64, 2 threads).
  const bool strided = p.mask.has_strided(), blocks = p.mask.has_random() || p.mask.has_layout();
  const bool clip = sparse_clipped(p);
  const std::int64_t ip = i + p.Nkv - p.Nq, b = blocks ? block_term_size(p) : n;
  const std::int64_t step = strided ? p.mask.sparse->stride : 1, band = strided ? p.mask.sparse->stride_band : -1;
  auto mask_keys = [&](std::int64_t lo, std::int64_t hi) {
    std::int64_t back = ip - (c0 + lo), rem = back >= 0 ? back % step : 0;
    for (std::int64_t j = lo; j < hi;) {
      const std::int64_t kb = (c0 + j) / b, end = blocks ? std::min(hi, (kb + 1) * b - c0) : hi;
      const bool block = blocks && block_term_visible(p, h, i / b, kb);
      for (; j < end; ++j, --back) {
        const bool on_stride = strided && back >= 0 && (back <= band || rem == 0);
        if (!(c0 + j < p.mask.global || (!(clip && back < 0) && (block || on_stride)))) row[j * stride] = masked;
        if (back > 0) rem = rem == 0 ? step - 1 : rem - 1;
      }
    }
  };
  mask_keys(0, in_lo);
  mask_keys(in_hi, n);
}

void load_transposed(float* tile, std::int64_t ld, const float* global, std::int64_t rows, std::int64_t cols,
                     byte_counter& c, std::int64_t elem) {
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t x = 0; x < cols; ++x) tile[x * ld + r] = global[r * cols + x];
  c.add(elem * rows * cols);
}

// ---- runner base ---------------------------------------------------------------------

cpu_runner::cpu_runner(const problem& p, bool writes_lse)
    : p_(p), q_(p.q_elems()), k_(p.kv_elems()), v_(p.kv_elems()), o_(p.o_elems()), lse_(writes_lse ? p.rows() : 0) {
  reset_counters();
}

void cpu_runner::set_inputs(const host_inputs& in) {
  if (!(in.p == p_) || in.q.size() != q_.size() || in.k.size() != k_.size() || in.v.size() != v_.size())
    throw input_error(fmt::format("inputs for {} given to a runner of {}", benchmark_name("?", "cpu", in.p),
                                  benchmark_name("?", "cpu", p_)));
  q_ = in.q;
  k_ = in.k;
  v_ = in.v;
}

void cpu_runner::poison_outputs() {
  std::fill(o_.begin(), o_.end(), std::numeric_limits<float>::quiet_NaN());
  std::fill(lse_.begin(), lse_.end(), std::numeric_limits<float>::quiet_NaN());
}

host_outputs cpu_runner::get_outputs() { return {o_, lse_}; }

}  // namespace attnbench::cpu

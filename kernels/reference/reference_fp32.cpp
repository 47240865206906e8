#include "kernels/reference/reference_fp32.hpp"

#include <cblas.h>

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <limits>
#include <omp.h>

#include "core/mask.hpp"
#include "kernels/reference/scan_reference.hpp"

namespace attnbench {

namespace {

constexpr std::int64_t score_block_floats = std::int64_t{1} << 20;  // one thread's block of S: 4 MiB

std::int64_t rows_per_block(const problem& p) {
  return std::clamp<std::int64_t>(score_block_floats / std::max<std::int64_t>(p.Nkv, 1), 1,
                                  std::max<std::int64_t>(p.Nq, 1));
}

float phi_elu1(float x) { return x > 0.f ? x + 1.f : std::exp(x); }

// The visible keys of query row i of head h as ascending, disjoint runs [lo, hi), appended.
void visible_runs(const problem& p, std::int64_t h, std::int64_t i, std::vector<span64>& runs) {
  if (i < p.mask.global) {
    runs.push_back({0, p.Nkv});
    return;
  }
  if (p.mask.has_sparse()) {  // key by key: the one definition of visibility
    const std::size_t first = runs.size();
    for (std::int64_t j = 0; j < p.Nkv; ++j) {
      if (!is_visible(p, h, i, j)) continue;
      if (runs.size() > first && runs.back().hi == j)
        ++runs.back().hi;
      else
        runs.push_back({j, j + 1});
    }
    return;
  }
  // The global prefix [0, g) and the window: is_visible's two terms.
  const std::int64_t g = std::min(p.mask.global, p.Nkv);
  const span64 w = window_keys(p, i, i + 1);
  if (w.empty() || w.lo <= g) {
    const std::int64_t hi = w.empty() ? g : std::max(g, w.hi);
    if (hi > 0) runs.push_back({0, hi});
  } else {
    if (g > 0) runs.push_back({0, g});
    runs.push_back(w);
  }
}

// Row weights in place: s (the row's scores of keys [k0, k0 + n)) becomes W (0 outside the
// visible keys `runs`); returns the row sum. softmax: W = exp(s - m), *lse = m + log(sum) or -inf.
double row_weights(attention_math math, float* s, std::int64_t k0, std::int64_t n, const span64* runs,
                   std::size_t nruns, float* lse) {
  float m = -std::numeric_limits<float>::infinity();
  if (math == attention_math::softmax)
    for (std::size_t r = 0; r < nruns; ++r)
      for (std::int64_t j = runs[r].lo; j < runs[r].hi; ++j) m = std::max(m, s[j - k0]);
  double sum = 0;
  std::int64_t pos = k0;
  for (std::size_t r = 0; r < nruns; ++r) {
    std::fill(s + (pos - k0), s + (runs[r].lo - k0), 0.f);
    for (std::int64_t j = runs[r].lo; j < runs[r].hi; ++j) {
      float& x = s[j - k0];
      if (math == attention_math::softmax) x = std::exp(x - m);
      sum += x;
    }
    pos = runs[r].hi;
  }
  std::fill(s + (pos - k0), s + n, 0.f);
  if (lse) *lse = nruns == 0 ? -std::numeric_limits<float>::infinity() : m + static_cast<float>(std::log(sum));
  return sum;
}

// OpenBLAS single-threaded while alive: the reference parallelises over blocks of rows itself.
class one_blas_thread {
 public:
  one_blas_thread() : saved_(openblas_get_num_threads()) {
    if (saved_ != 1) openblas_set_num_threads(1);
  }
  ~one_blas_thread() {
    if (saved_ != 1) openblas_set_num_threads(saved_);
  }
  one_blas_thread(const one_blas_thread&) = delete;
  one_blas_thread& operator=(const one_blas_thread&) = delete;

 private:
  int saved_;
};

}  // namespace

std::int64_t reference_fp32_bytes(const problem& p) {
  const std::int64_t threads = omp_get_max_threads();
  const std::int64_t block = rows_per_block(p) * std::max<std::int64_t>(p.Nkv, 1);
  // O, lse, and per thread one score block and one block of phi(Q); linear: phi(K).
  return 4 * (p.o_elems() + p.rows() + threads * (block + rows_per_block(p) * p.d) + p.kv_elems());
}

reference_all_rows reference_fp32_all_rows(attention_math math, const host_inputs& in) {
  if (is_scan(math)) return reference_scan_all_rows(math, in);  // kernels/reference/scan_reference.hpp
  const problem& p = in.p;
  const bool linear = math == attention_math::linear;
  if (linear && (p.mask.global != 0 || p.mask.kind == mask_kind::local || p.mask.has_sparse()))
    throw input_error(fmt::format("linear attention supports masks none and causal, not '{}'", to_string(p.mask)));
  const std::int64_t d = p.d, nq = p.Nq, nkv = p.Nkv, rb = rows_per_block(p);
  reference_all_rows out;
  out.o.assign(static_cast<std::size_t>(p.o_elems()), 0.f);
  if (!linear) out.lse.assign(static_cast<std::size_t>(p.rows()), -std::numeric_limits<float>::infinity());
  if (nkv <= 0 || nq <= 0) return out;
  const one_blas_thread blas;
  std::vector<float> fk;  // linear: phi(K), every KV head
  if (linear) {
    fk.resize(in.k.size());
    const auto n = static_cast<std::int64_t>(fk.size());
#pragma omp parallel for schedule(static)
    for (std::int64_t e = 0; e < n; ++e) fk[e] = phi_elu1(in.k[e]);
  }
  const float alpha = linear ? 1.f : 1.f / std::sqrt(static_cast<float>(d));
  const std::int64_t blocks = (nq + rb - 1) / rb, tasks = p.B * p.H * blocks;
#pragma omp parallel
  {
    std::vector<float> s(static_cast<std::size_t>(rb * nkv)), fq;
    std::vector<double> sums(static_cast<std::size_t>(rb));
    std::vector<span64> runs;
    std::vector<std::size_t> first(static_cast<std::size_t>(rb + 1));
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t t = 0; t < tasks; ++t) {
      const std::int64_t z = t / blocks, r0 = (t % blocks) * rb, rows = std::min(rb, nq - r0);
      const std::int64_t b = z / p.H, h = z % p.H, kvz = b * p.Hkv + p.kv_head(h);
      // The visible runs of every row, and the keys any of them sees: S and P V over [k0, k1).
      runs.clear();
      std::int64_t k0 = nkv, k1 = 0;
      for (std::int64_t r = 0; r < rows; ++r) {
        first[static_cast<std::size_t>(r)] = runs.size();
        visible_runs(p, linear ? 0 : h, r0 + r, runs);
      }
      first[static_cast<std::size_t>(rows)] = runs.size();
      for (const span64& run : runs) k0 = std::min(k0, run.lo), k1 = std::max(k1, run.hi);
      float* o = out.o.data() + (z * nq + r0) * d;
      if (k1 <= k0) continue;  // no row of the block sees a key: O stays 0, lse -inf
      const std::int64_t n = k1 - k0;
      const float* q = in.q.data() + (z * nq + r0) * d;
      const float* k = (linear ? fk.data() : in.k.data()) + (kvz * nkv + k0) * d;
      const float* v = in.v.data() + (kvz * nkv + k0) * d;
      if (linear) {
        fq.resize(static_cast<std::size_t>(rows * d));
        for (std::int64_t e = 0; e < rows * d; ++e) fq[e] = phi_elu1(q[e]);
        q = fq.data();
      }
      // S = alpha Q K^T over the block's keys ([rows, n]).
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(rows), static_cast<int>(n),
                  static_cast<int>(d), alpha, q, static_cast<int>(d), k, static_cast<int>(d), 0.f, s.data(),
                  static_cast<int>(n));
      for (std::int64_t r = 0; r < rows; ++r) {
        const std::size_t a = first[static_cast<std::size_t>(r)], e = first[static_cast<std::size_t>(r + 1)];
        float* lse = linear ? nullptr : &out.lse[static_cast<std::size_t>(z * nq + r0 + r)];
        sums[static_cast<std::size_t>(r)] = row_weights(math, s.data() + r * n, k0, n, runs.data() + a, e - a, lse);
      }
      // O = W V, then each row divided by its sum (a row without keys stays 0).
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(rows), static_cast<int>(d),
                  static_cast<int>(n), 1.f, s.data(), static_cast<int>(n), v, static_cast<int>(d), 0.f, o,
                  static_cast<int>(d));
      for (std::int64_t r = 0; r < rows; ++r) {
        const double sum = sums[static_cast<std::size_t>(r)];
        const float inv = sum > 0 ? static_cast<float>(1.0 / sum) : 0.f;
        for (std::int64_t x = 0; x < d; ++x) o[r * d + x] *= inv;
      }
    }
  }
  return out;
}

}  // namespace attnbench

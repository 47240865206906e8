#include "kernels/reference/reference_fp32.hpp"

#include <cblas.h>

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/mask.hpp"

namespace attnbench {

namespace {

constexpr std::int64_t score_block_floats = std::int64_t{1} << 22;  // one block of S: 16 MiB

std::int64_t rows_per_block(const problem& p) {
  return std::clamp<std::int64_t>(score_block_floats / std::max<std::int64_t>(p.Nkv, 1), 1,
                                  std::max<std::int64_t>(p.Nq, 1));
}

float phi_elu1(float x) { return x > 0.f ? x + 1.f : std::exp(x); }

// The visible keys of query row i of head h as ascending, disjoint runs [lo, hi).
void visible_runs(const problem& p, std::int64_t h, std::int64_t i, std::vector<span64>& runs) {
  runs.clear();
  if (i < p.mask.global) {
    runs.push_back({0, p.Nkv});
    return;
  }
  if (p.mask.has_sparse()) {  // key by key: the one definition of visibility
    for (std::int64_t j = 0; j < p.Nkv; ++j) {
      if (!is_visible(p, h, i, j)) continue;
      if (!runs.empty() && runs.back().hi == j)
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

// Row weights in place: s (scores of the row, Nkv) becomes W (0 outside the visible
// keys); returns the row sum. softmax: W = exp(s - m), *lse = m + log(sum) or -inf.
double row_weights(attention_math math, float* s, std::int64_t nkv, const std::vector<span64>& runs, float* lse) {
  float m = -std::numeric_limits<float>::infinity();
  if (math == attention_math::softmax)
    for (const span64& r : runs)
      for (std::int64_t j = r.lo; j < r.hi; ++j) m = std::max(m, s[j]);
  double sum = 0;
  std::int64_t pos = 0;
  for (const span64& r : runs) {
    std::fill(s + pos, s + r.lo, 0.f);
    for (std::int64_t j = r.lo; j < r.hi; ++j) {
      if (math == attention_math::softmax) s[j] = std::exp(s[j] - m);
      sum += s[j];
    }
    pos = r.hi;
  }
  std::fill(s + pos, s + nkv, 0.f);
  if (lse) *lse = runs.empty() ? -std::numeric_limits<float>::infinity() : m + static_cast<float>(std::log(sum));
  return sum;
}

}  // namespace

std::int64_t reference_fp32_bytes(const problem& p) {
  const std::int64_t block = rows_per_block(p) * std::max<std::int64_t>(p.Nkv, 1);
  // O, lse, one score block, and (linear) phi of one block of Q and of one K head.
  return 4 * (p.o_elems() + p.rows() + block + rows_per_block(p) * p.d + p.Nkv * p.d);
}

reference_all_rows reference_fp32_all_rows(attention_math math, const host_inputs& in) {
  const problem& p = in.p;
  const bool linear = math == attention_math::linear;
  if (linear && (p.mask.global != 0 || p.mask.kind == mask_kind::local || p.mask.has_sparse()))
    throw input_error(fmt::format("linear attention supports masks none and causal, not '{}'", to_string(p.mask)));
  const std::int64_t d = p.d, nq = p.Nq, nkv = p.Nkv, rb = rows_per_block(p);
  reference_all_rows out;
  out.o.assign(static_cast<std::size_t>(p.o_elems()), 0.f);
  if (!linear) out.lse.assign(static_cast<std::size_t>(p.rows()), -std::numeric_limits<float>::infinity());
  if (nkv <= 0 || nq <= 0) return out;
  std::vector<float> s(static_cast<std::size_t>(rb * nkv)), fq, fk;
  std::vector<double> sums(static_cast<std::size_t>(rb));
  const float alpha = linear ? 1.f : 1.f / std::sqrt(static_cast<float>(d));
  std::int64_t fk_head = -1;
  for (std::int64_t b = 0; b < p.B; ++b)
    for (std::int64_t h = 0; h < p.H; ++h) {
      const std::int64_t z = b * p.H + h, kvz = b * p.Hkv + p.kv_head(h);
      const float* k = in.k.data() + kvz * nkv * d;
      const float* v = in.v.data() + kvz * nkv * d;
      if (linear) {  // phi(K) once per KV head
        if (fk_head != kvz) {
          fk.resize(static_cast<std::size_t>(nkv * d));
          for (std::int64_t e = 0; e < nkv * d; ++e) fk[e] = phi_elu1(k[e]);
          fk_head = kvz;
        }
        k = fk.data();
      }
      for (std::int64_t r0 = 0; r0 < nq; r0 += rb) {
        const std::int64_t rows = std::min(rb, nq - r0);
        const float* q = in.q.data() + (z * nq + r0) * d;
        if (linear) {
          fq.resize(static_cast<std::size_t>(rows * d));
          for (std::int64_t e = 0; e < rows * d; ++e) fq[e] = phi_elu1(q[e]);
          q = fq.data();
        }
        // S = alpha Q K^T ([rows, Nkv]).
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(rows), static_cast<int>(nkv),
                    static_cast<int>(d), alpha, q, static_cast<int>(d), k, static_cast<int>(d), 0.f, s.data(),
                    static_cast<int>(nkv));
#pragma omp parallel
        {
          std::vector<span64> runs;
#pragma omp for schedule(dynamic, 8)
          for (std::int64_t r = 0; r < rows; ++r) {
            const std::int64_t i = r0 + r;
            visible_runs(p, linear ? 0 : h, i, runs);
            float* lse = linear ? nullptr : &out.lse[static_cast<std::size_t>(z * nq + i)];
            sums[static_cast<std::size_t>(r)] = row_weights(math, s.data() + r * nkv, nkv, runs, lse);
          }
        }
        // O = W V, then each row divided by its sum (a row without keys stays 0).
        float* o = out.o.data() + (z * nq + r0) * d;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(rows), static_cast<int>(d),
                    static_cast<int>(nkv), 1.f, s.data(), static_cast<int>(nkv), v, static_cast<int>(d), 0.f, o,
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

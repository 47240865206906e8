#include "kernels/reference/backward_reference.hpp"

#include <fmt/format.h>
#include <cmath>
#include <limits>

#include "core/mask.hpp"

namespace attnbench {

namespace {

constexpr double neg_inf = -std::numeric_limits<double>::infinity();

double dot(const float* a, const float* b, std::int64_t d) {
  double s = 0;
  for (std::int64_t c = 0; c < d; ++c) s += double(a[c]) * double(b[c]);
  return s;
}

}  // namespace

reference_grads reference_softmax_backward(const host_inputs& in, std::span<const std::int64_t> q_rows,
                                           std::span<const std::int64_t> kv_rows) {
  const problem& p = in.p;
  if (static_cast<std::int64_t>(in.d_o.size()) != p.q_elems())
    throw input_error(fmt::format("backward reference: dO has {} values, expected {}", in.d_o.size(), p.q_elems()));
  const std::int64_t d = p.d;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  const float* q = in.q.data();
  const float* k = in.k.data();
  const float* v = in.v.data();
  const float* d_o = in.d_o.data();
  auto q_at = [&](std::int64_t b, std::int64_t h, std::int64_t i) { return ((b * p.H + h) * p.Nq + i) * d; };
  auto kv_at = [&](std::int64_t b, std::int64_t h, std::int64_t j) {
    return ((b * p.Hkv + p.kv_head(h)) * p.Nkv + j) * d;
  };
  auto score = [&](std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t j) {
    return dot(q + q_at(b, h, i), k + kv_at(b, h, j), d) * scale;
  };
  // Threads only for large problems: a parallel region costs more than a small problem (under
  // load, spinning OpenMP threads made the unit tests' ~700 small backwards take 12 s, not 0.5 s).
  const bool parallel = p.rows() * p.Nkv * d >= (std::int64_t{1} << 20);
  // Per query row: lse and D = dO . O, O in fp64.
  std::vector<double> lse(p.rows()), D(p.rows());
#pragma omp parallel for schedule(dynamic, 4) if (parallel)
  for (std::int64_t r = 0; r < p.rows(); ++r) {
    const std::int64_t b = r / (p.H * p.Nq), h = (r / p.Nq) % p.H, i = r % p.Nq;
    double m = neg_inf;
    for (std::int64_t j = 0; j < p.Nkv; ++j)
      if (is_visible(p, h, i, j)) m = std::max(m, score(b, h, i, j));
    if (m == neg_inf) {
      lse[r] = neg_inf;
      D[r] = 0;
      continue;
    }
    std::vector<double> o(d, 0.0);
    double l = 0;
    for (std::int64_t j = 0; j < p.Nkv; ++j) {
      if (!is_visible(p, h, i, j)) continue;
      const double w = std::exp(score(b, h, i, j) - m);
      l += w;
      for (std::int64_t c = 0; c < d; ++c) o[c] += w * v[kv_at(b, h, j) + c];
    }
    lse[r] = m + std::log(l);
    double s = 0;
    for (std::int64_t c = 0; c < d; ++c) s += o[c] / l * d_o[q_at(b, h, i) + c];
    D[r] = s;
  }
  // The gradient of score s_ij: P_ij (dP_ij - D_i), with P and dP of visible pairs.
  auto pair = [&](std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t j, double& prob, double& ds) {
    const std::int64_t r = (b * p.H + h) * p.Nq + i;
    prob = std::exp(score(b, h, i, j) - lse[r]);
    ds = prob * (dot(d_o + q_at(b, h, i), v + kv_at(b, h, j), d) - D[r]);
  };
  const std::int64_t nq = static_cast<std::int64_t>(q_rows.size()), nk = static_cast<std::int64_t>(kv_rows.size());
  reference_grads g{std::vector<double>(nq * d, 0.0), std::vector<double>(nk * d, 0.0),
                    std::vector<double>(nk * d, 0.0)};
#pragma omp parallel for schedule(dynamic, 4) if (parallel)
  for (std::int64_t x = 0; x < nq; ++x) {
    const std::int64_t r = q_rows[x], b = r / (p.H * p.Nq), h = (r / p.Nq) % p.H, i = r % p.Nq;
    if (lse[r] == neg_inf) continue;
    double* dq = g.dq.data() + x * d;
    for (std::int64_t j = 0; j < p.Nkv; ++j) {
      if (!is_visible(p, h, i, j)) continue;
      double prob, ds;
      pair(b, h, i, j, prob, ds);
      for (std::int64_t c = 0; c < d; ++c) dq[c] += scale * ds * k[kv_at(b, h, j) + c];
    }
  }
#pragma omp parallel for schedule(dynamic, 4) if (parallel)
  for (std::int64_t x = 0; x < nk; ++x) {
    const std::int64_t r = kv_rows[x], b = r / (p.Hkv * p.Nkv), hkv = (r / p.Nkv) % p.Hkv, j = r % p.Nkv;
    double* dk = g.dk.data() + x * d;
    double* dv = g.dv.data() + x * d;
    for (std::int64_t h = hkv * p.group(); h < (hkv + 1) * p.group(); ++h)
      for (std::int64_t i = 0; i < p.Nq; ++i) {
        if (!is_visible(p, h, i, j)) continue;
        double prob, ds;
        pair(b, h, i, j, prob, ds);
        for (std::int64_t c = 0; c < d; ++c) {
          dk[c] += scale * ds * q[q_at(b, h, i) + c];
          dv[c] += prob * d_o[q_at(b, h, i) + c];
        }
      }
  }
  return g;
}

}  // namespace attnbench

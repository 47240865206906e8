#include "kernels/reference/backward_reference.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/mask.hpp"

namespace attnbench {

namespace {

constexpr double neg_inf = -std::numeric_limits<double>::infinity();

// Four partial sums: one chain waits on the fp64 add's latency each step; at N 8k, d 64 the
// statistics of every query row took 14 s on the H200 machine's 16 cores with one chain.
template <class A, class B>
double dot(const A* a, const B* b, std::int64_t d) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  std::int64_t c = 0;
  for (; c + 4 <= d; c += 4) {
    s0 += double(a[c]) * double(b[c]);
    s1 += double(a[c + 1]) * double(b[c + 1]);
    s2 += double(a[c + 2]) * double(b[c + 2]);
    s3 += double(a[c + 3]) * double(b[c + 3]);
  }
  for (; c < d; ++c) s0 += double(a[c]) * double(b[c]);
  return (s0 + s1) + (s2 + s3);
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
  // lse and D = dO . O (O in fp64, each score computed once) of the query rows the requested
  // rows need: each sampled query row, and every query row of a sampled key row's group.
  std::vector<std::uint8_t> needed(static_cast<std::size_t>(p.rows()), 0);
  for (const std::int64_t r : q_rows) needed[static_cast<std::size_t>(r)] = 1;
  for (const std::int64_t r : kv_rows) {
    const std::int64_t b = r / (p.Hkv * p.Nkv), hkv = (r / p.Nkv) % p.Hkv;
    for (std::int64_t h = hkv * p.group(); h < (hkv + 1) * p.group(); ++h)
      std::fill_n(needed.begin() + (b * p.H + h) * p.Nq, p.Nq, std::uint8_t{1});
  }
  std::vector<double> lse(p.rows(), neg_inf), D(p.rows(), 0.0);
#pragma omp parallel if (parallel)
  {
    std::vector<double> s(static_cast<std::size_t>(p.Nkv)), o(static_cast<std::size_t>(d));
#pragma omp for schedule(dynamic, 4)
    for (std::int64_t r = 0; r < p.rows(); ++r) {
      if (!needed[static_cast<std::size_t>(r)]) continue;
      const std::int64_t b = r / (p.H * p.Nq), h = (r / p.Nq) % p.H, i = r % p.Nq;
      double m = neg_inf;
      for (std::int64_t j = 0; j < p.Nkv; ++j) {
        s[j] = is_visible(p, h, i, j) ? score(b, h, i, j) : neg_inf;
        m = std::max(m, s[j]);
      }
      if (m == neg_inf) continue;
      std::fill(o.begin(), o.end(), 0.0);
      double l = 0;
      for (std::int64_t j = 0; j < p.Nkv; ++j) {
        if (s[j] == neg_inf) continue;
        const double w = std::exp(s[j] - m);
        l += w;
        const float* vj = v + kv_at(b, h, j);
        for (std::int64_t c = 0; c < d; ++c) o[c] += w * vj[c];
      }
      lse[r] = m + std::log(l);
      // D in dot's order, as dP: a single visible key gives dP - D = 0 exactly.
      for (std::int64_t c = 0; c < d; ++c) o[c] /= l;
      D[r] = dot(o.data(), d_o + q_at(b, h, i), d);
    }
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

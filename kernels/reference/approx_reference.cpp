// fp64 references of the approximations (attention_reference.hpp): plain loops over the
// same seeded parameters the kernels use (approx_params.hpp), no tiling.
#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#include "core/mask.hpp"
#include "kernels/reference/approx_params.hpp"
#include "kernels/reference/attention_reference.hpp"

namespace attnbench {

namespace {

struct row_index {
  std::int64_t b, h, i;
};
row_index split_row(const problem& p, std::int64_t r) { return {r / (p.H * p.Nq), (r / p.Nq) % p.H, r % p.Nq}; }

void require_no_mask(const problem& p, std::string_view what) {
  if (!p.mask.is_none())
    throw input_error(fmt::format("{} mixes every key position; mask '{}' cannot apply", what, to_string(p.mask)));
}

// softmax(q K^T * scale) V over n keys in fp64 (K, V row-major [n x d]); returns the lse.
double softmax_row(const float* q, const double* k, const double* v, std::int64_t n, std::int64_t d, double* o) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  std::vector<double> s(static_cast<std::size_t>(n));
  double m = -std::numeric_limits<double>::infinity();
  for (std::int64_t j = 0; j < n; ++j) {
    double dot = 0;
    for (std::int64_t c = 0; c < d; ++c) dot += double(q[c]) * k[j * d + c];
    s[j] = dot * scale;
    m = std::max(m, s[j]);
  }
  double l = 0;
  for (std::int64_t j = 0; j < n; ++j) {
    const double w = std::exp(s[j] - m);
    l += w;
    for (std::int64_t c = 0; c < d; ++c) o[c] += w * v[j * d + c];
  }
  for (std::int64_t c = 0; c < d; ++c) o[c] /= l;
  return m + std::log(l);
}

}  // namespace

reference_rows reference_linformer(const host_inputs& in, std::span<const std::int64_t> rows) {
  const problem& p = in.p;
  require_no_mask(p, "Linformer's E^T K");
  const std::int64_t d = p.d, n = static_cast<std::int64_t>(rows.size()), k = linformer_k(p);
  const linformer_projections pr = make_linformer_projections(p.Nkv, k);
  // K-bar and V-bar of each (batch, KV head) the rows need: [k x d] each.
  std::map<std::int64_t, std::size_t> slot_of;
  for (std::int64_t r = 0; r < n; ++r) {
    const auto [b, h, i] = split_row(p, rows[r]);
    slot_of.emplace(b * p.Hkv + p.kv_head(h), slot_of.size());
  }
  std::vector<std::int64_t> heads(slot_of.size());
  for (const auto& [bh, s] : slot_of) heads[s] = bh;
  std::vector<double> kbar(heads.size() * k * d, 0.0), vbar(heads.size() * k * d, 0.0);
#pragma omp parallel for schedule(dynamic, 1)
  for (std::int64_t s = 0; s < static_cast<std::int64_t>(heads.size()); ++s) {
    const float* ks = in.k.data() + heads[s] * p.Nkv * d;
    const float* vs = in.v.data() + heads[s] * p.Nkv * d;
    double* kb = kbar.data() + s * k * d;
    double* vb = vbar.data() + s * k * d;
    for (std::int64_t j = 0; j < p.Nkv; ++j)
      for (std::int64_t l = 0; l < k; ++l) {
        const double e = pr.e[j * k + l], f = pr.f[j * k + l];
        for (std::int64_t c = 0; c < d; ++c) {
          kb[l * d + c] += e * ks[j * d + c];
          vb[l * d + c] += f * vs[j * d + c];
        }
      }
  }
  reference_rows out{std::vector<double>(n * d, 0.0), std::vector<double>(n)};
#pragma omp parallel for schedule(dynamic, 4)
  for (std::int64_t r = 0; r < n; ++r) {
    const auto [b, h, i] = split_row(p, rows[r]);
    const std::size_t s = slot_of.at(b * p.Hkv + p.kv_head(h));
    const float* q = in.q.data() + ((b * p.H + h) * p.Nq + i) * d;
    out.lse[r] = softmax_row(q, kbar.data() + s * k * d, vbar.data() + s * k * d, k, d, out.o.data() + r * d);
  }
  return out;
}

// phi(x) * sqrt(m) = exp(omega^T x~ - |x~|^2 / 2), x~ = d^-1/4 x, in fp64.
void performer_phi(const float* x, const std::vector<float>& w, std::int64_t m, std::int64_t d, double* out) {
  const double c = std::pow(static_cast<double>(d), -0.25);
  double sq = 0;
  for (std::int64_t x0 = 0; x0 < d; ++x0) sq += c * x[x0] * c * x[x0];
  for (std::int64_t f = 0; f < m; ++f) {
    double u = 0;
    for (std::int64_t x0 = 0; x0 < d; ++x0) u += double(w[f * d + x0]) * c * x[x0];
    out[f] = std::exp(u - sq / 2);
  }
}

reference_rows reference_performer(const host_inputs& in, std::span<const std::int64_t> rows) {
  const problem& p = in.p;
  if (p.mask.global != 0 || p.mask.kind == mask_kind::local || p.mask.has_sparse())
    throw input_error(fmt::format("Performer supports masks none and causal, not '{}'", to_string(p.mask)));
  const std::int64_t d = p.d, n = static_cast<std::int64_t>(rows.size()), m = performer_features(p);
  const std::vector<float> w = make_performer_features(m, d);
  std::map<std::int64_t, std::size_t> slot_of;
  for (std::int64_t r = 0; r < n; ++r) {
    const auto [b, h, i] = split_row(p, rows[r]);
    slot_of.emplace(b * p.Hkv + p.kv_head(h), slot_of.size());
  }
  std::vector<std::int64_t> heads(slot_of.size());
  for (const auto& [bh, s] : slot_of) heads[s] = bh;
  std::vector<double> phik(heads.size() * p.Nkv * m);  // phi(k_j) * sqrt(m) of each needed KV head
#pragma omp parallel for schedule(dynamic, 16) collapse(2)
  for (std::int64_t s = 0; s < static_cast<std::int64_t>(heads.size()); ++s)
    for (std::int64_t j = 0; j < p.Nkv; ++j)
      performer_phi(in.k.data() + (heads[s] * p.Nkv + j) * d, w, m, d, phik.data() + (s * p.Nkv + j) * m);
  reference_rows out{std::vector<double>(n * d, 0.0), {}};
#pragma omp parallel for schedule(dynamic, 4)
  for (std::int64_t r = 0; r < n; ++r) {
    const auto [b, h, i] = split_row(p, rows[r]);
    const std::size_t s = slot_of.at(b * p.Hkv + p.kv_head(h));
    std::vector<double> fq(static_cast<std::size_t>(m));
    performer_phi(in.q.data() + ((b * p.H + h) * p.Nq + i) * d, w, m, d, fq.data());
    const float* v = in.v.data() + heads[s] * p.Nkv * d;
    double* o = out.o.data() + r * d;
    double den = 0;
    for (std::int64_t j = 0; j < p.Nkv; ++j) {
      if (!is_visible(p, i, j)) continue;
      const double* fk = phik.data() + (s * p.Nkv + j) * m;
      double wt = 0;
      for (std::int64_t f = 0; f < m; ++f) wt += fq[f] * fk[f];
      den += wt;
      for (std::int64_t c = 0; c < d; ++c) o[c] += wt * double(v[j * d + c]);
    }
    if (den > 0)
      for (std::int64_t c = 0; c < d; ++c) o[c] /= den;
  }
  return out;
}

reference_rows reference_additive(const host_inputs& in, std::span<const std::int64_t> rows) {
  const problem& p = in.p;
  const std::int64_t d = p.d, n = static_cast<std::int64_t>(rows.size()), a = additive_width(p);
  const additive_params w = make_additive_params(a, d);
  auto project = [&](const std::vector<float>& m, const float* x, double* out) {
    for (std::int64_t c = 0; c < a; ++c) {
      double s = 0;
      for (std::int64_t x0 = 0; x0 < d; ++x0) s += double(m[c * d + x0]) * x[x0];
      out[c] = s;
    }
  };
  reference_rows out{std::vector<double>(n * d, 0.0), std::vector<double>(n)};
#pragma omp parallel for schedule(dynamic, 4)
  for (std::int64_t r = 0; r < n; ++r) {
    const auto [b, h, i] = split_row(p, rows[r]);
    const std::int64_t kv = (b * p.Hkv + p.kv_head(h)) * p.Nkv * d;
    std::vector<double> qp(a), kp(a), s(p.Nkv);
    project(w.w, in.q.data() + ((b * p.H + h) * p.Nq + i) * d, qp.data());
    double m = -std::numeric_limits<double>::infinity();
    for (std::int64_t j = 0; j < p.Nkv; ++j) {
      if (!is_visible(p, h, i, j)) continue;
      project(w.u, in.k.data() + kv + j * d, kp.data());
      double e = 0;
      for (std::int64_t c = 0; c < a; ++c) e += double(w.v[c]) * std::tanh(qp[c] + kp[c]);
      s[j] = e;
      m = std::max(m, e);
    }
    if (m == -std::numeric_limits<double>::infinity()) {  // no visible key: zeros
      out.lse[r] = m;
      continue;
    }
    double l = 0;
    double* o = out.o.data() + r * d;
    for (std::int64_t j = 0; j < p.Nkv; ++j) {
      if (!is_visible(p, h, i, j)) continue;
      const double wt = std::exp(s[j] - m);
      l += wt;
      for (std::int64_t c = 0; c < d; ++c) o[c] += wt * double(in.v[kv + j * d + c]);
    }
    for (std::int64_t c = 0; c < d; ++c) o[c] /= l;
    out.lse[r] = m + std::log(l);
  }
  return out;
}

namespace {

// Each cluster's top w of the n rows of x (ranked by fp64 x . mu, ties to the lower position),
// as sorted positions: [c][w].
std::vector<std::vector<std::int64_t>> route(const float* x, std::int64_t n, std::int64_t d,
                                             const std::vector<float>& mu, std::int64_t c, std::int64_t w) {
  std::vector<std::vector<std::int64_t>> out(static_cast<std::size_t>(c));
  std::vector<double> s(static_cast<std::size_t>(n));
  for (std::int64_t cl = 0; cl < c; ++cl) {
    for (std::int64_t t = 0; t < n; ++t) {
      double dot = 0;
      for (std::int64_t e = 0; e < d; ++e) dot += double(x[t * d + e]) * double(mu[cl * d + e]);
      s[t] = dot;
    }
    std::vector<std::int64_t> order(static_cast<std::size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return s[a] > s[b]; });
    order.resize(static_cast<std::size_t>(w));
    std::sort(order.begin(), order.end());
    out[cl] = std::move(order);
  }
  return out;
}

}  // namespace

reference_rows reference_routing(const host_inputs& in, std::span<const std::int64_t> rows) {
  const problem& p = in.p;
  if (p.mask.global != 0 || p.mask.kind == mask_kind::local || p.mask.has_sparse())
    throw input_error(
        fmt::format("the Routing Transformer supports masks none and causal, not '{}'", to_string(p.mask)));
  const std::int64_t d = p.d, n = static_cast<std::int64_t>(rows.size());
  const routing_shape rs = routing_shape_of(p);
  const std::vector<float> mu = make_routing_centroids(rs.clusters, d);
  std::map<std::int64_t, std::vector<std::vector<std::int64_t>>> keys_of, queries_of;  // by (b, KV head), (b, h)
  for (std::int64_t r = 0; r < n; ++r) {
    const auto [b, h, i] = split_row(p, rows[r]);
    keys_of.emplace(b * p.Hkv + p.kv_head(h), std::vector<std::vector<std::int64_t>>{});
    queries_of.emplace(b * p.H + h, std::vector<std::vector<std::int64_t>>{});
  }
  for (auto& [bh, lists] : keys_of) lists = route(in.k.data() + bh * p.Nkv * d, p.Nkv, d, mu, rs.clusters, rs.wk);
  for (auto& [bh, lists] : queries_of) lists = route(in.q.data() + bh * p.Nq * d, p.Nq, d, mu, rs.clusters, rs.wq);
  reference_rows out{std::vector<double>(n * d, 0.0), {}};
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
#pragma omp parallel for schedule(dynamic, 4)
  for (std::int64_t r = 0; r < n; ++r) {
    const auto [b, h, i] = split_row(p, rows[r]);
    const auto& qlists = queries_of.at(b * p.H + h);
    const auto& klists = keys_of.at(b * p.Hkv + p.kv_head(h));
    const float* q = in.q.data() + ((b * p.H + h) * p.Nq + i) * d;
    const float* k = in.k.data() + (b * p.Hkv + p.kv_head(h)) * p.Nkv * d;
    const float* v = in.v.data() + (b * p.Hkv + p.kv_head(h)) * p.Nkv * d;
    double* o = out.o.data() + r * d;
    std::int64_t clusters = 0;
    std::vector<double> oc(static_cast<std::size_t>(d)), s;
    for (std::int64_t cl = 0; cl < rs.clusters; ++cl) {
      if (!std::binary_search(qlists[cl].begin(), qlists[cl].end(), i)) continue;
      std::vector<std::int64_t> seen;
      for (const std::int64_t j : klists[cl])
        if (is_visible(p, h, i, j)) seen.push_back(j);
      if (seen.empty()) continue;  // routed here, but sees none of the cluster's keys
      s.assign(seen.size(), 0.0);
      double m = -std::numeric_limits<double>::infinity();
      for (std::size_t t = 0; t < seen.size(); ++t) {
        double dot = 0;
        for (std::int64_t e = 0; e < d; ++e) dot += double(q[e]) * double(k[seen[t] * d + e]);
        s[t] = dot * scale;
        m = std::max(m, s[t]);
      }
      std::fill(oc.begin(), oc.end(), 0.0);
      double l = 0;
      for (std::size_t t = 0; t < seen.size(); ++t) {
        const double wt = std::exp(s[t] - m);
        l += wt;
        for (std::int64_t e = 0; e < d; ++e) oc[e] += wt * double(v[seen[t] * d + e]);
      }
      for (std::int64_t e = 0; e < d; ++e) o[e] += oc[e] / l;
      ++clusters;
    }
    if (clusters > 0)
      for (std::int64_t e = 0; e < d; ++e) o[e] /= static_cast<double>(clusters);
  }
  return out;
}

}  // namespace attnbench

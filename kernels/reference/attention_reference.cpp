#include "kernels/reference/attention_reference.hpp"

#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <stdexcept>

#include "core/mask.hpp"

namespace attnbench {

namespace {

struct row_index {
  std::int64_t b, h, i;
};

row_index split_row(const problem& p, std::int64_t r) { return {r / (p.H * p.Nq), (r / p.Nq) % p.H, r % p.Nq}; }

double phi_elu1(double x) { return x > 0 ? x + 1.0 : std::exp(x); }

}  // namespace

reference_rows reference_softmax(const host_inputs& in, std::span<const std::int64_t> rows) {
  const problem& p = in.p;
  const std::int64_t d = p.d, n = static_cast<std::int64_t>(rows.size());
  reference_rows out{std::vector<double>(n * d, 0.0), std::vector<double>(n)};
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
#pragma omp parallel for schedule(dynamic, 4)
  for (std::int64_t r = 0; r < n; ++r) {
    const auto [b, h, i] = split_row(p, rows[r]);
    const float* q = in.q.data() + ((b * p.H + h) * p.Nq + i) * d;
    const std::int64_t kv = (b * p.Hkv + p.kv_head(h)) * p.Nkv * d;
    std::vector<double> s(p.Nkv);
    double m = -std::numeric_limits<double>::infinity();
    for (std::int64_t j = 0; j < p.Nkv; ++j) {
      if (!is_visible(p, h, i, j)) continue;
      double dot = 0;
      for (std::int64_t c = 0; c < d; ++c) dot += double(q[c]) * double(in.k[kv + j * d + c]);
      s[j] = dot * scale;
      m = std::max(m, s[j]);
    }
    double* o = out.o.data() + r * d;
    if (m == -std::numeric_limits<double>::infinity()) {  // no visible key: zeros
      out.lse[r] = m;
      continue;
    }
    double l = 0;
    for (std::int64_t j = 0; j < p.Nkv; ++j) {
      if (!is_visible(p, h, i, j)) continue;
      const double w = std::exp(s[j] - m);
      l += w;
      for (std::int64_t c = 0; c < d; ++c) o[c] += w * double(in.v[kv + j * d + c]);
    }
    for (std::int64_t c = 0; c < d; ++c) o[c] /= l;
    out.lse[r] = m + std::log(l);
  }
  return out;
}

reference_rows reference_linear(const host_inputs& in, std::span<const std::int64_t> rows) {
  const problem& p = in.p;
  if (p.mask.global != 0 || p.mask.kind == mask_kind::local || p.mask.has_sparse())
    throw input_error(fmt::format("linear attention supports masks none and causal, not '{}'", to_string(p.mask)));
  const std::int64_t d = p.d, n = static_cast<std::int64_t>(rows.size());
  reference_rows out{std::vector<double>(n * d, 0.0), {}};
#pragma omp parallel for schedule(dynamic, 4)
  for (std::int64_t r = 0; r < n; ++r) {
    const auto [b, h, i] = split_row(p, rows[r]);
    const float* q = in.q.data() + ((b * p.H + h) * p.Nq + i) * d;
    const std::int64_t kv = (b * p.Hkv + p.kv_head(h)) * p.Nkv * d;
    std::vector<double> fq(d);
    for (std::int64_t c = 0; c < d; ++c) fq[c] = phi_elu1(q[c]);
    // phi(q)^T (sum_j phi(k_j) v_j^T) = sum_j (phi(q) . phi(k_j)) v_j^T: same value,
    // O(Nkv * d) per row instead of O(Nkv * d^2).
    double* o = out.o.data() + r * d;
    double den = 0;
    for (std::int64_t j = 0; j < p.Nkv; ++j) {
      if (!is_visible(p, i, j)) continue;
      double w = 0;
      for (std::int64_t c = 0; c < d; ++c) w += fq[c] * phi_elu1(in.k[kv + j * d + c]);
      den += w;
      for (std::int64_t c = 0; c < d; ++c) o[c] += w * double(in.v[kv + j * d + c]);
    }
    if (den > 0)
      for (std::int64_t c = 0; c < d; ++c) o[c] /= den;
  }
  return out;
}

reference_rows reference_for(attention_math m, const host_inputs& in, std::span<const std::int64_t> rows) {
  switch (m) {
    case attention_math::softmax: return reference_softmax(in, rows);
    case attention_math::linear: return reference_linear(in, rows);
    case attention_math::selective_scan: return reference_selective_scan(in, rows);
    case attention_math::wkv: return reference_wkv(in, rows);
    case attention_math::wkv6: return reference_wkv6(in, rows);
    case attention_math::linformer: return reference_linformer(in, rows);
    case attention_math::performer: return reference_performer(in, rows);
    case attention_math::additive: return reference_additive(in, rows);
    case attention_math::ssd: return reference_ssd(in, rows);
    case attention_math::routing: return reference_routing(in, rows);
  }
  throw std::logic_error("reference_for: unknown attention_math");
}

}  // namespace attnbench

#include "harness/tensors.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <set>

namespace attnbench {

float round_to(dtype t, float x) {
  if (t == dtype::fp32 || !std::isfinite(x)) return x;
  if (t == dtype::bf16) {
    std::uint32_t u = std::bit_cast<std::uint32_t>(x);
    u += 0x7FFFu + ((u >> 16) & 1u);  // round to nearest even on the dropped 16 bits
    return std::bit_cast<float>(u & 0xFFFF0000u);
  }
  // fp16: 10 mantissa bits, exponent range [-14, 15]; subnormals below 2^-14.
  const float a = std::fabs(x);
  if (a >= 65520.0f) return std::copysign(INFINITY, x);
  int e = 0;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  const int exp = std::max(e - 1, -14);
  const float ulp = std::ldexp(1.0f, exp - 10);
  return std::copysign(std::nearbyint(a / ulp) * ulp, x);
}

host_inputs make_inputs(const problem& p, std::uint64_t seed) {
  host_inputs in{p, std::vector<float>(p.q_elems()), std::vector<float>(p.kv_elems()),
                 std::vector<float>(p.kv_elems())};
  std::mt19937_64 gen(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (auto* t : {&in.q, &in.k, &in.v})
    for (float& x : *t) x = round_to(p.type, dist(gen));
  return in;
}

std::vector<std::int64_t> all_rows(const problem& p) {
  std::vector<std::int64_t> rows(p.rows());
  for (std::int64_t r = 0; r < p.rows(); ++r) rows[r] = r;
  return rows;
}

std::vector<std::int64_t> sample_rows(const problem& p, std::int64_t max_rows, std::uint64_t seed) {
  if (p.rows() <= max_rows) return all_rows(p);
  std::set<std::int64_t> picked;
  std::mt19937_64 gen(seed);
  const std::int64_t heads = p.B * p.H;
  const std::int64_t sampled_heads = std::min<std::int64_t>(heads, std::max<std::int64_t>(1, max_rows / 8));
  for (std::int64_t s = 0; s < sampled_heads; ++s) {
    const std::int64_t bh = sampled_heads == heads ? s : std::uniform_int_distribution<std::int64_t>(0, heads - 1)(gen);
    picked.insert(bh * p.Nq);
    picked.insert(bh * p.Nq + p.Nq - 1);
    for (std::int64_t i = 1; i < std::min(p.mask.global, p.Nq - 1) && i < 4; ++i) picked.insert(bh * p.Nq + i);
  }
  std::uniform_int_distribution<std::int64_t> any(0, p.rows() - 1);
  while (static_cast<std::int64_t>(picked.size()) < max_rows) picked.insert(any(gen));
  return {picked.begin(), picked.end()};
}

error_report compare_rows(const problem& p, std::span<const float> o, std::span<const float> lse,
                          std::span<const std::int64_t> rows, std::span<const double> ref_o,
                          std::span<const double> ref_lse) {
  error_report e;
  double num = 0, den = 0, worst = -1;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    for (std::int64_t c = 0; c < p.d; ++c) {
      const double got = o[rows[r] * p.d + c], want = ref_o[r * p.d + c];
      if (!std::isfinite(got)) {
        if (e.nonfinite++ == 0 && e.first_bad_row < 0) e.first_bad_row = rows[r];
        continue;
      }
      const double diff = std::fabs(got - want);
      num += diff * diff;
      den += want * want;
      if (diff > worst) {
        worst = diff;
        if (e.nonfinite == 0) e.first_bad_row = rows[r];
      }
    }
    if (!ref_lse.empty() && !lse.empty()) {
      const double got = lse[rows[r]], want = ref_lse[r];
      if (std::isinf(want) && want < 0) {
        if (!(std::isinf(got) && got < 0)) ++e.nonfinite;  // must report an empty row as -inf
      } else if (!std::isfinite(got)) {
        ++e.nonfinite;
      } else {
        e.lse_max_abs = std::max(e.lse_max_abs, std::fabs(got - want));
      }
    }
  }
  e.max_abs = std::max(worst, 0.0);
  e.rel_l2 = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  if (e.nonfinite > 0) e.rel_l2 = std::numeric_limits<double>::quiet_NaN();
  return e;
}

double sweep_tolerance(dtype t) {
  switch (t) {
    case dtype::fp32: return 1e-4;
    case dtype::fp16: return 5e-3;
    case dtype::bf16: return 3e-2;
  }
  return 0;
}

}  // namespace attnbench

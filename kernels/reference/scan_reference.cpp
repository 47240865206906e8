#include "kernels/reference/scan_reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/reference/scan_parameters.hpp"

namespace attnbench {

namespace {

std::int64_t element(const problem& p, std::int64_t b, std::int64_t h, std::int64_t t, std::int64_t x) {
  return ((b * p.H + h) * p.Nq + t) * p.d + x;
}

double softplus(double v) { return v > 30 ? v : std::log1p(std::exp(v)); }  // e^-30: below fp32's resolution
double silu(double z) { return z / (1.0 + std::exp(-z)); }

// The whole output of head (b, h) up to step last (inclusive), [t][x] in double.
std::vector<double> selective_scan_head(const host_inputs& in, const selective_scan_parameters& s, std::int64_t b,
                                        std::int64_t h, std::int64_t last) {
  const problem& p = in.p;
  const std::int64_t d = p.d, N = p.dstate, L = p.Nkv, per_group = p.H * d / p.ngroups;
  std::vector<double> out((last + 1) * d), state(N);
  for (std::int64_t x = 0; x < d; ++x) {
    const std::int64_t ch = h * d + x, g = ch / per_group;
    std::fill(state.begin(), state.end(), 0.0);
    for (std::int64_t t = 0; t <= last; ++t) {
      const std::int64_t e = element(p, b, h, t, x);
      const double u = in.q[e], dt = softplus(double(in.k[e]) + s.bias[ch]);
      const float* bt = s.b.data() + ((b * p.ngroups + g) * L + t) * N;
      const float* ct = s.c.data() + ((b * p.ngroups + g) * L + t) * N;
      double y = 0;
      for (std::int64_t n = 0; n < N; ++n) {
        state[n] = std::exp(dt * s.a[ch * N + n]) * state[n] + dt * bt[n] * u;
        y += ct[n] * state[n];
      }
      out[t * d + x] = (y + s.skip[ch] * u) * silu(in.v[e]);
    }
  }
  return out;
}

// Mamba-2's SSD recurrence for head (b, h) up to step last (inclusive), [t][x] in double: the
// N x P state S = exp(dt A) S + dt B_t x_t^T, y_t = S^T C_t + D x_t, out = y silu(z_t).
std::vector<double> ssd_head(const host_inputs& in, const ssd_parameters& s, std::int64_t b, std::int64_t h,
                             std::int64_t last) {
  const problem& p = in.p;
  const std::int64_t P = p.d, N = p.dstate, L = p.Nkv, g = h / (p.H / p.ngroups);
  std::vector<double> out((last + 1) * P), state(N * P, 0.0);
  for (std::int64_t t = 0; t <= last; ++t) {
    const double dt = softplus(double(s.dt_raw[(b * p.H + h) * L + t]) + s.bias[h]);
    const double decay = std::exp(dt * s.a[h]);
    const float* bt = s.b.data() + ((b * p.ngroups + g) * L + t) * N;
    const float* ct = s.c.data() + ((b * p.ngroups + g) * L + t) * N;
    const float* xt = in.q.data() + element(p, b, h, t, 0);
    const float* zt = in.v.data() + element(p, b, h, t, 0);
    for (std::int64_t n = 0; n < N; ++n)
      for (std::int64_t x = 0; x < P; ++x) state[n * P + x] = decay * state[n * P + x] + dt * bt[n] * xt[x];
    for (std::int64_t x = 0; x < P; ++x) {
      double y = s.skip[h] * double(xt[x]);
      for (std::int64_t n = 0; n < N; ++n) y += ct[n] * state[n * P + x];
      out[t * P + x] = y * silu(zt[x]);
    }
  }
  return out;
}

// The explicit formula for channel ch at step t.
double wkv_explicit(const host_inputs& in, const wkv_parameters& s, std::int64_t b, std::int64_t h, std::int64_t t,
                    std::int64_t x) {
  const problem& p = in.p;
  const std::int64_t ch = h * p.d + x;
  const double w = s.w[ch];
  const auto exponent = [&](std::int64_t i) {
    const double k = in.k[element(p, b, h, i, x)];
    return i == t ? s.u[ch] + k : double(t - 1 - i) * w + k;
  };
  double m = -std::numeric_limits<double>::infinity();
  for (std::int64_t i = 0; i <= t; ++i) m = std::max(m, exponent(i));
  double num = 0, den = 0;
  for (std::int64_t i = 0; i <= t; ++i) {
    const double e = std::exp(exponent(i) - m);
    num += e * in.v[element(p, b, h, i, x)];
    den += e;
  }
  return num / den;
}

}  // namespace

namespace {

// The rows of a scan computed head by head (head(b, h, last): [t][x] of steps 0 .. last in
// double): each needed head once, up to the last step a row asks for.
template <class head_fn>
reference_rows rows_by_head(const problem& p, std::span<const std::int64_t> rows, head_fn head) {
  const std::int64_t d = p.d, n = static_cast<std::int64_t>(rows.size());
  std::vector<std::int64_t> last(p.B * p.H, -1);
  for (std::int64_t r : rows) last[r / p.Nq] = std::max(last[r / p.Nq], r % p.Nq);
  std::vector<std::vector<double>> heads(p.B * p.H);
#pragma omp parallel for schedule(dynamic, 1)
  for (std::int64_t bh = 0; bh < p.B * p.H; ++bh)
    if (last[bh] >= 0) heads[bh] = head(bh / p.H, bh % p.H, last[bh]);
  reference_rows out{std::vector<double>(n * d), {}};
  for (std::int64_t r = 0; r < n; ++r) {
    const std::int64_t bh = rows[r] / p.Nq, t = rows[r] % p.Nq;
    std::copy_n(heads[bh].data() + t * d, d, out.o.data() + r * d);
  }
  return out;
}

// Every row of such a scan, stored as float.
template <class head_fn>
reference_all_rows all_rows_by_head(const problem& p, head_fn head) {
  reference_all_rows out{std::vector<float>(p.o_elems()), {}};
#pragma omp parallel for schedule(dynamic, 1)
  for (std::int64_t bh = 0; bh < p.B * p.H; ++bh) {
    const std::vector<double> h = head(bh / p.H, bh % p.H, p.Nq - 1);
    std::copy(h.begin(), h.end(), out.o.begin() + bh * p.Nq * p.d);
  }
  return out;
}

}  // namespace

reference_rows reference_selective_scan(const host_inputs& in, std::span<const std::int64_t> rows) {
  const selective_scan_parameters s = make_selective_scan_parameters(in.p);
  return rows_by_head(in.p, rows, [&](std::int64_t b, std::int64_t h, std::int64_t last) {
    return selective_scan_head(in, s, b, h, last);
  });
}

reference_rows reference_ssd(const host_inputs& in, std::span<const std::int64_t> rows) {
  const ssd_parameters s = make_ssd_parameters(in.p);
  return rows_by_head(in.p, rows,
                      [&](std::int64_t b, std::int64_t h, std::int64_t last) { return ssd_head(in, s, b, h, last); });
}

reference_rows reference_wkv(const host_inputs& in, std::span<const std::int64_t> rows) {
  const problem& p = in.p;
  const wkv_parameters s = make_wkv_parameters(p);
  const std::int64_t d = p.d, n = static_cast<std::int64_t>(rows.size());
  reference_rows out{std::vector<double>(n * d), {}};
#pragma omp parallel for schedule(dynamic, 4)
  for (std::int64_t r = 0; r < n; ++r) {
    const std::int64_t bh = rows[r] / p.Nq, t = rows[r] % p.Nq;
    for (std::int64_t x = 0; x < d; ++x) out.o[r * d + x] = wkv_explicit(in, s, bh / p.H, bh % p.H, t, x);
  }
  return out;
}

reference_rows reference_wkv6(const host_inputs& in, std::span<const std::int64_t> rows) {
  const problem& p = in.p;
  const wkv6_parameters s = make_wkv6_parameters(p);
  const std::int64_t d = p.d, n = static_cast<std::int64_t>(rows.size());
  reference_rows out{std::vector<double>(n * d), {}};
#pragma omp parallel for schedule(dynamic, 4)
  for (std::int64_t r = 0; r < n; ++r) {
    const std::int64_t bh = rows[r] / p.Nq, t = rows[r] % p.Nq, b = bh / p.H, h = bh % p.H;
    const float* rt = in.q.data() + element(p, b, h, t, 0);
    const float* kt = in.k.data() + element(p, b, h, t, 0);
    double* y = out.o.data() + r * d;
    double bonus = 0;
    for (std::int64_t j = 0; j < d; ++j) bonus += double(rt[j]) * s.u[h * d + j] * kt[j];
    for (std::int64_t i = 0; i < d; ++i) y[i] = bonus * in.v[element(p, b, h, t, i)];
    std::vector<double> decay(d, 1.0);  // prod_{m=s+1}^{t-1} w_m,j
    for (std::int64_t past = t - 1; past >= 0; --past) {
      const std::int64_t e = element(p, b, h, past, 0);
      double c = 0;
      for (std::int64_t j = 0; j < d; ++j) c += double(rt[j]) * decay[j] * in.k[e + j];
      for (std::int64_t i = 0; i < d; ++i) y[i] += c * in.v[e + i];
      for (std::int64_t j = 0; j < d; ++j) decay[j] *= std::exp(-std::exp(double(s.w_raw[e + j])));
    }
  }
  return out;
}

reference_all_rows reference_scan_all_rows(attention_math m, const host_inputs& in) {
  const problem& p = in.p;
  const std::int64_t d = p.d, L = p.Nq;
  reference_all_rows out{std::vector<float>(p.o_elems()), {}};
  if (m == attention_math::selective_scan) {
    const selective_scan_parameters s = make_selective_scan_parameters(p);
    return all_rows_by_head(
        p, [&](std::int64_t b, std::int64_t h, std::int64_t last) { return selective_scan_head(in, s, b, h, last); });
  }
  if (m == attention_math::ssd) {
    const ssd_parameters s = make_ssd_parameters(p);
    return all_rows_by_head(
        p, [&](std::int64_t b, std::int64_t h, std::int64_t last) { return ssd_head(in, s, b, h, last); });
  }
  if (m == attention_math::wkv6) {
    const wkv6_parameters s = make_wkv6_parameters(p);
#pragma omp parallel for schedule(dynamic, 1)
    for (std::int64_t bh = 0; bh < p.B * p.H; ++bh) {
      const std::int64_t b = bh / p.H, h = bh % p.H;
      std::vector<double> state(d * d, 0.0);  // [key channel j][value channel i]
      for (std::int64_t t = 0; t < L; ++t) {
        const std::int64_t e = element(p, b, h, t, 0);
        for (std::int64_t i = 0; i < d; ++i) {
          double y = 0;
          for (std::int64_t j = 0; j < d; ++j)
            y += double(in.q[e + j]) * (s.u[h * d + j] * double(in.k[e + j]) * in.v[e + i] + state[j * d + i]);
          out.o[e + i] = static_cast<float>(y);
        }
        for (std::int64_t j = 0; j < d; ++j) {
          const double w = std::exp(-std::exp(double(s.w_raw[e + j])));
          for (std::int64_t i = 0; i < d; ++i)
            state[j * d + i] = state[j * d + i] * w + double(in.k[e + j]) * in.v[e + i];
        }
      }
    }
    return out;
  }
  const wkv_parameters s = make_wkv_parameters(p);
#pragma omp parallel for schedule(dynamic, 1)
  for (std::int64_t bh = 0; bh < p.B * p.H; ++bh) {
    const std::int64_t b = bh / p.H, h = bh % p.H;
    for (std::int64_t x = 0; x < d; ++x) {
      const double w = s.w[h * d + x], u = s.u[h * d + x];
      double num = 0, den = 0, o = -std::numeric_limits<double>::infinity();  // sums scaled by e^-o
      for (std::int64_t t = 0; t < L; ++t) {
        const std::int64_t e = element(p, b, h, t, x);
        const double k = in.k[e], v = in.v[e];
        double no = std::max(o, u + k);
        double wa = std::exp(o - no), wb = std::exp(u + k - no);
        out.o[e] = static_cast<float>((wa * num + wb * v) / (wa * den + wb));
        no = std::max(w + o, k);
        wa = std::exp(w + o - no);
        wb = std::exp(k - no);
        num = wa * num + wb * v;
        den = wa * den + wb;
        o = no;
      }
    }
  }
  return out;
}

}  // namespace attnbench

#include "kernels/reference/scan_parameters.hpp"

#include <cmath>

namespace attnbench {

namespace {

constexpr std::uint64_t scan_seed = 0x5eed25;

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// B and C of n elements each: 2 unit(tensor, i) - 1, uniform in [-1, 1).
void fill_b_and_c(std::vector<float>& b, std::vector<float>& c, std::int64_t n, std::uint64_t tensor_b,
                  std::uint64_t tensor_c);

}  // namespace

float scan_unit(std::uint64_t tensor, std::uint64_t i) {
  return static_cast<float>(splitmix64(splitmix64(scan_seed ^ tensor) ^ i) >> 40) * 0x1p-24f;
}

selective_scan_parameters make_selective_scan_parameters(const problem& p) {
  const std::int64_t width = p.H * p.d, N = p.dstate, G = p.ngroups, L = p.Nkv;
  selective_scan_parameters s;
  s.a.resize(width * N);
  s.skip.resize(width);
  s.bias.resize(width);
  for (std::int64_t ch = 0; ch < width; ++ch) {
    for (std::int64_t n = 0; n < N; ++n) s.a[ch * N + n] = -static_cast<float>(n + 1);
    s.skip[ch] = 0.5f + scan_unit(2, ch);
    const double dt = std::exp(std::log(1e-3) + double(scan_unit(3, ch)) * std::log(100.0));
    s.bias[ch] = static_cast<float>(dt + std::log(-std::expm1(-dt)));
  }
  fill_b_and_c(s.b, s.c, p.B * G * L * N, 0, 1);
  return s;
}

wkv_parameters make_wkv_parameters(const problem& p) {
  const std::int64_t width = p.H * p.d;
  wkv_parameters s;
  s.w.resize(width);
  s.u.resize(width);
  for (std::int64_t ch = 0; ch < width; ++ch) {
    s.w[ch] = -std::exp(-5.0f + 8.0f * scan_unit(4, ch));
    s.u[ch] = std::log(0.3f) + scan_unit(5, ch) - 0.5f;
  }
  return s;
}

wkv6_parameters make_wkv6_parameters(const problem& p) {
  const std::int64_t width = p.H * p.d;
  wkv6_parameters s;
  s.w_raw.resize(p.q_elems());
  for (std::int64_t i = 0; i < p.q_elems(); ++i) {
    const std::int64_t ch = (i / (p.Nq * p.d)) % p.H * p.d + i % p.d;
    s.w_raw[i] = -6.0f + 5.0f * scan_unit(6, ch) + scan_unit(7, i) - 0.5f;
  }
  s.u.resize(width);
  for (std::int64_t ch = 0; ch < width; ++ch) s.u[ch] = scan_unit(8, ch);
  return s;
}

namespace {

void fill_b_and_c(std::vector<float>& b, std::vector<float>& c, std::int64_t n, std::uint64_t tensor_b,
                  std::uint64_t tensor_c) {
  b.resize(n);
  c.resize(n);
  for (std::int64_t i = 0; i < n; ++i) {
    b[i] = 2.0f * scan_unit(tensor_b, i) - 1.0f;
    c[i] = 2.0f * scan_unit(tensor_c, i) - 1.0f;
  }
}

}  // namespace

ssd_parameters make_ssd_parameters(const problem& p) {
  const std::int64_t H = p.H, N = p.dstate, G = p.ngroups, L = p.Nkv;
  ssd_parameters s;
  s.a.resize(H);
  s.skip.resize(H);
  s.bias.resize(H);
  for (std::int64_t h = 0; h < H; ++h) {
    s.a[h] = -(1.0f + 15.0f * scan_unit(9, h));
    s.skip[h] = 0.5f + scan_unit(10, h);
    const double dt = std::exp(std::log(1e-3) + double(scan_unit(11, h)) * std::log(100.0));
    s.bias[h] = static_cast<float>(dt + std::log(-std::expm1(-dt)));
  }
  s.dt_raw.resize(p.B * H * L);
  for (std::int64_t i = 0; i < p.B * H * L; ++i) s.dt_raw[i] = scan_unit(12, i) - 0.5f;
  fill_b_and_c(s.b, s.c, p.B * G * L * N, 13, 14);
  return s;
}

}  // namespace attnbench

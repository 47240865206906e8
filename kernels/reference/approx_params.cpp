#include "kernels/reference/approx_params.hpp"

#include <algorithm>
#include <cmath>

namespace attnbench {

namespace {

// splitmix64: a fixed sequence for a seed on every platform.
class splitmix64 {
 public:
  explicit splitmix64(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Standard normal (Box-Muller, the cosine branch only).
  double normal() {
    const double u1 = 1.0 - uniform(), u2 = uniform();  // u1 in (0, 1]
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  std::uint64_t s_;
};

constexpr std::uint64_t linformer_e_seed = 0x4c494e46'45000001ull;
constexpr std::uint64_t linformer_f_seed = 0x4c494e46'46000002ull;
constexpr std::uint64_t performer_seed = 0x50455246'4f524d01ull;
constexpr std::uint64_t additive_seed = 0x41444449'54495601ull;
constexpr std::uint64_t routing_seed = 0x524f5554'494e4701ull;

std::vector<float> uniform_matrix(std::int64_t n, std::int64_t k, std::uint64_t seed) {
  splitmix64 g(seed);
  const double bound = 1.0 / std::sqrt(static_cast<double>(k));
  std::vector<float> m(static_cast<std::size_t>(n * k));
  for (float& x : m) x = static_cast<float>(bound * (2.0 * g.uniform() - 1.0));
  return m;
}

}  // namespace

std::int64_t linformer_k(const problem& p) { return std::min(linformer_default_k, p.Nkv); }

linformer_projections make_linformer_projections(std::int64_t n, std::int64_t k) {
  return {n, k, uniform_matrix(n, k, linformer_e_seed), uniform_matrix(n, k, linformer_f_seed)};
}

std::int64_t performer_features(const problem&) { return performer_default_features; }

std::vector<float> make_performer_features(std::int64_t m, std::int64_t d) {
  splitmix64 g(performer_seed);
  std::vector<double> w(static_cast<std::size_t>(m * d));
  for (std::int64_t b0 = 0; b0 < m; b0 += d) {  // one block of up to d orthonormal rows
    const std::int64_t rows = std::min(d, m - b0);
    std::vector<double> blk(static_cast<std::size_t>(d * d));
    for (double& x : blk) x = g.normal();
    for (std::int64_t r = 0; r < rows; ++r) {  // modified Gram-Schmidt
      double* v = blk.data() + r * d;
      for (std::int64_t q = 0; q < r; ++q) {
        const double* u = blk.data() + q * d;
        double dot = 0;
        for (std::int64_t c = 0; c < d; ++c) dot += u[c] * v[c];
        for (std::int64_t c = 0; c < d; ++c) v[c] -= dot * u[c];
      }
      double nrm = 0;
      for (std::int64_t c = 0; c < d; ++c) nrm += v[c] * v[c];
      nrm = std::sqrt(nrm);
      for (std::int64_t c = 0; c < d; ++c) v[c] /= nrm;
      std::copy_n(v, d, w.data() + (b0 + r) * d);
    }
  }
  std::vector<float> out(w.size());
  for (std::int64_t f = 0; f < m; ++f) {  // row norms of a Gaussian matrix
    double nrm = 0;
    for (std::int64_t c = 0; c < d; ++c) {
      const double x = g.normal();
      nrm += x * x;
    }
    nrm = std::sqrt(nrm);
    for (std::int64_t c = 0; c < d; ++c) out[f * d + c] = static_cast<float>(nrm * w[f * d + c]);
  }
  return out;
}

std::int64_t additive_width(const problem& p) { return p.d; }

additive_params make_additive_params(std::int64_t a, std::int64_t d) {
  // uniform_matrix(n, k) draws with bound 1/sqrt(k): W and U are [a x d], v is [1 x a].
  return {a, d, uniform_matrix(a, d, additive_seed), uniform_matrix(a, d, additive_seed + 1),
          uniform_matrix(1, a, additive_seed + 2)};
}

routing_shape routing_shape_of(const problem& p) {
  const std::int64_t c = std::max<std::int64_t>(1, std::llround(std::sqrt(static_cast<double>(p.Nkv))));
  return {c, (p.Nq + c - 1) / c, (p.Nkv + c - 1) / c};
}

std::vector<float> make_routing_centroids(std::int64_t c, std::int64_t d) {
  splitmix64 g(routing_seed);
  std::vector<float> out(static_cast<std::size_t>(c * d));
  std::vector<double> x(static_cast<std::size_t>(d));
  for (std::int64_t r = 0; r < c; ++r) {
    double nrm = 0;
    for (double& v : x) {
      v = g.normal();
      nrm += v * v;
    }
    nrm = std::sqrt(nrm);
    for (std::int64_t e = 0; e < d; ++e) out[r * d + e] = static_cast<float>(x[e] / nrm);
  }
  return out;
}

}  // namespace attnbench

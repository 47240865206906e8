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

 private:
  std::uint64_t s_;
};

constexpr std::uint64_t linformer_e_seed = 0x4c494e46'45000001ull;
constexpr std::uint64_t linformer_f_seed = 0x4c494e46'46000002ull;

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

}  // namespace attnbench

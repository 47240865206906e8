#include "kernels/cpu/exp_throughput.hpp"

#include <cmath>
#include <omp.h>
#include <vector>

#include "kernels/cpu/exp_approx.hpp"
#include "kernels/cpu/tile_gemm.hpp"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define ATTNBENCH_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define ATTNBENCH_CLONES
#endif

namespace attnbench::cpu {

float exp_chain_start(int lane) { return -0.05f - 0.9f * static_cast<float>(lane) / exp_chain_lanes; }

namespace {

// Without AVX-512: the scalar exp_approx over the lanes, vectorised by the compiler as the
// kernels' row operations are (cpu_common.cpp).
ATTNBENCH_CLONES void chains_scalar(float* x, std::int64_t steps) {
  for (std::int64_t s = 0; s < steps; ++s) {
#pragma omp simd
    for (int c = 0; c < exp_chain_lanes; ++c) x[c] = -exp_approx(x[c]);
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx512f"))) void chains_avx512(float* x, std::int64_t steps) {
  constexpr int V = exp_chain_lanes / 16;
  __m512 v[V];
  for (int i = 0; i < V; ++i) v[i] = _mm512_loadu_ps(x + 16 * i);
  const __m512 sign = _mm512_set1_ps(-0.0f);
  for (std::int64_t s = 0; s < steps; ++s)
    for (int i = 0; i < V; ++i)
      v[i] = _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(exp_approx16(v[i])), _mm512_castps_si512(sign)));
  for (int i = 0; i < V; ++i) _mm512_storeu_ps(x + 16 * i, v[i]);
}
#endif

}  // namespace

exp_chains_result run_exp_chains(std::int64_t steps, int threads) {
  exp_chains_result r;
  r.threads = threads > 0 ? threads : omp_get_max_threads();
  const bool avx512 = tile_gemm_vectorised();
  r.path = avx512 ? "exp_approx16 (AVX-512)" : "exp_approx (compiler-vectorised)";
  std::vector<float> out(static_cast<std::size_t>(r.threads) * exp_chain_lanes);
#pragma omp parallel num_threads(r.threads)
  {
    alignas(64) float x[exp_chain_lanes];
    for (int c = 0; c < exp_chain_lanes; ++c) x[c] = exp_chain_start(c);
#if defined(__x86_64__) && defined(__GNUC__)
    if (avx512)
      chains_avx512(x, steps);
    else
#endif
      chains_scalar(x, steps);
    const int t = omp_get_thread_num();
    for (int c = 0; c < exp_chain_lanes; ++c) out[static_cast<std::size_t>(t) * exp_chain_lanes + c] = x[c];
  }
  r.exps = static_cast<std::int64_t>(r.threads) * exp_chain_lanes * steps;
  r.first_wrong = exp_chains_first_wrong(out.data(), static_cast<std::int64_t>(out.size()), steps);
  return r;
}

std::int64_t exp_chains_first_wrong(const float* finals, std::int64_t n, std::int64_t steps) {
  // Each lane against its chain on the scalar exp_approx (converged after ~60 steps, so at
  // most 100 are computed here).
  float want[exp_chain_lanes];
  for (int c = 0; c < exp_chain_lanes; ++c) {
    float x = exp_chain_start(c);
    for (std::int64_t s = 0; s < steps && s < 100; ++s) x = -exp_approx(x);
    want[c] = x;
  }
  for (std::int64_t i = 0; i < n; ++i)
    if (!(std::fabs(finals[i] - want[i % exp_chain_lanes]) <= 1e-5f)) return i;
  return -1;
}

}  // namespace attnbench::cpu

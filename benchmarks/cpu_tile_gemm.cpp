// The tile products of the CPU kernels, one thread, GFLOP/s: attnbench's
// tile_gemm (AVX-512 micro-kernels; NN and TN) against cblas_sgemm of the
// linked BLAS (NN and NT, the calls the kernels made before tile_gemm), at
// the tile shapes of flash2 (64x64x64, 128x128x64, 128x128x128, ...). Best of
// 7 batches of ~0.3 GFLOP each; operands stay in L1/L2 as in the kernels.
// Run with OPENBLAS_CORETYPE=SkylakeX|Haswell|... to compare OpenBLAS's
// kernel sets (the first line names the one in use).
//
//     build/bin/cpu_tile_gemm
#include <algorithm>
#include <cblas.h>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "kernels/cpu/tile_gemm.hpp"

extern "C" {
void openblas_set_num_threads(int num_threads);
char* openblas_get_config(void);
char* openblas_get_corename(void);
}

namespace {

template <class F>
double gflops(F&& f, double flops) {
  const int calls = std::max(1, static_cast<int>(3e8 / flops));
  double best = 1e30;
  for (int batch = 0; batch < 7; ++batch) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / calls);
  }
  return flops / best / 1e9;
}

}  // namespace

int main() {
  using namespace attnbench::cpu;
  openblas_set_num_threads(1);
  std::printf("# %s, core %s; tile_gemm: %s; one thread, GFLOP/s\n", openblas_get_config(), openblas_get_corename(),
              tile_products_description().c_str());
  std::printf("%-14s %10s %10s %10s %10s\n", "m x n x k", "tile NN", "tile TN", "cblas NN", "cblas NT");
  const int shapes[][3] = {{64, 64, 64},   {64, 64, 128},   {128, 128, 64}, {128, 128, 128},
                           {256, 256, 64}, {256, 256, 128}, {128, 64, 128}, {64, 128, 128}};
  std::mt19937 gen(1);
  std::uniform_real_distribution<float> u(-1, 1);
  for (const auto& s : shapes) {
    const int m = s[0], n = s[1], k = s[2];
    std::vector<float> a(m * k), b(k * n), c(m * n);
    for (float& x : a) x = u(gen);
    for (float& x : b) x = u(gen);
    const double flops = 2.0 * m * n * k;
    const double nn = gflops([&] { tile_gemm(m, n, k, 1, {a.data(), k, 1}, b.data(), n, c.data(), n, {true}); }, flops);
    const double tn = gflops([&] { tile_gemm(m, n, k, 1, {a.data(), 1, m}, b.data(), n, c.data(), n, {true}); }, flops);
    const double bnn = gflops(
        [&] {
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1, a.data(), k, b.data(), n, 1, c.data(), n);
        },
        flops);
    const double bnt = gflops(
        [&] {  // B as [n x k], the QK^T call
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1, a.data(), k, b.data(), k, 0, c.data(), n);
        },
        flops);
    std::printf("%4dx%4dx%4d %10.1f %10.1f %10.1f %10.1f\n", m, n, k, nn, tn, bnn, bnt);
  }
  return 0;
}

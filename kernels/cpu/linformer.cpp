// linformer (CPU): Linformer (Wang et al. 2020). Idea: attention over n keys is
// approximately attention over k << n mixtures of them, K-bar = E^T K and V-bar = F^T V
// with fixed [n x k] projections E and F (seeded, kernels/reference/approx_params.hpp),
// so the score matrix is Nq x k instead of Nq x Nkv. Changed from flash2: a projection
// pass per (batch, KV head) walks the keys in chunks of Bc, accumulating E_c^T K_c and
// F_c^T V_c in [k x d] tile buffers, and writes K-bar and V-bar (fp32) once; then
// flash2's own loop (flash2_loop.hpp) runs on the reduced problem (Nkv = k, no mask),
// GQA native as in flash2. Non-causal only: every projected key mixes every position.
// Expected bottleneck: the projection products (4 Nkv k d FLOPs per KV head against
// 4 Nq k d per query head for the attention) and, at small d, reading E and F
// (2 Nkv k fp32 per KV head: at k = 256, d = 64, 8x the bytes of K and V).
#include <algorithm>

#include "kernels/cpu/flash2_loop.hpp"
#include "kernels/reference/approx_params.hpp"

namespace attnbench::cpu {

namespace {

class linformer_runner final : public cpu_runner {
 public:
  linformer_runner(const problem& p, bool writes_lse, planted_defect defect)
      : cpu_runner(p, writes_lse),
        reduced_(linformer_reduced_problem(p)),
        proj_(make_linformer_projections(p.Nkv, reduced_.Nkv)),
        kbar_(reduced_.kv_elems()),
        vbar_(reduced_.kv_elems()),
        tiles_(make_kv_tile_list(reduced_, tile_walk::causal_bound)) {
    if (defect == planted_defect::linformer_projection_transposed) {
      // The control of the reference check: E read as E^T (square when Nkv <= 256).
      if (proj_.n != proj_.k) throw std::logic_error("linformer_projection_transposed needs Nkv == k");
      for (std::int64_t j = 0; j < proj_.n; ++j)
        for (std::int64_t l = j + 1; l < proj_.k; ++l) std::swap(proj_.e[j * proj_.k + l], proj_.e[l * proj_.k + j]);
    }
  }

  void run() override {
    reset_counters();
    blas_single_thread blas;
    projection_pass();
    flash2_forward(reduced_, q_.data(), kbar_.data(), vbar_.data(), o_.data(), lse_.data(), bytes_, exps_, tiles_);
  }

 private:
  // Per (batch, KV head): K-bar = sum_c E_c^T K_c, V-bar = sum_c F_c^T V_c over key chunks c.
  void projection_pass() {
    const problem& p = p_;
    const std::int64_t d = p.d, k = proj_.k, nc = num_kv_tiles(p), tasks = p.B * p.Hkv;
    const std::int64_t e_in = dtype_bytes(p.type);
#pragma omp parallel if (worth_threads(p))
    {
      std::vector<float> buf(2 * k * d);
      float* kacc = buf.data();
      float* vacc = kacc + k * d;
#pragma omp for schedule(static)
      for (std::int64_t t = 0; t < tasks; ++t) {
        const std::int64_t b = t / p.Hkv, hkv = t % p.Hkv;
        for (std::int64_t c = 0; c < nc; ++c) {
          const std::int64_t cols = kv_tile_cols(p, c), c0 = c * p.Bc;
          const float beta = c == 0 ? 0.0f : 1.0f;
          const float* ec = read_tile(proj_.e.data() + c0 * k, cols * k, bytes_);
          const float* fc = read_tile(proj_.f.data() + c0 * k, cols * k, bytes_);
          const float* kc = read_tile(k_.data() + kv_offset(p, b, hkv, c0), cols * d, bytes_, e_in);
          const float* vc = read_tile(v_.data() + kv_offset(p, b, hkv, c0), cols * d, bytes_, e_in);
          gemm_tn(k, d, cols, 1.0f, ec, k, kc, d, beta, kacc, d);  // K-bar += E_c^T K_c
          gemm_tn(k, d, cols, 1.0f, fc, k, vc, d, beta, vacc, d);  // V-bar += F_c^T V_c
        }
        store(kbar_.data() + kv_offset(reduced_, b, hkv, 0), kacc, k * d, bytes_);
        store(vbar_.data() + kv_offset(reduced_, b, hkv, 0), vacc, k * d, bytes_);
      }
    }
  }

  problem reduced_;  // Nkv = k, no mask: what flash2 runs
  linformer_projections proj_;
  std::vector<float> kbar_, vbar_;  // [B, Hkv, k, d] fp32 workspace
  kv_tile_list tiles_;
};

}  // namespace

std::unique_ptr<runner> make_linformer_runner(const problem& p, bool writes_lse, planted_defect defect) {
  return std::make_unique<linformer_runner>(p, writes_lse, defect);
}

}  // namespace attnbench::cpu

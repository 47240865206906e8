// naive backward (CPU): the backward of the naive forward as autograd runs an
// unfused attention (PyTorch's math path), every intermediate in global memory.
// Idea: the forward left P = softmax(S) in memory ([B, H, Nq, Nkv] fp32, saved for
// the backward as autograd saves the softmax output); the backward writes
// dP = dO V^T over the array of S (free after the forward), turns it row by row
// into dS = P * (dP - rowsum(P * dP)) in place, then dQ = scale dS K on the
// forward's (query tile, batch, head) grid and dK = scale dS^T Q, dV = P^T dO on a
// (key tile, batch, KV head) grid that sums over the group's query heads (GQA) in
// its tile buffers and writes dK, dV once. Each output has a single writer: no
// races. It executes four of the five products the FLOP convention counts (S is
// not recomputed: P was kept) and no exp. The baseline of the backward ladder.
// Expected bottleneck: memory: dP and dS written and read (16 bytes per pair) and
// P read twice, against 8d FLOPs per pair.
#include <cmath>
#include <vector>

#include "kernels/cpu/backward_runner.hpp"
#include "kernels/cpu/naive_loop.hpp"

namespace attnbench::cpu {

void naive_backward(const problem& p, const float* q, const float* k, const float* v, const float* pm, const float* d_o,
                    float* ds, float* dq, float* dk, float* dv, byte_counter& bytes) {
  const std::int64_t d = p.d, Br = p.Br, Bc = p.Bc, Nkv = p.Nkv;
  const float scale_qk = 1.0f / std::sqrt(static_cast<float>(d));
  const std::int64_t tasks = num_q_tiles(p) * p.B * p.H;
  const auto score_row = [&](std::int64_t b, std::int64_t h, std::int64_t i) {
    return ((b * p.H + h) * p.Nq + i) * Nkv;
  };
  blas_single_thread blas;
#pragma omp parallel if (worth_threads(p))
  {
    std::vector<float> buf(std::max(2 * Br * d + 2 * Bc * d + 2 * Br * Bc, 2 * Nkv));
    // Pass 1: dP = dO V^T.
    naive_rows_times_kv_t(p, d_o, v, 1.0f, false, ds, buf.data(), bytes);
    // Pass 2: dS = P * (dP - rowsum(P * dP)), row by row, in place.
    float* prow = buf.data();
    float* drow = prow + Nkv;
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t t = 0; t < tasks; ++t) {
      const auto [qt, b, h] = qbh_task_of(p, t);
      for (std::int64_t i = qt * Br; i < qt * Br + q_tile_rows(p, qt); ++i) {
        load(prow, pm + score_row(b, h, i), Nkv, bytes);
        load(drow, ds + score_row(b, h, i), Nkv, bytes);
        float dot = 0;
#pragma omp simd reduction(+ : dot)
        for (std::int64_t j = 0; j < Nkv; ++j) dot += prow[j] * drow[j];
#pragma omp simd
        for (std::int64_t j = 0; j < Nkv; ++j) drow[j] = prow[j] * (drow[j] - dot);
        store(ds + score_row(b, h, i), drow, Nkv, bytes);
      }
    }
    // Pass 3: dQ = scale dS K.
    naive_scores_times_kv(p, ds, k, scale_qk, dq, buf.data(), bytes);
    // Pass 4: dK = scale dS^T Q and dV = P^T dO per key tile, summed over the group.
    float* dk_acc = buf.data();
    float* dv_acc = dk_acc + Bc * d;
    float* qs = dv_acc + Bc * d;
    float* do_s = qs + Br * d;
    float* pt = do_s + Br * d;
    float* dt = pt + Br * Bc;
    const std::int64_t kv_tasks = num_kv_tiles(p) * p.B * p.Hkv;
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t t = 0; t < kv_tasks; ++t) {
      const std::int64_t kt = t / (p.B * p.Hkv), b = (t / p.Hkv) % p.B, hkv = t % p.Hkv;
      const std::int64_t cols = kv_tile_cols(p, kt), c0 = kt * Bc;
      std::fill(dk_acc, dk_acc + 2 * Bc * d, 0.0f);
      for (std::int64_t h = hkv * p.group(); h < (hkv + 1) * p.group(); ++h)
        for (std::int64_t qt = 0; qt < num_q_tiles(p); ++qt) {
          const std::int64_t rows = q_tile_rows(p, qt), r0 = qt * Br;
          for (std::int64_t r = 0; r < rows; ++r) {
            load(pt + r * Bc, pm + score_row(b, h, r0 + r) + c0, cols, bytes);
            load(dt + r * Bc, ds + score_row(b, h, r0 + r) + c0, cols, bytes);
          }
          load(qs, q + q_offset(p, b, h, r0), rows * d, bytes);
          load(do_s, d_o + q_offset(p, b, h, r0), rows * d, bytes);
          gemm_tn(cols, d, rows, scale_qk, dt, Bc, qs, d, 1.0f, dk_acc, d);
          gemm_tn(cols, d, rows, 1.0f, pt, Bc, do_s, d, 1.0f, dv_acc, d);
        }
      store(dk + kv_offset(p, b, hkv, c0), dk_acc, cols * d, bytes);
      store(dv + kv_offset(p, b, hkv, c0), dv_acc, cols * d, bytes);
    }
  }
}

namespace {

class naive_backward_runner final : public cpu_backward_runner {
 public:
  naive_backward_runner(const problem& p, bool writes_lse)
      : cpu_backward_runner(p, writes_lse), s_(p.B * p.H * p.Nq * p.Nkv), pm_(s_.size()) {}

 private:
  void forward() override {
    naive_forward(p_, q_.data(), k_.data(), v_.data(), o_.data(), s_.data(), pm_.data(), bytes_, exps_);
  }
  void backward() override {
    naive_backward(p_, q_.data(), k_.data(), v_.data(), pm_.data(), d_o_.data(), s_.data(), dq_.data(), dk_.data(),
                   dv_.data(), bytes_);
  }
  std::vector<float> s_, pm_;  // S (then dP, then dS) and P, [B, H, Nq, Nkv]
};

}  // namespace

std::unique_ptr<runner> make_naive_backward_runner(const problem& p, bool writes_lse) {
  return std::make_unique<naive_backward_runner>(p, writes_lse);
}

}  // namespace attnbench::cpu

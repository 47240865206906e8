// naive (CPU): textbook attention with every intermediate in global memory.
// Idea: pass 1 writes S = QK^T / sqrt(d) (masked entries -inf) as a
// [B, H, Nq, Nkv] fp32 array, pass 2 turns each row of S into P = softmax(S),
// pass 3 computes O = PV. Each pass uses the tile grid of the fused kernels
// (query tile, batch, head) so the traffic is comparable: K and V are read
// once per query tile, S and P are written and read once each. The starting
// point of the ladder; nothing is fused. Expected bottleneck: memory, since
// 16 bytes per (query, key) pair of S/P traffic dwarf the 4d FLOPs per pair
// for small d, and S/P of 2 * 4 * B * H * Nq * Nkv bytes bound the problem
// sizes that fit at all.
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/cpu/naive_loop.hpp"

namespace attnbench::cpu {

void naive_forward(const problem& p, const float* q, const float* k, const float* v, float* o, float* s, float* pm,
                   byte_counter& bytes, exp_counter& exps) {
  const std::int64_t d = p.d, Br = p.Br, Bc = p.Bc, Nkv = p.Nkv;
  const float scale_qk = 1.0f / std::sqrt(static_cast<float>(d));
  const float neg_inf = -std::numeric_limits<float>::infinity();
  const std::int64_t tasks = num_q_tiles(p) * p.B * p.H;
  const auto score_row = [&](std::int64_t b, std::int64_t h, std::int64_t i) {
    return ((b * p.H + h) * p.Nq + i) * Nkv;
  };
  blas_single_thread blas;
#pragma omp parallel if (worth_threads(p))
  {
    std::vector<float> buf(std::max(Br * d + Bc * d + Br * Bc, Nkv));
    // Pass 1: S = scale * Q K^T, masked.
    naive_rows_times_kv_t(p, q, k, scale_qk, true, s, buf.data(), bytes);
    // Pass 2: P = softmax(S) row by row; a row with no visible key is zeros.
    float* row = buf.data();
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t t = 0; t < tasks; ++t) {
      const auto [qt, b, h] = qbh_task_of(p, t);
      for (std::int64_t i = qt * Br; i < qt * Br + q_tile_rows(p, qt); ++i) {
        load(row, s + score_row(b, h, i), Nkv, bytes);
        const float mx = row_max(row, Nkv);
        if (mx == neg_inf) {
          std::fill(row, row + Nkv, 0.0f);
        } else {
          scale(row, Nkv, 1.0f / exp_sub_sum(row, Nkv, mx, exps));
        }
        store(pm + score_row(b, h, i), row, Nkv, bytes);
      }
    }
    // Pass 3: O = P V.
    naive_scores_times_kv(p, pm, v, 1.0f, o, buf.data(), bytes);
  }
}

void naive_rows_times_kv_t(const problem& p, const float* rows_in, const float* kv, float alpha, bool masked,
                           float* scores, float* buf, byte_counter& bytes) {
  const std::int64_t d = p.d, Br = p.Br, Bc = p.Bc;
  const float neg_inf = -std::numeric_limits<float>::infinity();
  float* qs = buf;
  float* ks = qs + Br * d;
  float* st = ks + Bc * d;
#pragma omp for schedule(dynamic, 1)
  for (std::int64_t t = 0; t < num_q_tiles(p) * p.B * p.H; ++t) {
    const auto [qt, b, h] = qbh_task_of(p, t);
    const std::int64_t rows = q_tile_rows(p, qt), r0 = qt * Br, hkv = p.kv_head(h);
    load(qs, rows_in + q_offset(p, b, h, r0), rows * d, bytes);
    for (std::int64_t kt = 0; kt < num_kv_tiles(p); ++kt) {
      const std::int64_t cols = kv_tile_cols(p, kt), c0 = kt * Bc;
      load(ks, kv + kv_offset(p, b, hkv, c0), cols * d, bytes);
      gemm_nt(rows, cols, d, alpha, qs, d, ks, d, 0.0f, st, Bc);
      for (std::int64_t r = 0; r < rows; ++r) {
        if (masked) mask_row(p, r0 + r, c0, st + r * Bc, cols, neg_inf);
        store(scores + ((b * p.H + h) * p.Nq + r0 + r) * p.Nkv + c0, st + r * Bc, cols, bytes);
      }
    }
  }
}

void naive_scores_times_kv(const problem& p, const float* scores, const float* kv, float alpha, float* out, float* buf,
                           byte_counter& bytes) {
  const std::int64_t d = p.d, Br = p.Br, Bc = p.Bc;
  float* acc = buf;
  float* ks = acc + Br * d;
  float* st = ks + Bc * d;
#pragma omp for schedule(dynamic, 1)
  for (std::int64_t t = 0; t < num_q_tiles(p) * p.B * p.H; ++t) {
    const auto [qt, b, h] = qbh_task_of(p, t);
    const std::int64_t rows = q_tile_rows(p, qt), r0 = qt * Br, hkv = p.kv_head(h);
    std::fill(acc, acc + rows * d, 0.0f);
    for (std::int64_t kt = 0; kt < num_kv_tiles(p); ++kt) {
      const std::int64_t cols = kv_tile_cols(p, kt), c0 = kt * Bc;
      for (std::int64_t r = 0; r < rows; ++r)
        load(st + r * Bc, scores + ((b * p.H + h) * p.Nq + r0 + r) * p.Nkv + c0, cols, bytes);
      load(ks, kv + kv_offset(p, b, hkv, c0), cols * d, bytes);
      gemm_nn(rows, d, cols, alpha, st, Bc, ks, d, 1.0f, acc, d);
    }
    store(out + q_offset(p, b, h, r0), acc, rows * d, bytes);
  }
}

namespace {

class naive_runner final : public cpu_runner {
 public:
  naive_runner(const problem& p, bool writes_lse)
      : cpu_runner(p, writes_lse), s_(p.B * p.H * p.Nq * p.Nkv), pm_(s_.size()) {}
  void run() override {
    reset_counters();
    naive_forward(p_, q_.data(), k_.data(), v_.data(), o_.data(), s_.data(), pm_.data(), bytes_, exps_);
  }

 private:
  std::vector<float> s_, pm_;  // S and P, [B, H, Nq, Nkv]
};

}  // namespace

std::unique_ptr<runner> make_naive_runner(const problem& p, bool writes_lse) {
  return std::make_unique<naive_runner>(p, writes_lse);
}

}  // namespace attnbench::cpu

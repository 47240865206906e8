// flash2 backward (CPU): FlashAttention-2's backward loop (Dao 2023, Algorithm 2).
// Idea: a preprocess computes D = rowsum(dO * O) per query row; then one task per
// (batch, KV head) walks its key tiles (KV outer) and, for each, every query tile
// of the group's heads that visits it (query inner): S = Q K^T recomputed,
// P = exp(S - lse) from the forward's log-sum-exp (no max, no sum), then
// dV += P^T dO, dP = dO V^T, dS = P * (dP - D), dK += dS^T Q and
// dQ += dS K; dK and dV stay in the tile buffers and are written once per key
// tile, dQ (fp32) is read-modified-written in global memory per (key tile,
// query tile), as FA2's dq_accum. Changed from the naive backward: S, P, dP and
// dS never leave the tile buffers, P costs one exp per score and no row
// reduction, K and V are read once. The tile pairs are those of the forward's
// walk (causal_bound, transposed: query tiles per key tile), masked element-wise.
// Races: a task owns a KV head and the group's query heads whole, so the dQ rows
// it accumulates are read and written by no other task: no atomics, and the
// result does not depend on the thread count (deterministic); GQA's sum over a
// group happens in the task's dK/dV tile buffers (no expanded dK/dV). The cost:
// B * Hkv tasks, fewer than the threads leave cores idle (B = 1, Hkv = 1).
// Expected bottleneck: math (five tile products of 2 Br Bc d FLOPs per tile
// pair against the forward's two, and an exp per score).
// CPU specifics: the score tiles are query-major (S = Q K^T, dP = dO V^T) from K^T
// and V^T transposed in the tile buffers once per key tile, so Q, dO, lse and D are
// read where they lie on every visit (no copy, no per-visit transpose), and P^T and
// dS^T are column-major views of P and dS (tile_gemm's TN form). Measured against a
// first version with transposed score tiles (Q and dO transposed per visit), which
// took 0.998 of torch's backward time at d 128 none against 0.81 (N 2048, 2 threads,
// benchmarks/cpu_vs_torch_bwd.py on a loaded VM).
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/cpu/backward_runner.hpp"
#include "kernels/cpu/flash2_loop.hpp"
#include "kernels/cpu/tile_gemm.hpp"
#include "kernels/cpu/tile_softmax_bwd.hpp"

namespace attnbench::cpu {

namespace {

void transpose(float* to, std::int64_t ld, const float* from, std::int64_t rows, std::int64_t cols) {
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) to[c * ld + r] = from[r * cols + c];
}

}  // namespace

void flash2_backward(const problem& p, const float* q, const float* k, const float* v, const float* o, const float* lse,
                     const float* d_o, float* delta, float* dq, float* dk, float* dv, byte_counter& bytes,
                     exp_counter& exps, const q_tile_list& walk) {
  const std::int64_t d = p.d, Br = p.Br, Bc = p.Bc;
  const float scale_qk = 1.0f / std::sqrt(static_cast<float>(d));
  const std::int64_t heads = p.B * p.H, tasks = p.B * p.Hkv;
  blas_single_thread blas;
#pragma omp parallel if (worth_threads(p))
  {
    // Preprocess: D = rowsum(dO * O) and dQ = 0, per (batch, head).
#pragma omp for schedule(static)
    for (std::int64_t bh = 0; bh < heads; ++bh) {
      const float* oh = read_tile(o + bh * p.Nq * d, p.Nq * d, bytes);
      const float* doh = read_tile(d_o + bh * p.Nq * d, p.Nq * d, bytes);
      for (std::int64_t i = 0; i < p.Nq; ++i) {
        float s = 0;
#pragma omp simd reduction(+ : s)
        for (std::int64_t c = 0; c < d; ++c) s += oh[i * d + c] * doh[i * d + c];
        delta[bh * p.Nq + i] = s;
      }
      bytes.add(4 * p.Nq);  // D written
      fill_store(dq + bh * p.Nq * d, 0.0f, p.Nq * d, bytes);
    }
    // Tile buffers: K^T and V^T (d x Bc), P and dP / dS (Br x Bc, query-major), dK and dV
    // accumulators (Bc x d). Q, dO, lse and D tiles are read where they lie.
    std::vector<float> buf(2 * d * Bc + 2 * Br * Bc + 2 * Bc * d);
    float* k_t = buf.data();
    float* v_t = k_t + d * Bc;
    float* ps = v_t + d * Bc;
    float* ds = ps + Br * Bc;
    float* dk_acc = ds + Br * Bc;
    float* dv_acc = dk_acc + Bc * d;
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t t = 0; t < tasks; ++t) {
      const std::int64_t b = t / p.Hkv, hkv = t % p.Hkv;
      for (std::int64_t kt = 0; kt < num_kv_tiles(p); ++kt) {
        const std::int64_t cols = kv_tile_cols(p, kt), c0 = kt * Bc;
        const float* ks = read_tile(k + kv_offset(p, b, hkv, c0), cols * d, bytes);
        const float* vs = read_tile(v + kv_offset(p, b, hkv, c0), cols * d, bytes);
        transpose(k_t, Bc, ks, cols, d);  // in the tile buffers, once per key tile
        transpose(v_t, Bc, vs, cols, d);
        bool acc_written = false;
        for (std::int64_t h = hkv * p.group(); h < (hkv + 1) * p.group(); ++h)
          for (std::int32_t n = 0; n < walk.view().count(h, kt); ++n) {
            const std::int64_t qt = walk.view().at(h, kt, n);
            const std::int64_t rows = q_tile_rows(p, qt), r0 = qt * Br, row0 = (b * p.H + h) * p.Nq + r0;
            const float* qs = read_tile(q + q_offset(p, b, h, r0), rows * d, bytes);
            const float* dos = read_tile(d_o + q_offset(p, b, h, r0), rows * d, bytes);
            const float* lse_t = read_tile(lse + row0, rows, bytes);
            const float* delta_t = read_tile(delta + row0, rows, bytes);
            // P = exp(scale Q K^T - lse), masked scores -inf -> 0
            tile_gemm(rows, cols, d, scale_qk, {qs, d, 1}, k_t, Bc, ps, Bc, {});
            if (!tile_fully_visible(p, {r0, r0 + rows}, c0, c0 + cols))
              for (std::int64_t r = 0; r < rows; ++r)
                mask_strided(p, h, r0 + r, c0, ps + r * Bc, 1, cols, -std::numeric_limits<float>::infinity());
            exps.add(probabilities_from_lse(ps, rows, cols, Bc, lse_t));
            // dV += P^T dO (P^T: a column-major view of P)
            tile_gemm(cols, d, rows, 1.0f, {ps, 1, Bc}, dos, d, dv_acc, d, {.accumulate = acc_written});
            // dS = P * (dO V^T - D)
            tile_gemm(rows, cols, d, 1.0f, {dos, d, 1}, v_t, Bc, ds, Bc, {});
            softmax_grad(ds, ps, rows, cols, Bc, delta_t);
            // dK += scale dS^T Q; dQ += scale dS K
            tile_gemm(cols, d, rows, scale_qk, {ds, 1, Bc}, qs, d, dk_acc, d, {.accumulate = acc_written});
            float* dq_tile = dq + q_offset(p, b, h, r0);
            tile_gemm(rows, d, cols, scale_qk, {ds, Bc, 1}, ks, d, dq_tile, d, {.accumulate = true});
            bytes.add(2 * 4 * rows * d);  // dQ read and written
            acc_written = true;
          }
        if (!acc_written) {  // no query row sees these keys: zero gradients
          std::fill(dk_acc, dk_acc + cols * d, 0.0f);
          std::fill(dv_acc, dv_acc + cols * d, 0.0f);
        }
        store(dk + kv_offset(p, b, hkv, c0), dk_acc, cols * d, bytes);
        store(dv + kv_offset(p, b, hkv, c0), dv_acc, cols * d, bytes);
      }
    }
  }
}

namespace {

class flash2_backward_runner final : public cpu_backward_runner {
 public:
  flash2_backward_runner(const problem& p, bool writes_lse, tile_walk walk)
      : cpu_backward_runner(p, writes_lse),
        fwd_tiles_(make_kv_tile_list(p, walk)),
        bwd_walk_(transpose_tile_list(fwd_tiles_)),
        delta_(p.rows()) {}

 private:
  void forward() override {
    flash2_forward(p_, q_.data(), k_.data(), v_.data(), o_.data(), lse_.data(), bytes_, exps_, fwd_tiles_);
  }
  void backward() override {
    flash2_backward(p_, q_.data(), k_.data(), v_.data(), o_.data(), lse_.data(), d_o_.data(), delta_.data(), dq_.data(),
                    dk_.data(), dv_.data(), bytes_, exps_, bwd_walk_);
  }
  kv_tile_list fwd_tiles_;
  q_tile_list bwd_walk_;      // the forward's walk transposed: query tiles per key tile
  std::vector<float> delta_;  // D = rowsum(dO * O), [B, H, Nq]
};

}  // namespace

std::unique_ptr<runner> make_flash2_backward_runner(const problem& p, bool writes_lse) {
  return std::make_unique<flash2_backward_runner>(p, writes_lse, tile_walk::causal_bound);
}

// sparse's backward: the same loop over the exact key-tile lists (tiles with a visible pair),
// transposed, so a key tile visits only the query tiles that see it.
std::unique_ptr<runner> make_sparse_backward_runner(const problem& p, bool writes_lse) {
  return std::make_unique<flash2_backward_runner>(p, writes_lse, tile_walk::visible);
}

}  // namespace attnbench::cpu

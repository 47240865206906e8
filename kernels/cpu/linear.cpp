// linear (CPU): linear attention with the elu + 1 feature map phi
// (Katharopoulos et al. 2020): O_i = phi(q_i)^T S / phi(q_i)^T z with
// S = sum_j phi(k_j) v_j^T (d x d) and z = sum_j phi(k_j) over the keys
// visible to i. Changed from the softmax ladder: no softmax, so the sum over
// keys factors through a d x d state and the cost is linear in N.
// Non-causal: a state pass per (batch, KV head) reads K and V once and writes
// S and z to global memory; an output pass per (query tile, batch, head)
// reads the state and its Q tile and writes O.
// Causal (bottom-right aligned, i' = i + Nkv - Nq; chunk = Bc): the state
// pass writes, for every key chunk c that holds some i', the exclusive
// prefix state of chunks 0 .. c-1; the output pass, per (chunk, batch,
// head), takes the rows whose i' falls in chunk c, adds the inter-chunk part
// phi(q)^T S_c to the masked quadratic intra-chunk part
// (phi(Q) phi(K_c)^T, keys j <= i') times V_c. Rows with no visible key
// (i' < 0) are zeros. Other masks are not supported.
// Expected bottleneck: memory for d <= 64 (the state products are d x d per
// row, about 2d FLOPs per byte of Q/O); math for larger d.
#include <vector>

#include "kernels/cpu/cpu_common.hpp"

namespace attnbench::cpu {

namespace {

class linear_runner final : public cpu_runner {
 public:
  linear_runner(const problem& p, bool writes_lse)
      : cpu_runner(p, writes_lse),
        causal_(p.mask.kind == mask_kind::causal),
        first_chunk_(linear_first_chunk(p)),
        states_per_head_(causal_ ? num_kv_tiles(p) - first_chunk_ : 1),
        state_((p.d * p.d + p.d) * p.B * p.Hkv * states_per_head_) {}

  void run() override {
    reset_counters();
    blas_single_thread blas;
    state_pass();
    if (causal_)
      causal_output_pass();
    else
      output_pass();
  }

 private:
  std::int64_t state_elems() const { return p_.d * p_.d + p_.d; }
  float* state(std::int64_t b, std::int64_t hkv, std::int64_t c) {
    return state_.data() + ((b * p_.Hkv + hkv) * states_per_head_ + c) * state_elems();
  }

  // Per (batch, KV head): S = sum phi(k) v^T, z = sum phi(k). Non-causal:
  // over every key, one state written. Causal: before chunk c (c >= the first
  // chunk with queries) the running state is written as chunk c's prefix.
  void state_pass() {
    const problem& p = p_;
    const std::int64_t d = p.d, nc = num_kv_tiles(p), tasks = p.B * p.Hkv;
#pragma omp parallel if (worth_threads(p))
    {
      std::vector<float> buf(state_elems() + 2 * p.Bc * d);
      float* st = buf.data();  // S (d x d) then z (d)
      float* ks = st + state_elems();
      float* vs = ks + p.Bc * d;
#pragma omp for schedule(static)
      for (std::int64_t t = 0; t < tasks; ++t) {
        const std::int64_t b = t / p.Hkv, hkv = t % p.Hkv;
        std::fill(st, st + state_elems(), 0.0f);
        for (std::int64_t c = 0; c < nc; ++c) {
          if (causal_ && c >= first_chunk_) store(state(b, hkv, c - first_chunk_), st, state_elems(), bytes_);
          if (causal_ && c == nc - 1) break;  // the last chunk feeds no later chunk
          const std::int64_t cols = kv_tile_cols(p, c);
          load(ks, k_.data() + kv_offset(p, b, hkv, c * p.Bc), cols * d, bytes_);
          load(vs, v_.data() + kv_offset(p, b, hkv, c * p.Bc), cols * d, bytes_);
          elu1(ks, cols * d, exps_);
          gemm_tn(d, d, cols, 1.0f, ks, d, vs, d, 1.0f, st, d);  // S += phi(K)^T V
          for (std::int64_t j = 0; j < cols; ++j)                // z += sum_j phi(k_j)
            for (std::int64_t x = 0; x < d; ++x) st[d * d + x] += ks[j * d + x];
        }
        if (!causal_) store(state(b, hkv, 0), st, state_elems(), bytes_);
      }
    }
  }

  // O rows = num / den, num and den accumulated in the tile buffers.
  static void normalise(float* num, const float* den, std::int64_t rows, std::int64_t d) {
    for (std::int64_t r = 0; r < rows; ++r) scale(num + r * d, d, 1.0f / den[r]);
  }

  void output_pass() {
    const problem& p = p_;
    const std::int64_t d = p.d, tasks = num_q_tiles(p) * p.B * p.H;
#pragma omp parallel if (worth_threads(p))
    {
      std::vector<float> buf(state_elems() + 2 * p.Br * d + p.Br);
      float* st = buf.data();
      float* qs = st + state_elems();
      float* num = qs + p.Br * d;
      float* den = num + p.Br * d;
#pragma omp for schedule(static)
      for (std::int64_t t = 0; t < tasks; ++t) {
        const auto [qt, b, h] = qbh_task_of(p, t);
        const std::int64_t rows = q_tile_rows(p, qt), r0 = qt * p.Br;
        load(st, state(b, p.kv_head(h), 0), state_elems(), bytes_);
        load(qs, q_.data() + q_offset(p, b, h, r0), rows * d, bytes_);
        elu1(qs, rows * d, exps_);
        gemm_nn(rows, d, d, 1.0f, qs, d, st, d, 0.0f, num, d);          // phi(Q) S
        gemm_nn(rows, 1, d, 1.0f, qs, d, st + d * d, 1, 0.0f, den, 1);  // phi(Q) z
        normalise(num, den, rows, d);
        store(o_.data() + q_offset(p, b, h, r0), num, rows * d, bytes_);
      }
    }
  }

  void causal_output_pass() {
    const problem& p = p_;
    const std::int64_t d = p.d, Bc = p.Bc, nc = num_kv_tiles(p);
    const std::int64_t dead = std::max<std::int64_t>(0, p.Nq - p.Nkv);  // rows with i' < 0
    const std::int64_t tasks = (nc - first_chunk_) * p.B * p.H;
#pragma omp parallel if (worth_threads(p))
    {
      // Chunk rows: at most Bc (one per key position of the chunk).
      std::vector<float> buf(state_elems() + 2 * Bc * d + 2 * Bc * d + Bc * Bc + Bc);
      float* st = buf.data();
      float* qs = st + state_elems();
      float* num = qs + Bc * d;
      float* ks = num + Bc * d;
      float* vs = ks + Bc * d;
      float* a = vs + Bc * d;
      float* den = a + Bc * Bc;
#pragma omp for schedule(static) nowait
      for (std::int64_t bh = 0; bh < p.B * p.H; ++bh)
        if (dead > 0) fill_store(o_.data() + q_offset(p, bh / p.H, bh % p.H, 0), 0.0f, dead * d, bytes_);
#pragma omp for schedule(dynamic, 1)
      for (std::int64_t t = 0; t < tasks; ++t) {
        const std::int64_t c = nc - 1 - t / (p.B * p.H), b = (t / p.H) % p.B, h = t % p.H;
        const std::int64_t hkv = p.kv_head(h), cols = kv_tile_cols(p, c), c0 = c * Bc;
        const span64 rws = linear_chunk_rows(p, c);
        const std::int64_t rows = rws.size();
        load(st, state(b, hkv, c - first_chunk_), state_elems(), bytes_);
        load(qs, q_.data() + q_offset(p, b, h, rws.lo), rows * d, bytes_);
        load(ks, k_.data() + kv_offset(p, b, hkv, c0), cols * d, bytes_);
        load(vs, v_.data() + kv_offset(p, b, hkv, c0), cols * d, bytes_);
        elu1(qs, rows * d, exps_);
        elu1(ks, cols * d, exps_);
        // Inter-chunk: phi(Q) S_c and phi(Q) z_c.
        gemm_nn(rows, d, d, 1.0f, qs, d, st, d, 0.0f, num, d);
        gemm_nn(rows, 1, d, 1.0f, qs, d, st + d * d, 1, 0.0f, den, 1);
        // Intra-chunk: A = phi(Q) phi(K_c)^T with keys j > i' zeroed.
        gemm_nt(rows, cols, d, 1.0f, qs, d, ks, d, 0.0f, a, Bc);
        for (std::int64_t r = 0; r < rows; ++r) {
          mask_row(p, rws.lo + r, c0, a + r * Bc, cols, 0.0f);
          den[r] += sum(a + r * Bc, cols);
        }
        gemm_nn(rows, d, cols, 1.0f, a, Bc, vs, d, 1.0f, num, d);
        normalise(num, den, rows, d);
        store(o_.data() + q_offset(p, b, h, rws.lo), num, rows * d, bytes_);
      }
    }
  }

  bool causal_;
  std::int64_t first_chunk_;      // first key chunk holding some i'
  std::int64_t states_per_head_;  // causal: one prefix state per chunk from first_chunk_
  std::vector<float> state_;      // [B, Hkv, states_per_head, d*d + d] fp32
};

}  // namespace

std::unique_ptr<runner> make_linear_runner(const problem& p, bool writes_lse) {
  return std::make_unique<linear_runner>(p, writes_lse);
}

}  // namespace attnbench::cpu

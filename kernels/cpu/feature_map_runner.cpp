#include "kernels/cpu/feature_map_runner.hpp"

#include <algorithm>

namespace attnbench::cpu {

namespace {

// O rows = num / den, num and den accumulated in the tile buffers.
void normalise(float* num, const float* den, std::int64_t rows, std::int64_t d) {
  for (std::int64_t r = 0; r < rows; ++r) scale(num + r * d, d, 1.0f / den[r]);
}

}  // namespace

feature_map_runner::feature_map_runner(const problem& p, bool writes_lse, std::int64_t features, std::int64_t scratch)
    : cpu_runner(p, writes_lse),
      causal_(p.mask.kind == mask_kind::causal),
      features_(features),
      scratch_(scratch),
      first_chunk_(linear_first_chunk(p)),
      states_per_head_(causal_ ? num_kv_tiles(p) - first_chunk_ : 1),
      state_(state_elems() * p.B * p.Hkv * states_per_head_) {}

float* feature_map_runner::state(std::int64_t b, std::int64_t hkv, std::int64_t c) {
  return state_.data() + ((b * p_.Hkv + hkv) * states_per_head_ + c) * state_elems();
}

void feature_map_runner::run() {
  reset_counters();
  blas_single_thread blas;
  state_pass();
  if (causal_)
    causal_output_pass();
  else
    output_pass();
}

void feature_map_runner::state_pass() {
  const problem& p = p_;
  const std::int64_t d = p.d, F = features_, nc = num_kv_tiles(p), tasks = p.B * p.Hkv;
#pragma omp parallel if (worth_threads(p))
  {
    std::vector<float> buf(state_elems() + scratch_ + p.Bc * F);
    float* st = buf.data();  // S (F x d) then z (F)
    float* scratch = st + state_elems();
    float* u = scratch + scratch_;
#pragma omp for schedule(static)
    for (std::int64_t t = 0; t < tasks; ++t) {
      const std::int64_t b = t / p.Hkv, hkv = t % p.Hkv;
      begin_state(b, hkv, scratch, u);
      std::fill(st, st + state_elems(), 0.0f);
      for (std::int64_t c = 0; c < nc; ++c) {
        if (causal_ && c >= first_chunk_) store(state(b, hkv, c - first_chunk_), st, state_elems(), bytes_);
        if (causal_ && c == nc - 1) break;  // the last chunk feeds no later chunk
        const std::int64_t cols = kv_tile_cols(p, c);
        map_keys(k_.data() + kv_offset(p, b, hkv, c * p.Bc), cols, u, scratch);
        const float* vs = read_tile(v_.data() + kv_offset(p, b, hkv, c * p.Bc), cols * d, bytes_);
        gemm_tn(F, d, cols, 1.0f, u, F, vs, d, 1.0f, st, d);  // S += phi(K)^T V
        for (std::int64_t j = 0; j < cols; ++j)               // z += sum_j phi(k_j)
          for (std::int64_t f = 0; f < F; ++f) st[F * d + f] += u[j * F + f];
      }
      if (!causal_) store(state(b, hkv, 0), st, state_elems(), bytes_);
    }
  }
}

void feature_map_runner::output_pass() {
  const problem& p = p_;
  const std::int64_t d = p.d, F = features_, tasks = num_q_tiles(p) * p.B * p.H;
#pragma omp parallel if (worth_threads(p))
  {
    std::vector<float> buf(state_elems() + scratch_ + p.Br * F + p.Br * d + p.Br);
    float* st = buf.data();
    float* scratch = st + state_elems();
    float* u = scratch + scratch_;
    float* num = u + p.Br * F;
    float* den = num + p.Br * d;
#pragma omp for schedule(static)
    for (std::int64_t t = 0; t < tasks; ++t) {
      const auto [qt, b, h] = qbh_task_of(p, t);
      const std::int64_t rows = q_tile_rows(p, qt), r0 = qt * p.Br;
      load(st, state(b, p.kv_head(h), 0), state_elems(), bytes_);
      begin_output(b, p.kv_head(h), scratch);
      map_queries(q_.data() + q_offset(p, b, h, r0), rows, u, scratch);
      gemm_nn(rows, d, F, 1.0f, u, F, st, d, 0.0f, num, d);          // phi(Q) S
      gemm_nn(rows, 1, F, 1.0f, u, F, st + F * d, 1, 0.0f, den, 1);  // phi(Q) z
      normalise(num, den, rows, d);
      store(o_.data() + q_offset(p, b, h, r0), num, rows * d, bytes_);
    }
  }
}

void feature_map_runner::causal_output_pass() {
  const problem& p = p_;
  const std::int64_t d = p.d, F = features_, Bc = p.Bc, nc = num_kv_tiles(p);
  const std::int64_t dead = std::max<std::int64_t>(0, p.Nq - p.Nkv);  // rows with i' < 0
  const std::int64_t tasks = (nc - first_chunk_) * p.B * p.H;
#pragma omp parallel if (worth_threads(p))
  {
    // Chunk rows: at most Bc (one per key position of the chunk).
    std::vector<float> buf(state_elems() + scratch_ + 2 * Bc * F + Bc * d + Bc * Bc + Bc);
    float* st = buf.data();
    float* scratch = st + state_elems();
    float* uq = scratch + scratch_;
    float* uk = uq + Bc * F;
    float* num = uk + Bc * F;
    float* a = num + Bc * d;
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
      begin_output(b, hkv, scratch);
      map_queries(q_.data() + q_offset(p, b, h, rws.lo), rows, uq, scratch);
      map_keys(k_.data() + kv_offset(p, b, hkv, c0), cols, uk, scratch);
      const float* vs = read_tile(v_.data() + kv_offset(p, b, hkv, c0), cols * d, bytes_);
      // Inter-chunk: phi(Q) S_c and phi(Q) z_c.
      gemm_nn(rows, d, F, 1.0f, uq, F, st, d, 0.0f, num, d);
      gemm_nn(rows, 1, F, 1.0f, uq, F, st + F * d, 1, 0.0f, den, 1);
      // Intra-chunk: A = phi(Q) phi(K_c)^T with keys j > i' zeroed.
      gemm_nt(rows, cols, F, 1.0f, uq, F, uk, F, 0.0f, a, Bc);
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

}  // namespace attnbench::cpu

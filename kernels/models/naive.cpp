// naive, naive_gqa_expand and cublas_unfused: S and P through memory (docs/models.md).
// Sums run in 64-bit integers and are converted to double once, so they stay exact.
#include "kernels/models/models.hpp"

#include <algorithm>

#include "kernels/models/model_terms.hpp"

namespace attnbench {

using namespace model_terms;

namespace {

// Tiled GEMM C[M,N] = A[M,K] B[K,N] with 32 x 32 output tiles: A is read once
// per column tile, B once per row tile.
std::int64_t gemm_read_bytes(std::int64_t M, std::int64_t N, std::int64_t K, std::int64_t ea, std::int64_t eb) {
  const std::int64_t t = cuda_naive_tile;
  return M * K * ea * ceil_div(N, t) + K * N * eb * ceil_div(M, t);
}

std::int64_t score_elems(const problem& p) { return p.B * p.H * p.Nq * p.Nkv; }

// Query rows (of one head) with at least one visible key.
std::int64_t live_rows(const problem& p) {
  std::int64_t n = 0;
  for (std::int64_t i = 0; i < p.Nq; ++i) n += visible_keys(p, i) > 0;
  return n;
}

}  // namespace

double model_flops_executed_naive(const problem& p) {
  return 4.0 * p.d * static_cast<double>(p.Nq * p.Nkv) * p.B * p.H;
}

double model_exps_naive(const problem& p) {
  // Pass 2 exponentiates the whole row (masked scores are -inf: exp gives 0) when the
  // row has a visible key; a row without one is filled with zeros.
  return static_cast<double>(p.B * p.H * live_rows(p) * p.Nkv);
}

double model_exps_unfused_cuda(const problem& p) {
  // masked_softmax.cu, one block of 128 threads per row: the online pass and the P pass
  // exponentiate each visible score once (the online pass not a thread's first), then
  // every thread merges 5 shuffled and 3 shared states, up to 2 exps each.
  constexpr std::int64_t threads = 128, merges = 5 + 3;
  const std::int64_t per_live_row = threads * merges * 2 - threads;  // 1920
  return 2.0 * static_cast<double>(visible_pairs_per_batch(p)) * p.B +
         static_cast<double>(p.B * p.H * live_rows(p) * per_live_row);
}

double model_bytes_naive(const problem& p) {
  // Per (batch, head): pass 1 reads Q once and K once per query tile, writes
  // S; pass 2 reads S and writes P row by row; pass 3 reads P, V once per
  // query tile, writes O.
  const std::int64_t per_head =
      es(p) * (p.Nq * p.d + 2 * num_q_tiles(p) * p.Nkv * p.d) + eo(p) * p.Nq * p.d + 4 * f32 * p.Nq * p.Nkv;
  return static_cast<double>(p.B * p.H * per_head);
}

double model_bytes_naive_gqa_expand(const problem& p) {
  problem e = p;
  e.Hkv = p.H;
  const std::int64_t expand = 4 * es(p) * p.B * p.H * p.Nkv * p.d;  // K, V: read + write
  return static_cast<double>(expand) + model_bytes_naive(e);
}

double model_bytes_naive_cuda(const problem& p) {
  const std::int64_t e = es(p);
  const std::int64_t s = p.Nq * p.Nkv;
  std::int64_t per_head = gemm_read_bytes(p.Nq, p.Nkv, p.d, e, e) + f32 * s;  // S = QK^T
  per_head += 2 * f32 * s + f32 * s + f32 * p.Nq;  // softmax: S read twice, P and lse written
  per_head += gemm_read_bytes(p.Nq, p.d, p.Nkv, f32, e) + eo(p) * p.Nq * p.d;  // O = PV
  return static_cast<double>(p.B * p.H * per_head);
}

std::int64_t memory_bytes_naive_cuda(const problem& p) {
  return io_bytes(p) + f32 * p.rows() + 2 * f32 * score_elems(p);
}

double model_bytes_naive_gqa_expand_cuda(const problem& p) {
  problem x = p;
  x.Hkv = p.H;
  const std::int64_t expand = 4 * es(p) * p.B * p.H * p.Nkv * p.d;  // K, V: read + write per head
  return static_cast<double>(expand) + model_bytes_naive_cuda(x);
}

std::int64_t memory_bytes_naive_gqa_expand_cuda(const problem& p) {
  return memory_bytes_naive_cuda(p) + 2 * es(p) * p.B * p.H * p.Nkv * p.d;
}

double model_bytes_cublas_unfused(const problem& p) {
  const std::int64_t e = es(p);
  const std::int64_t s = score_elems(p);
  std::int64_t b = e * p.q_elems() + e * p.kv_elems() + f32 * s;  // GEMM 1: Q, K once; S written
  b += 2 * f32 * s + e * s + f32 * p.rows();                      // softmax
  b += e * s + e * p.kv_elems() + eo(p) * p.o_elems();            // GEMM 2: P, V once; O written
  return static_cast<double>(b);
}

std::int64_t memory_bytes_cublas_unfused(const problem& p) {
  return io_bytes(p) + f32 * p.rows() + (f32 + es(p)) * score_elems(p);
}

}  // namespace attnbench

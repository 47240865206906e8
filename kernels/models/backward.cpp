// The backward pass (docs/backward.md, docs/models.md "Backward"): useful FLOPs by
// the convention of FlashAttention's and cuDNN's benchmarks, and the CPU backward
// algorithms' executed FLOPs, bytes and exps, exact for ragged tiles. fp32 only on
// the CPU (4 bytes for every array). Sums run in 64-bit integers and are converted
// to double once, so they stay exact.
#include "kernels/models/models.hpp"

#include "kernels/models/model_terms.hpp"

#include <algorithm>

#include "kernels/cuda/flash2/flash2_bwd_params.hpp"

namespace attnbench {

using namespace model_terms;

double model_flops_backward(const problem& p) { return 2.5 * model_flops_softmax(p); }

model_figures model_naive_backward_cpu(const problem& p) {
  const std::int64_t nqt = num_q_tiles(p), nkt = num_kv_tiles(p), pairs = p.Nq * p.Nkv;
  // Per (batch, head): dP = dO V^T (dO once, V per query tile, dP written), dS row by row
  // (P and dP read, dS written), dQ = dS K (dS, K per query tile, dQ written), and its share
  // of the key-tile pass (P and dS tiles, Q and dO per key tile).
  const std::int64_t per_head = (p.Nq * p.d + nqt * p.Nkv * p.d + pairs) + 3 * pairs +
                                (pairs + nqt * p.Nkv * p.d + p.Nq * p.d) + (2 * pairs + 2 * nkt * p.Nq * p.d);
  const std::int64_t per_kv_head = 2 * p.Nkv * p.d;  // dK, dV written once
  const std::int64_t bytes = f32 * p.B * (p.H * per_head + p.Hkv * per_kv_head);
  return {model_flops_backward(p), 8.0 * p.d * static_cast<double>(pairs) * p.B * p.H, static_cast<double>(bytes), 0};
}

namespace {

// The CPU backward over the (query tile, key tile) pairs of a walk: flash2's covering walk,
// or sparse's exact lists (per head when the mask has a layout per head).
model_figures flash2_backward_cpu(const problem& p, tile_walk walk) {
  const kv_tile_list l = make_kv_tile_list(p, walk);
  // Over the visited (query tile, key tile) pairs of every head: real pairs and the rows
  // each key tile's visits read.
  std::int64_t pairs = 0, visit_rows = 0;
  for (std::int64_t h = 0; h < p.H; ++h)
    for (std::int64_t qt = 0; qt < l.outer; ++qt)
      for (std::int32_t n = 0; n < l.view().count(h, qt); ++n) {
        pairs += q_tile_rows(p, qt) * kv_tile_cols(p, l.view().at(h, qt, n));
        visit_rows += q_tile_rows(p, qt);
      }
  const std::int64_t preprocess = p.Nq * (2 * p.d + 1) + p.Nq * p.d;  // O, dO read, D written; dQ zeroed
  // Per visit: Q, dO, lse, D read, dQ read and written.
  const std::int64_t per_batch = p.H * preprocess + visit_rows * (2 * p.d + 2 + 2 * p.d);
  const std::int64_t per_kv_head = 4 * p.Nkv * p.d;  // K, V read once; dK, dV written once
  const std::int64_t bytes = f32 * p.B * (per_batch + p.Hkv * per_kv_head);
  const double batch = static_cast<double>(p.B);
  return {model_flops_backward(p), 10.0 * p.d * static_cast<double>(pairs) * batch, static_cast<double>(bytes),
          static_cast<double>(pairs) * batch};
}

}  // namespace

model_figures model_flash2_backward_cpu(const problem& p) { return flash2_backward_cpu(p, tile_walk::causal_bound); }
model_figures model_sparse_backward_cpu(const problem& p) { return flash2_backward_cpu(p, tile_walk::visible); }

namespace {

// slices 0: atomic mode. walk: causal_bound (the flash2 rows: bwd_visits) or visible (the sparse
// row: its forward's key-tile lists transposed, per head for a per-head layout). splits: the
// CTAs a GQA group's query heads are split over (bwd_head_splits).
model_figures flash2_backward_cuda(const problem& p, std::int64_t slices, tile_walk walk, std::int64_t splits) {
  const std::int64_t e = dtype_bytes(p.type), br = p.Br, bc = p.Bc;
  const problem& g = p;  // at the entry's tile, a backward tile (the row's check)
  // Over every query head: the rows each visit reads, the real pairs and the visits.
  std::int64_t visit_rows = 0, pairs = 0, tiles = 0;
  auto visit = [&](std::int64_t qt, std::int64_t kt, std::int64_t heads) {
    const std::int64_t rows = std::min(br, p.Nq - qt * br), cols = std::min(bc, p.Nkv - kt * bc);
    visit_rows += heads * rows;
    pairs += heads * rows * cols;
    tiles += heads;
  };
  if (walk == tile_walk::visible) {
    const q_tile_list l = transpose_tile_list(make_kv_tile_list(g, tile_walk::visible));
    for (std::int64_t h = 0; h < l.heads; ++h)
      for (std::int64_t kt = 0; kt < l.outer; ++kt)
        for (std::int32_t n = 0; n < l.view().count(h, kt); ++n) visit(l.view().at(h, kt, n), kt, p.H / l.heads);
  } else {
    for (std::int64_t kt = 0; kt < cuda::bwd_kv_tiles(g); ++kt)
      for (std::int64_t qt = 0; qt < cuda::bwd_q_tiles(g); ++qt)
        if (cuda::bwd_visits(g, qt, kt)) visit(qt, kt, p.H);
  }
  // Atomic: the accumulator cleared (4 d per row), read-modify-written per visit (8 d), read
  // once by the conversion. Deterministic: each visit writes its slice rows (4 d), the wave's
  // sum reads them back (4 d per visit) and carries the accumulator across W waves (written
  // after the first, read and written after the middle ones, read by the last: 8 d (W - 1)).
  const std::int64_t waves = slices > 0 ? ceil_div(cuda::bwd_kv_tiles(g), slices) : 0;
  const std::int64_t preprocess = p.Nq * (2 * p.d * e + 4 + (slices > 0 ? 0 : 4 * p.d));
  const std::int64_t visits = visit_rows * (2 * p.d * e + 8 + 8 * p.d);
  const std::int64_t convert = p.Nq * p.d * (slices > 0 ? 8 * (waves - 1) + e : 4 + e);
  const std::int64_t per_head = preprocess + convert;
  // K, V read by each split's CTA; dK, dV written once, or with splits each split's fp32 part
  // written and read back by the reduce kernel, which writes dK and dV.
  const std::int64_t kv = p.Nkv * p.d,
                     per_kv_head = 2 * kv * e * splits + (splits > 1 ? 16 * kv * splits : 0) + 2 * kv * e;
  const double batch = static_cast<double>(p.B), heads = static_cast<double>(p.B * p.H);
  const double bytes = heads * static_cast<double>(per_head) + batch * static_cast<double>(visits) +
                       static_cast<double>(p.B * p.Hkv * per_kv_head);
  return {model_flops_backward(p), 10.0 * p.d * static_cast<double>(tiles * br * bc) * batch, bytes,
          static_cast<double>(pairs) * batch};
}

}  // namespace

model_figures model_flash2_backward_cuda(const problem& p, int head_splits) {
  return flash2_backward_cuda(p, 0, tile_walk::causal_bound, head_splits);
}
model_figures model_sparse_backward_cuda(const problem& p, int head_splits) {
  return flash2_backward_cuda(p, 0, tile_walk::visible, head_splits);
}
model_figures model_flash2_backward_deterministic_cuda(const problem& p, std::int64_t slices, int head_splits) {
  return flash2_backward_cuda(p, slices, tile_walk::causal_bound, head_splits);
}
model_figures model_cublas_unfused_backward(const problem& p) {
  const std::int64_t e = es(p), s = p.rows() * p.Nkv, q = p.q_elems(), kv = p.kv_elems();
  std::int64_t b = e * q + e * kv + f32 * s;  // dP = dO V^T: dO, V read, dP written
  b += e * q + e * s + e * kv;                // dV = P^T dO: dO, P read, dV written
  b += 2 * e * q + f32 * s + 2 * e * s;       // dS: O, dO (D), dP, P read, dS written
  b += e * s + e * kv + e * q;                // dQ = dS K: dS, K read, dQ written
  b += e * s + e * q + e * kv;                // dK = dS^T Q: dS, Q read, dK written
  return {model_flops_backward(p), 8.0 * p.d * static_cast<double>(s), static_cast<double>(b), 0};
}

std::int64_t memory_bytes_cublas_unfused_backward(const problem& p) {
  return memory_bytes_cublas_unfused(p) + es(p) * (2 * p.q_elems() + 2 * p.kv_elems() + p.rows() * p.Nkv);
}

model_figures model_for_pass(const problem& p, model_figures fwd,
                             const std::function<model_figures(const problem&)>& bwd) {
  if (p.pass == pass_kind::fwd) return fwd;
  const model_figures b = bwd(p);
  if (p.pass == pass_kind::bwd) return b;
  return {fwd.flops + b.flops, fwd.flops_executed + b.flops_executed, fwd.bytes + b.bytes, fwd.exps + b.exps};
}

}  // namespace attnbench

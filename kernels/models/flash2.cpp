// FlashAttention-2 family: flash2, sparse, and the tile walk of flash2_gqa_packed and
// flash2_splitkv (CUDA; flash2_splitkv's CPU twin walks the same tiles) (docs/models.md).
// Sums run in 64-bit integers and are converted to double once, so they stay exact.
#include "kernels/models/models.hpp"

#include <algorithm>
#include <type_traits>

#include "kernels/cuda/flash2/flash2_params.hpp"
#include "kernels/cuda/flash2/flash2_plan.hpp"
#include "kernels/models/model_terms.hpp"

namespace attnbench {

using namespace model_terms;

namespace {

// Pairs computed per (batch, head) when query tile qt visits the key tiles
// of `visit(qt)` in full.
template <class Visit>
std::int64_t tile_pairs_per_head(const problem& p, Visit visit) {
  std::int64_t n = 0;
  for (std::int64_t qt = 0; qt < num_q_tiles(p); ++qt) n += q_tile_rows(p, qt) * visit(qt);
  return n;
}

std::int64_t causal_keys(const problem& p, std::int64_t qt) { return keys_in_tiles(p, causal_bounded_kv_tiles(p, qt)); }

std::int64_t sparse_keys(const problem& p, std::int64_t qt) {
  const tile_spans t = visible_kv_tiles(p, qt);
  return keys_in_tiles(p, t.first) + keys_in_tiles(p, t.second);
}

// flash2's loop per (batch, head) reading the key tiles worth `keys(qt)` keys.
template <class Keys>
std::int64_t flash2_bytes_per_head(const problem& p, Keys keys) {
  std::int64_t n = 0;
  for (std::int64_t qt = 0; qt < num_q_tiles(p); ++qt)
    n += q_tile_rows(p, qt) * (p.d * (es(p) + eo(p)) + f32) + 2 * p.d * es(p) * keys(qt);
  return n;
}

// Masks with sparse terms: the exact tile list (per head for per-head
// layouts). Sum over (head, query tile) of f(real rows, real keys of the
// visited tiles), for all B x H (batch, head) pairs.
// f(rows, keys) or f(rows, keys, tiles).
template <class F>
std::int64_t sparse_list_sum(const problem& p, F f) {
  const kv_tile_list l = make_kv_tile_list(p, tile_walk::visible);
  std::int64_t n = 0;
  for (std::int64_t h = 0; h < l.heads; ++h)
    for (std::int64_t qt = 0; qt < l.outer; ++qt) {
      const std::int64_t tiles = l.view().count(h, qt);
      std::int64_t keys = 0;
      for (std::int32_t t = 0; t < tiles; ++t) keys += kv_tile_cols(p, l.view().at(h, qt, t));
      if constexpr (std::is_invocable_v<F, std::int64_t, std::int64_t, std::int64_t>)
        n += f(q_tile_rows(p, qt), keys, tiles);
      else
        n += f(q_tile_rows(p, qt), keys);
    }
  return n * p.B * (p.H / l.heads);
}

}  // namespace

double model_flops_executed_flash2(const problem& p) {
  const auto pairs = tile_pairs_per_head(p, [&](std::int64_t qt) { return causal_keys(p, qt); });
  return 4.0 * p.d * static_cast<double>(pairs) * p.B * p.H;
}

double model_flops_executed_sparse(const problem& p) {
  if (p.mask.has_sparse())
    return 4.0 * p.d *
           static_cast<double>(sparse_list_sum(p, [](std::int64_t rows, std::int64_t keys) { return rows * keys; }));
  const auto pairs = tile_pairs_per_head(p, [&](std::int64_t qt) { return sparse_keys(p, qt); });
  return 4.0 * p.d * static_cast<double>(pairs) * p.B * p.H;
}

// Online softmax (flash2_forward's online_softmax_columns): per visited tile, one exp per
// score of its real rows and keys and one rescale exp per row.
double model_exps_flash2(const problem& p) {
  std::int64_t n = 0;
  for (std::int64_t qt = 0; qt < num_q_tiles(p); ++qt) {
    const span64 s = causal_bounded_kv_tiles(p, qt);
    n += q_tile_rows(p, qt) * (keys_in_tiles(p, s) + s.size());
  }
  return static_cast<double>(p.B * p.H * n);
}

double model_exps_sparse(const problem& p) {
  if (p.mask.has_sparse())
    return static_cast<double>(sparse_list_sum(
        p, [](std::int64_t rows, std::int64_t keys, std::int64_t tiles) { return rows * (keys + tiles); }));
  std::int64_t n = 0;
  for (std::int64_t qt = 0; qt < num_q_tiles(p); ++qt) {
    const tile_spans t = visible_kv_tiles(p, qt);
    n += q_tile_rows(p, qt) * (keys_in_tiles(p, t.first) + keys_in_tiles(p, t.second) + t.count());
  }
  return static_cast<double>(p.B * p.H * n);
}

double model_bytes_flash2(const problem& p) {
  const auto per_head = flash2_bytes_per_head(p, [&](std::int64_t qt) { return causal_keys(p, qt); });
  return static_cast<double>(p.B * p.H * per_head);
}

double model_bytes_sparse(const problem& p) {
  if (p.mask.has_sparse())
    return static_cast<double>(sparse_list_sum(p, [&](std::int64_t rows, std::int64_t keys) {
      return rows * (p.d * (es(p) + eo(p)) + f32) + 2 * p.d * es(p) * keys;
    }));
  const auto per_head = flash2_bytes_per_head(p, [&](std::int64_t qt) { return sparse_keys(p, qt); });
  return static_cast<double>(p.B * p.H * per_head);
}

model_figures model_flash2_cuda(const problem& p, const cuda::flash2_plan& plan) {
  // flash2_kernel.cuh: a row's scores lie with the 4 threads of an mma quad in each of the
  // WN warp columns (WN = 4 in the decode instantiations, 16-row tiles; 1 in the others,
  // flash2_instances.cpp), and each of those threads computes the row's rescale factor per
  // tile; in the epilogue each thread of the quad merges the WN columns' states (WN exps)
  // and scales by its own factor (1). The split merge: each of its d threads per row
  // weighs every split.
  const int wn = plan.geometry.Br == cuda::kDecodeBr ? 4 : 1;
  return model_tile_walk_cuda(
      p, plan,
      {.rescale_per_row = 4 * wn, .final_per_row = 4 * (wn + 1), .merge_per_row_split = static_cast<int>(p.d)});
}

model_figures model_flash2_splitkv_cpu(const problem& p, const cuda::flash2_plan& plan) {
  return model_tile_walk_cuda(p, plan, {.rescale_per_row = 1, .final_per_row = 0, .merge_per_row_split = 1});
}

model_figures model_tile_walk_cuda(const problem& p, const cuda::flash2_plan& plan, const walk_exps& x) {
  const problem& q = plan.geometry;
  const double e = es(p), o = eo(p);  // Q, K, V; O
  const std::int64_t resc = x.rescale_per_row, fin = x.final_per_row;
  if (plan.walk == tile_walk::visible && plan.pack == 1 && plan.splits == 1 && q.mask.has_sparse()) {
    // The listed walk (cuda::plan_uses_tile_list): per (head, query tile) the
    // real keys of its listed tiles; Q, O and lse once per query tile that
    // visits a tile (an empty one writes O and lse only).
    const double flops_exec = 4.0 * p.d * sparse_list_sum(q, [](std::int64_t r, std::int64_t k) { return r * k; });
    const double bytes = static_cast<double>(sparse_list_sum(q, [&](std::int64_t r, std::int64_t k) {
      return 2 * p.d * es(p) * k + (k > 0 ? r * p.d * es(p) : 0) + r * (p.d * eo(p) + f32);
    }));
    const double exps = static_cast<double>(sparse_list_sum(
        q, [&](std::int64_t r, std::int64_t k, std::int64_t n) { return r * (k + resc * n) + (n > 0 ? r * fin : 0); }));
    return {model_flops_softmax(p), flops_exec, bytes, exps};
  }
  const std::int64_t rows = cuda::packed_rows(q, plan.pack);
  double flops_exec = 0, bytes = 0, exps = 0;
  for (std::int64_t r0 = 0; r0 < rows; r0 += q.Br) {
    const std::int64_t R = std::min(q.Br, rows - r0);
    const span64 qr = cuda::packed_query_range(r0, r0 + R, plan.pack);
    const tile_spans sp = kv_tiles_for_queries(q, qr.lo, qr.hi, plan.walk);
    const std::int64_t nf = sp.first.size();
    for (int s = 0; s < plan.splits; ++s) {
      const span64 ord = cuda::split_ordinals(sp.count(), plan.splits, s);
      std::int64_t keys = 0;
      for (std::int64_t o = ord.lo; o < ord.hi; ++o)
        keys += kv_tile_cols(q, o < nf ? sp.first.lo + o : sp.second.lo + (o - nf));
      flops_exec += 4.0 * p.d * static_cast<double>(R * keys);
      // a score each, a rescale per row and tile, the epilogue's per row
      exps += static_cast<double>(R * (keys + resc * ord.size()) + (ord.empty() ? 0 : R * fin));
      bytes += 2.0 * p.d * e * keys;                    // K and V tiles
      if (!ord.empty()) bytes += R * p.d * e;           // Q (an empty split skips it)
      bytes += plan.splits == 1 ? R * (p.d * o + 4)     // O and lse, once
                                : R * (p.d + 1) * 4.0;  // fp32 partial O and lse
    }
    if (plan.splits > 1) {  // merge: read every partial, write O and lse; a weight exp per split
      bytes += R * (plan.splits * (p.d + 1) * 4.0 + p.d * o + 4);
      exps += static_cast<double>(R * plan.splits * x.merge_per_row_split);
    }
  }
  const double ctas = static_cast<double>(p.B * (p.H / plan.pack));
  return {model_flops_softmax(p), flops_exec * ctas, bytes * ctas, exps * ctas};
}

}  // namespace attnbench

// FLOP and byte models (docs/models.md). Sums run in 64-bit integers per
// (batch, head) and are converted to double once, so they stay exact.
#include "harness/models.hpp"

namespace attnbench {

namespace {

constexpr std::int64_t f32 = 4;  // S, P, lse, l, m and linear-attention state

std::int64_t es(const problem& p) { return dtype_bytes(p.type); }

// Pairs computed per (batch, head) when query tile qt visits the key tiles
// of `visit(qt)` in full.
template <class Visit>
std::int64_t tile_pairs_per_head(const problem& p, Visit visit) {
  std::int64_t n = 0;
  for (std::int64_t qt = 0; qt < num_q_tiles(p); ++qt) n += q_tile_rows(p, qt) * visit(qt);
  return n;
}

std::int64_t causal_keys(const problem& p, std::int64_t qt) {
  return keys_in_tiles(p, causal_bounded_kv_tiles(p, qt));
}
std::int64_t sparse_keys(const problem& p, std::int64_t qt) {
  const tile_spans t = visible_kv_tiles(p, qt);
  return keys_in_tiles(p, t.first) + keys_in_tiles(p, t.second);
}

// flash2's loop per (batch, head) reading the key tiles worth `keys(qt)` keys.
template <class Keys>
std::int64_t flash2_bytes_per_head(const problem& p, Keys keys) {
  std::int64_t n = 0;
  for (std::int64_t qt = 0; qt < num_q_tiles(p); ++qt)
    n += q_tile_rows(p, qt) * (2 * p.d * es(p) + f32) + 2 * p.d * es(p) * keys(qt);
  return n;
}

bool linear_causal(const problem& p) { return p.mask.kind == mask_kind::causal; }
std::int64_t state_bytes(const problem& p) { return (p.d * p.d + p.d) * f32; }
double state_flops(const problem& p) { return 2.0 * p.d * (p.d + 1); }

}  // namespace

// ---- FLOPs -------------------------------------------------------------------

double model_flops_softmax(const problem& p) {
  return 4.0 * p.d * static_cast<double>(visible_pairs_per_head(p)) * p.B * p.H;
}

double model_flops_linear(const problem& p) {
  std::int64_t rows = 0;  // query rows that see at least one key
  for (std::int64_t i = 0; i < p.Nq; ++i) rows += visible_keys(p, i) > 0;
  return state_flops(p) * (static_cast<double>(p.B * p.Hkv * p.Nkv) + double(p.B * p.H * rows));
}

double model_flops_executed_naive(const problem& p) {
  return 4.0 * p.d * static_cast<double>(p.Nq * p.Nkv) * p.B * p.H;
}

double model_flops_executed_flash1(const problem& p) { return model_flops_executed_flash2(p); }

double model_flops_executed_flash2(const problem& p) {
  const auto pairs = tile_pairs_per_head(p, [&](std::int64_t qt) { return causal_keys(p, qt); });
  return 4.0 * p.d * static_cast<double>(pairs) * p.B * p.H;
}

double model_flops_executed_sparse(const problem& p) {
  const auto pairs = tile_pairs_per_head(p, [&](std::int64_t qt) { return sparse_keys(p, qt); });
  return 4.0 * p.d * static_cast<double>(pairs) * p.B * p.H;
}

double model_flops_executed_linear(const problem& p) {
  if (!linear_causal(p)) return model_flops_linear(p);
  // State pass over the keys of chunks 0 .. nc-2 (the last chunk feeds no
  // later chunk), then per chunk: state read per row and the full
  // rows x keys block (scores 2d, apply to [v, 1] 2(d+1)).
  const std::int64_t nc = num_kv_tiles(p);
  double f = state_flops(p) * static_cast<double>((nc - 1) * p.Bc) * p.B * p.Hkv;
  std::int64_t rows = 0, block = 0;
  for (std::int64_t c = linear_first_chunk(p); c < nc; ++c) {
    const span64 r = linear_chunk_rows(p, c);
    rows += r.size();
    block += r.size() * kv_tile_cols(p, c);
  }
  f += (state_flops(p) * double(rows) + (4.0 * p.d + 2.0) * double(block)) * p.B * p.H;
  return f;
}

// ---- bytes -------------------------------------------------------------------

double model_bytes_min(const problem& p) {
  return static_cast<double>(es(p) * (p.q_elems() + 2 * p.kv_elems() + p.o_elems()));
}

double model_bytes_naive(const problem& p) {
  // Per (batch, head): pass 1 reads Q once and K once per query tile, writes
  // S; pass 2 reads S and writes P row by row; pass 3 reads P, V once per
  // query tile, writes O.
  const std::int64_t per_head = es(p) * (2 * p.Nq * p.d + 2 * num_q_tiles(p) * p.Nkv * p.d) +
                                4 * f32 * p.Nq * p.Nkv;
  return static_cast<double>(p.B * p.H * per_head);
}

double model_bytes_naive_gqa_expand(const problem& p) {
  problem e = p;
  e.Hkv = p.H;
  const std::int64_t expand = 4 * es(p) * p.B * p.H * p.Nkv * p.d;  // K, V: read + write
  return static_cast<double>(expand) + model_bytes_naive(e);
}

double model_bytes_flash1(const problem& p) {
  const std::int64_t e = es(p);
  std::int64_t per_head = p.Nq * (p.d * e + 2 * f32);  // O = 0, l = 0, m = -inf
  for (std::int64_t qt = 0; qt < num_q_tiles(p); ++qt) {
    const span64 s = causal_bounded_kv_tiles(p, qt);
    per_head += 2 * p.d * e * keys_in_tiles(p, s) +
                s.size() * q_tile_rows(p, qt) * (3 * p.d * e + 4 * f32);
  }
  return static_cast<double>(p.B * p.H * per_head);
}

double model_bytes_flash2(const problem& p) {
  const auto per_head = flash2_bytes_per_head(p, [&](std::int64_t qt) { return causal_keys(p, qt); });
  return static_cast<double>(p.B * p.H * per_head);
}

double model_bytes_sparse(const problem& p) {
  const auto per_head = flash2_bytes_per_head(p, [&](std::int64_t qt) { return sparse_keys(p, qt); });
  return static_cast<double>(p.B * p.H * per_head);
}

double model_bytes_linear(const problem& p) {
  const std::int64_t e = es(p);
  if (!linear_causal(p)) {
    const std::int64_t state_pass = p.B * p.Hkv * (2 * p.Nkv * p.d * e + state_bytes(p));
    const std::int64_t out_pass =
        p.B * p.H * (num_q_tiles(p) * state_bytes(p) + 2 * p.Nq * p.d * e);
    return static_cast<double>(state_pass + out_pass);
  }
  const std::int64_t nc = num_kv_tiles(p), c0 = linear_first_chunk(p);
  // State pass per (batch, KV head): K, V of chunks 0 .. nc-2 read, one
  // exclusive prefix state written per chunk that holds query rows.
  const std::int64_t state_pass =
      p.B * p.Hkv * (2 * (nc - 1) * p.Bc * p.d * e + (nc - c0) * state_bytes(p));
  // Output pass per (batch, head): rows with i' < 0 are written as zeros;
  // each chunk reads its state, its Q rows and K/V keys, writes its O rows.
  std::int64_t out = std::max<std::int64_t>(0, p.Nq - p.Nkv) * p.d * e;
  for (std::int64_t c = c0; c < nc; ++c)
    out += state_bytes(p) + linear_chunk_rows(p, c).size() * 2 * p.d * e +
           kv_tile_cols(p, c) * 2 * p.d * e;
  return static_cast<double>(state_pass + p.B * p.H * out);
}

span64 linear_chunk_rows(const problem& p, std::int64_t c) {
  const std::int64_t shift = p.Nkv - p.Nq;
  const std::int64_t lo = std::max<std::int64_t>(0, c * p.Bc - shift);
  const std::int64_t hi = std::min(p.Nkv, (c + 1) * p.Bc) - shift;  // <= Nq
  return {lo, std::max(lo, hi)};
}

std::int64_t linear_first_chunk(const problem& p) {
  return std::max<std::int64_t>(0, p.Nkv - p.Nq) / p.Bc;
}

}  // namespace attnbench

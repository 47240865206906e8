// Linear attention (elu + 1 features): state pass and output pass (docs/models.md).
// Sums run in 64-bit integers and are converted to double once, so they stay exact.
#include "kernels/models/models.hpp"

#include <algorithm>

#include "kernels/models/model_terms.hpp"

namespace attnbench {

using namespace model_terms;

namespace {

bool linear_causal(const problem& p) { return p.mask.kind == mask_kind::causal; }

std::int64_t state_bytes(const problem& p) { return (p.d * p.d + p.d) * f32; }

double state_flops(const problem& p) { return 2.0 * p.d * (p.d + 1); }

std::int64_t state_elems(const problem& p) { return p.d * (p.d + 1); }

// Keys the state pass walks: all (non-causal) or chunks 0 .. nc-2 (causal).
std::int64_t linear_state_keys(const problem& p) { return linear_causal(p) ? (num_kv_tiles(p) - 1) * p.Bc : p.Nkv; }

std::int64_t linear_states_per_kv_head(const problem& p) {
  return linear_causal(p) ? num_kv_tiles(p) - linear_first_chunk(p) : 1;
}

// Causal output pass: 16-row tiles in aligned-position space i' = i + Nkv - Nq;
// calls f(rows, keys) for each tile that holds query rows, keys = intra-chunk
// keys [c * Bc, last i' + 1).
template <class F>
void for_each_causal_tile(const problem& p, F f) {
  const std::int64_t t = cuda_linear_rows, shift = p.Nkv - p.Nq;
  for (std::int64_t lo = 0; lo < p.Nkv; lo += t) {
    const std::int64_t hi = std::min(lo + t, p.Nkv);
    const std::int64_t rows = hi - std::max(lo, shift);
    if (rows <= 0) continue;
    const std::int64_t c = lo / p.Bc;
    f(rows, hi - c * p.Bc);
  }
}

}  // namespace

double model_flops_linear(const problem& p) {
  std::int64_t rows = 0;  // query rows that see at least one key
  for (std::int64_t i = 0; i < p.Nq; ++i) rows += visible_keys(p, i) > 0;
  return state_flops(p) * (static_cast<double>(p.B * p.Hkv * p.Nkv) + double(p.B * p.H * rows));
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

double model_exps_linear(const problem& p) {
  // elu1 on each K chunk the state pass walks (per KV head); non-causal on each query row,
  // causal on each chunk's query rows and on its K keys again (per query head).
  const std::int64_t state = p.B * p.Hkv * linear_state_keys(p) * p.d;
  std::int64_t per_head = 0;
  if (!linear_causal(p)) {
    per_head = p.Nq;
  } else {
    for (std::int64_t c = linear_first_chunk(p); c < num_kv_tiles(p); ++c)
      per_head += linear_chunk_rows(p, c).size() + kv_tile_cols(p, c);
  }
  return static_cast<double>(state + p.B * p.H * per_head * p.d);
}

double model_exps_linear_cuda(const problem& p) {
  // phi of each key's d features once in the state pass (each block of state rows its
  // columns); phi(Q) of each real row of an output tile; causal, phi(K) of each tile's
  // intra-chunk keys.
  const std::int64_t state = p.B * p.Hkv * linear_state_keys(p) * p.d;
  std::int64_t per_head = 0;
  if (!linear_causal(p)) {
    per_head = p.Nq;
  } else {
    for_each_causal_tile(p, [&](std::int64_t rows, std::int64_t k) { per_head += rows + k; });
  }
  return static_cast<double>(state + p.B * p.H * per_head * p.d);
}

double model_bytes_linear(const problem& p) {
  const std::int64_t e = es(p);
  if (!linear_causal(p)) {
    const std::int64_t state_pass = p.B * p.Hkv * (2 * p.Nkv * p.d * e + state_bytes(p));
    const std::int64_t out_pass = p.B * p.H * (num_q_tiles(p) * state_bytes(p) + p.Nq * p.d * (e + eo(p)));
    return static_cast<double>(state_pass + out_pass);
  }
  const std::int64_t nc = num_kv_tiles(p), c0 = linear_first_chunk(p);
  // State pass per (batch, KV head): K, V of chunks 0 .. nc-2 read, one
  // exclusive prefix state written per chunk that holds query rows.
  const std::int64_t state_pass = p.B * p.Hkv * (2 * (nc - 1) * p.Bc * p.d * e + (nc - c0) * state_bytes(p));
  // Output pass per (batch, head): rows with i' < 0 are written as zeros;
  // each chunk reads its state, its Q rows and K/V keys, writes its O rows.
  std::int64_t out = std::max<std::int64_t>(0, p.Nq - p.Nkv) * p.d * eo(p);
  for (std::int64_t c = c0; c < nc; ++c)
    out += state_bytes(p) + linear_chunk_rows(p, c).size() * p.d * (e + eo(p)) + kv_tile_cols(p, c) * 2 * p.d * e;
  return static_cast<double>(state_pass + p.B * p.H * out);
}

span64 linear_chunk_rows(const problem& p, std::int64_t c) {
  const std::int64_t shift = p.Nkv - p.Nq;
  const std::int64_t lo = std::max<std::int64_t>(0, c * p.Bc - shift);
  const std::int64_t hi = std::min(p.Nkv, (c + 1) * p.Bc) - shift;  // <= Nq
  return {lo, std::max(lo, hi)};
}

std::int64_t linear_first_chunk(const problem& p) { return std::max<std::int64_t>(0, p.Nkv - p.Nq) / p.Bc; }

double model_bytes_linear_cuda(const problem& p) {
  const std::int64_t e = es(p);
  const std::int64_t a_tiles = ceil_div(p.d, cuda_linear_state_rows);
  const std::int64_t keys = linear_state_keys(p);
  // State pass per (b, KV head): K once (each block reads its 32 columns), V
  // once per block of state rows, one state per chunk holding rows written.
  const std::int64_t state_pass =
      p.B * p.Hkv * (keys * p.d * e * (1 + a_tiles) + linear_states_per_kv_head(p) * f32 * state_elems(p));
  std::int64_t out = 0;  // per (b, h)
  if (!linear_causal(p)) {
    out = ceil_div(p.Nq, cuda_linear_rows) * f32 * state_elems(p) + p.Nq * p.d * (e + eo(p));
  } else {
    out = std::max<std::int64_t>(0, p.Nq - p.Nkv) * p.d * eo(p);  // rows with no key: zeros
    for_each_causal_tile(p, [&](std::int64_t rows, std::int64_t k) {
      out += f32 * state_elems(p) + rows * p.d * (e + eo(p)) + 2 * k * p.d * e;
    });
  }
  return static_cast<double>(state_pass + p.B * p.H * out);
}

double model_flops_executed_linear_cuda(const problem& p) {
  const double sf = 2.0 * static_cast<double>(state_elems(p));
  double f = sf * static_cast<double>(linear_state_keys(p) * p.B * p.Hkv);
  if (!linear_causal(p)) return f + sf * static_cast<double>(p.B * p.H * p.Nq);
  std::int64_t rows = 0, pairs = 0;
  for_each_causal_tile(p, [&](std::int64_t r, std::int64_t k) {
    rows += r;
    pairs += r * k;
  });
  return f + (sf * double(rows) + (4.0 * p.d + 2.0) * double(pairs)) * p.B * p.H;
}

std::int64_t memory_bytes_linear_cuda(const problem& p) {
  return io_bytes(p) + p.B * p.Hkv * linear_states_per_kv_head(p) * f32 * state_elems(p);
}

}  // namespace attnbench

// CUDA byte/FLOP models (docs/models_cuda.md). Sums run in 64-bit integers
// and are converted to double once, so they stay exact.
#include "harness/models_cuda.hpp"

#include <algorithm>

#include "harness/mask.hpp"
#include "harness/models.hpp"

namespace attnbench {

namespace {

constexpr std::int64_t f32 = 4;

std::int64_t es(const problem& p) { return dtype_bytes(p.type); }
std::int64_t io_bytes(const problem& p) {  // Q, K, V, O as allocated
  return es(p) * (p.q_elems() + 2 * p.kv_elems() + p.o_elems());
}
std::int64_t score_elems(const problem& p) { return p.B * p.H * p.Nq * p.Nkv; }
std::int64_t state_elems(const problem& p) { return p.d * (p.d + 1); }  // [d, d+1]: S | z

// Tiled GEMM C[M,N] = A[M,K] B[K,N] with 32 x 32 output tiles: A is read once
// per column tile, B once per row tile.
std::int64_t gemm_read_bytes(std::int64_t M, std::int64_t N, std::int64_t K, std::int64_t ea,
                             std::int64_t eb) {
  const std::int64_t t = cuda_naive_tile;
  return M * K * ea * ceil_div(N, t) + K * N * eb * ceil_div(M, t);
}

}  // namespace

double model_bytes_naive_cuda(const problem& p) {
  const std::int64_t e = es(p);
  const std::int64_t s = p.Nq * p.Nkv;
  std::int64_t per_head = gemm_read_bytes(p.Nq, p.Nkv, p.d, e, e) + f32 * s;  // S = QK^T
  per_head += 2 * f32 * s + f32 * s + f32 * p.Nq;  // softmax: S read twice, P and lse written
  per_head += gemm_read_bytes(p.Nq, p.d, p.Nkv, f32, e) + e * p.Nq * p.d;  // O = PV
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
  b += 2 * f32 * s + e * s + f32 * p.rows();                        // softmax
  b += e * s + e * p.kv_elems() + e * p.o_elems();                  // GEMM 2: P, V once; O written
  return static_cast<double>(b);
}

std::int64_t memory_bytes_cublas_unfused(const problem& p) {
  return io_bytes(p) + f32 * p.rows() + (f32 + es(p)) * score_elems(p);
}

double model_bytes_flash1_cuda(const problem& p) {
  const std::int64_t e = es(p);
  const std::int64_t state_row = f32 * (p.d + 2);  // O_i (fp32), l_i, m_i per row
  std::int64_t per_head = 0;
  for (std::int64_t qt = 0; qt < num_q_tiles(p); ++qt) {
    const std::int64_t r = std::min(p.Br, p.Nq - qt * p.Br);
    const span64 s = causal_bounded_kv_tiles(p, qt);
    const std::int64_t keys = s.empty() ? 0 : std::min(s.hi * p.Bc, p.Nkv) - s.lo * p.Bc;
    per_head += r * p.d * e + 2 * keys * p.d * e;  // Q_i once, K_j and V_j
    if (s.size() > 1) per_head += 2 * (s.size() - 1) * r * state_row;  // state written + read back
    per_head += r * p.d * e + f32 * r;  // O and lse written by the last block
  }
  return static_cast<double>(p.B * p.H * per_head);
}

std::int64_t memory_bytes_flash1_cuda(const problem& p) {
  return io_bytes(p) + f32 * p.rows() + f32 * p.rows() * (p.d + 2);
}

std::int64_t flash1_smem_bytes(const problem& p) {
  // Tile rows padded by 4 bytes so row strides are an odd number of words.
  return (p.Br + 2 * p.Bc) * (p.d * es(p) + 4) + p.Br * p.Bc * f32 + 2 * p.Br * f32;
}

namespace {

bool linear_causal(const problem& p) { return p.mask.kind == mask_kind::causal; }

// Keys the state pass walks: all (non-causal) or chunks 0 .. nc-2 (causal).
std::int64_t linear_state_keys(const problem& p) {
  return linear_causal(p) ? (num_kv_tiles(p) - 1) * p.Bc : p.Nkv;
}
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

double model_bytes_linear_cuda(const problem& p) {
  const std::int64_t e = es(p);
  const std::int64_t a_tiles = ceil_div(p.d, cuda_linear_state_rows);
  const std::int64_t keys = linear_state_keys(p);
  // State pass per (b, KV head): K once (each block reads its 32 columns), V
  // once per block of state rows, one state per chunk holding rows written.
  const std::int64_t state_pass = p.B * p.Hkv *
      (keys * p.d * e * (1 + a_tiles) + linear_states_per_kv_head(p) * f32 * state_elems(p));
  std::int64_t out = 0;  // per (b, h)
  if (!linear_causal(p)) {
    out = ceil_div(p.Nq, cuda_linear_rows) * f32 * state_elems(p) + 2 * p.Nq * p.d * e;
  } else {
    out = std::max<std::int64_t>(0, p.Nq - p.Nkv) * p.d * e;  // rows with no key: zeros
    for_each_causal_tile(p, [&](std::int64_t rows, std::int64_t k) {
      out += f32 * state_elems(p) + 2 * rows * p.d * e + 2 * k * p.d * e;
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

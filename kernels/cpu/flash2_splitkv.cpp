// flash2_splitkv (CPU): decode, a few query rows against a long KV cache, shaped like
// the CUDA flash2_splitkv row (kernels/cuda/flash2/: the same plan, tile walk and merge).
// Idea: the G = H / Hkv query heads of one KV group are packed into one tile of
// G * Nq rows (query-major: packed row r is query r / G of head base + r % G), so each
// K/V tile is read once per group instead of once per query head, and the visited key
// tiles of a row tile are split into ordinal ranges (cuda::split_ordinals) that run as
// separate tasks: each writes its partial O, normalised by its own sum, and its
// log-sum-exp in fp32, and the split that finishes a row tile last merges it exactly as
// the CUDA merge kernel does (flash2_splitkv_merge.cu): M = max_s lse_s,
// w_s = exp(lse_s - M), O = sum_s w_s O_s / sum_s w_s, lse = M + log(sum_s w_s).
// Changed from flash2 (CPU): below 16 packed rows Q K^T is computed with the rows, not
// the keys, in the output (S = Q K^T, R x Bc): each score is a dot product vectorised
// across d, 16 keys reduced at once by a transpose-add tree, so a tile of 1..15 rows
// wastes no vector lanes (flash2's S^T = K Q^T puts the rows in the vector lanes: 1 of
// 16 used at Nq = 1); the softmax runs along the rows (row_max, exp_sub_sum) and P V
// keeps the rows' accumulators in registers while V streams in address order. From 16
// packed rows on it is flash2's tile step. While the scores read K tile n, V tile n is
// prefetched into L2, and the next K tile while P V reads V. Work is split across
// threads by KV range as well as by (batch, KV group), so Hkv = 1 keeps every thread busy.
// Expected bottleneck: memory. Per key and packed row it executes 2d multiply-adds
// against 2d * 4 bytes of K/V read once per group: at G * Nq <= 8 well below the FMA
// rate of a core, so the K/V stream sets the time (the target: >= 70 % of the measured
// copy bandwidth at Hkv = H). Measured: docs/cpu.md (benchmarks/cpu_decode_vs_torch.py).
#include "kernels/cpu/flash2_splitkv.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/cpu/exp_approx.hpp"
#include "kernels/cpu/tile_gemm.hpp"
#include "kernels/cpu/tile_softmax.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define ATTNBENCH_SPLITKV_AVX512 1
#endif

namespace attnbench::cpu {

namespace {

constexpr float neg_inf = -std::numeric_limits<float>::infinity();

// Most key tiles any row tile of the packed geometry g visits.
std::int64_t most_tiles(const problem& g, int pack) {
  const std::int64_t rows = cuda::packed_rows(g, pack);
  std::int64_t most = 0;
  for (std::int64_t r0 = 0; r0 < rows; r0 += g.Br) {
    const span64 qr = cuda::packed_query_range(r0, std::min(rows, r0 + g.Br), pack);
    most = std::max(most, kv_tiles_for_queries(g, qr.lo, qr.hi, tile_walk::visible).count());
  }
  return most;
}

// ---- S = Q K^T for a few rows ---------------------------------------------------------

void scores_scalar(const float* k, std::int64_t cols, const float* q, std::int64_t rows, std::int64_t d, float* s,
                   std::int64_t lds) {
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t j = 0; j < cols; ++j) {
      float acc = 0;
#pragma omp simd reduction(+ : acc)
      for (std::int64_t x = 0; x < d; ++x) acc += q[r * d + x] * k[j * d + x];
      s[r * lds + j] = acc;
    }
}

#ifdef ATTNBENCH_SPLITKV_AVX512

// Lane t of the result is the sum of the 16 lanes of a[t]: 128-bit quarters added
// pairwise (two shuffle levels), then the 4 lanes of each quarter (unpack levels).
// Full-mask maskz forms throughout: GCC 12.2's unmasked ones trip -Wmaybe-uninitialized
// (exp_approx.hpp).
__attribute__((target("avx512f"))) inline __m512 lane_sums16(const __m512* a) {
  __m512 b[8], c[4];
  for (int i = 0; i < 8; ++i)  // quarters of b[i]: a[2i] (Q0+Q2, Q1+Q3), a[2i+1] (Q0+Q2, Q1+Q3)
    b[i] = _mm512_add_ps(_mm512_maskz_shuffle_f32x4(all16, a[2 * i], a[2 * i + 1], 0x44),
                         _mm512_maskz_shuffle_f32x4(all16, a[2 * i], a[2 * i + 1], 0xEE));
  for (int i = 0; i < 4; ++i)  // quarter q of c[i]: 4 partial sums of a[4i + q]
    c[i] = _mm512_add_ps(_mm512_maskz_shuffle_f32x4(all16, b[2 * i], b[2 * i + 1], 0x88),
                         _mm512_maskz_shuffle_f32x4(all16, b[2 * i], b[2 * i + 1], 0xDD));
  const __m512 d0 =
      _mm512_add_ps(_mm512_maskz_unpacklo_ps(all16, c[0], c[1]), _mm512_maskz_unpackhi_ps(all16, c[0], c[1]));
  const __m512 d1 =
      _mm512_add_ps(_mm512_maskz_unpacklo_ps(all16, c[2], c[3]), _mm512_maskz_unpackhi_ps(all16, c[2], c[3]));
  const __m512d e0 = _mm512_castps_pd(d0), e1 = _mm512_castps_pd(d1);
  // lane 4q + e: the sum of a[4e + q]
  const __m512 z = _mm512_add_ps(_mm512_castpd_ps(_mm512_maskz_unpacklo_pd(0xFF, e0, e1)),
                                 _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(0xFF, e0, e1)));
  const __m512i order = _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0);
  return _mm512_maskz_permutexvar_ps(all16, order, z);
}

// Scores of 16 consecutive keys (rows of k, stride d) for each query row.
__attribute__((target("avx512f"))) void scores16(const float* k, const float* q, std::int64_t rows, std::int64_t d,
                                                 float* s, std::int64_t lds, __mmask16 keep, const float* pf) {
  const std::int64_t full = d / 16;
  if (pf)
    for (std::int64_t x = 0; x < 16 * d; x += 16) _mm_prefetch(reinterpret_cast<const char*>(pf + x), _MM_HINT_T1);
  const __mmask16 tail = static_cast<__mmask16>((1u << (d % 16)) - 1u);
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* qr = q + r * d;
    __m512 acc[16];
    // Key by key, so the loads walk K's rows in address order (the hardware prefetcher
    // follows one stream; the d-outer order interleaved 16 rows 512 B apart).
#pragma GCC unroll 16
    for (int t = 0; t < 16; ++t) {
      const float* kt = k + t * d;
      __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
      std::int64_t x = 0;
      for (; x + 2 <= full; x += 2) {
        a0 = _mm512_fmadd_ps(_mm512_loadu_ps(kt + 16 * x), _mm512_loadu_ps(qr + 16 * x), a0);
        a1 = _mm512_fmadd_ps(_mm512_loadu_ps(kt + 16 * x + 16), _mm512_loadu_ps(qr + 16 * x + 16), a1);
      }
      if (x < full) a0 = _mm512_fmadd_ps(_mm512_loadu_ps(kt + 16 * x), _mm512_loadu_ps(qr + 16 * x), a0);
      if (tail)
        a1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(tail, kt + 16 * full), _mm512_maskz_loadu_ps(tail, qr + 16 * full),
                             a1);
      acc[t] = _mm512_add_ps(a0, a1);
    }
    _mm512_mask_storeu_ps(s + r * lds, keep, lane_sums16(acc));
  }
}

// scores16 at d = 16 NX (64, 128): the query row's NX vectors stay in registers, so each
// multiply-add loads only K (the loop above loads Q beside it: 2 loads per multiply-add).
template <int NX>
__attribute__((target("avx512f"))) void scores16_fixed_d(const float* k, const float* q, std::int64_t rows, float* s,
                                                         std::int64_t lds, __mmask16 keep, const float* pf) {
  constexpr int d = 16 * NX;
  if (pf)
    for (int x = 0; x < 16 * d; x += 16) _mm_prefetch(reinterpret_cast<const char*>(pf + x), _MM_HINT_T1);
  for (std::int64_t r = 0; r < rows; ++r) {
    __m512 qv[NX], acc[16];
    for (int x = 0; x < NX; ++x) qv[x] = _mm512_loadu_ps(q + r * d + 16 * x);
#pragma GCC unroll 16
    for (int t = 0; t < 16; ++t) {
      __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
      for (int x = 0; x < NX; x += 2) {
        a0 = _mm512_fmadd_ps(_mm512_loadu_ps(k + t * d + 16 * x), qv[x], a0);
        a1 = _mm512_fmadd_ps(_mm512_loadu_ps(k + t * d + 16 * x + 16), qv[x + 1], a1);
      }
      acc[t] = _mm512_add_ps(a0, a1);
    }
    _mm512_mask_storeu_ps(s + r * lds, keep, lane_sums16(acc));
  }
}

// The 16-key step for head dim d.
__attribute__((target("avx512f"))) void scores16_d(const float* k, const float* q, std::int64_t rows, std::int64_t d,
                                                   float* s, std::int64_t lds, __mmask16 keep, const float* pf) {
  if (d == 128) return scores16_fixed_d<8>(k, q, rows, s, lds, keep, pf);
  if (d == 64) return scores16_fixed_d<4>(k, q, rows, s, lds, keep, pf);
  scores16(k, q, rows, d, s, lds, keep, pf);
}

// s[r * lds + j] = q_r . k_j; a last group of fewer than 16 keys goes through `pad`
// (16 x d floats: its keys, then zero rows).
__attribute__((target("avx512f"))) void scores_avx512(const float* k, std::int64_t cols, const float* q,
                                                      std::int64_t rows, std::int64_t d, float* s, std::int64_t lds,
                                                      float* pad, const float* pf) {
  std::int64_t j = 0;
  for (; j + 16 <= cols; j += 16) scores16_d(k + j * d, q, rows, d, s + j, lds, 0xFFFF, pf ? pf + j * d : nullptr);
  if (j < cols) {
    const std::int64_t n = cols - j;
    std::copy(k + j * d, k + cols * d, pad);
    std::fill(pad + n * d, pad + 16 * d, 0.0f);
    scores16_d(pad, q, rows, d, s + j, lds, static_cast<__mmask16>((1u << n) - 1u), nullptr);
  }
}

// acc[MR rows][16 NV] = alpha_r acc (when accumulate) + sum_j p[r][j] v_j, V's rows
// walked once in address order with the rows' accumulators in registers.
template <int MR, int NV>
__attribute__((target("avx512f"))) void pv_block(const float* p, std::int64_t ldp, const float* v, std::int64_t cols,
                                                 float* acc, const float* alpha, bool accumulate, const float* pf,
                                                 std::int64_t pf_floats) {
  __m512 c[MR][NV];
  for (int r = 0; r < MR; ++r) {
    const __m512 a = _mm512_set1_ps(accumulate ? alpha[r] : 0.0f);
    for (int x = 0; x < NV; ++x)
      c[r][x] = accumulate ? _mm512_mul_ps(a, _mm512_loadu_ps(acc + r * 16 * NV + 16 * x)) : _mm512_setzero_ps();
  }
  for (std::int64_t j = 0; j < cols; ++j) {
    if (pf)
      for (int x = 0; x < NV; ++x)
        if (j * 16 * NV + 16 * x < pf_floats)
          _mm_prefetch(reinterpret_cast<const char*>(pf + j * 16 * NV + 16 * x), _MM_HINT_T1);
    __m512 vj[NV];
    for (int x = 0; x < NV; ++x) vj[x] = _mm512_loadu_ps(v + j * 16 * NV + 16 * x);
    for (int r = 0; r < MR; ++r) {
      const __m512 pr = _mm512_set1_ps(p[r * ldp + j]);
      for (int x = 0; x < NV; ++x) c[r][x] = _mm512_fmadd_ps(pr, vj[x], c[r][x]);
    }
  }
  for (int r = 0; r < MR; ++r)
    for (int x = 0; x < NV; ++x) _mm512_storeu_ps(acc + r * 16 * NV + 16 * x, c[r][x]);
}

// Rows in blocks of MR, then one row at a time.
template <int MR, int NV>
__attribute__((target("avx512f"))) void pv_rows(const float* p, std::int64_t ldp, const float* v, std::int64_t rows,
                                                std::int64_t cols, float* acc, const float* alpha, bool accumulate,
                                                const float* pf, std::int64_t pf_floats) {
  std::int64_t r = 0;
  for (; r + MR <= rows; r += MR, pf = nullptr)
    pv_block<MR, NV>(p + r * ldp, ldp, v, cols, acc + r * 16 * NV, alpha + r, accumulate, pf, pf_floats);
  for (; r < rows; ++r, pf = nullptr)
    pv_block<1, NV>(p + r * ldp, ldp, v, cols, acc + r * 16 * NV, alpha + r, accumulate, pf, pf_floats);
}

#endif

void scores(const float* k, std::int64_t cols, const float* q, std::int64_t rows, std::int64_t d, float* s,
            std::int64_t lds, float* pad, const float* pf) {
#ifdef ATTNBENCH_SPLITKV_AVX512
  if (tile_gemm_vectorised()) return scores_avx512(k, cols, q, rows, d, s, lds, pad, pf);
#endif
  scores_scalar(k, cols, q, rows, d, s, lds);
}

// acc = diag(alpha) acc + P V (alpha ignored when !accumulate). Few rows at d = 64 or 128:
// pv_rows (V read in address order; tile_gemm walks it in 64-column panels, two passes
// at d = 128); else tile_gemm, whose 6-row register blocks win once the rows fill them.
void pv(const float* p, std::int64_t ldp, const float* v, std::int64_t rows, std::int64_t cols, std::int64_t d,
        float* acc, const float* alpha, bool accumulate, const float* pf, std::int64_t pf_floats) {
#ifdef ATTNBENCH_SPLITKV_AVX512
  if (tile_gemm_vectorised() && rows < 16) {
    if (d == 128) return pv_rows<2, 8>(p, ldp, v, rows, cols, acc, alpha, accumulate, pf, pf_floats);
    if (d == 64) return pv_rows<4, 4>(p, ldp, v, rows, cols, acc, alpha, accumulate, pf, pf_floats);
  }
#endif
  tile_gemm(rows, d, cols, 1.0f, {p, ldp, 1}, v, d, acc, d, {.accumulate = accumulate, .c_row_scale = alpha});
}

// The online softmax along rows of S (R x cols): m, l in; alpha (the rescale of the
// accumulator) out; S becomes P. Rows that have seen no visible key keep m = -inf,
// l = 0, alpha = 0. Executes rows * (cols + 1) exps (every score, one alpha per row).
void online_softmax_rows(float* s, std::int64_t cols, std::int64_t lds, std::int64_t rows, float* m, float* l,
                         float* alpha, exp_counter& exps) {
  for (std::int64_t r = 0; r < rows; ++r) {
    float* sr = s + r * lds;
    const float mx = std::max(m[r], row_max(sr, cols));
    const float mu = mx == neg_inf ? 0.0f : mx;
    const float sum = exp_sub_sum(sr, cols, mu, exps);
    alpha[r] = exp_approx(m[r] - mu);
    l[r] = l[r] * alpha[r] + sum;
    m[r] = mx;
  }
  exps.add(rows);
}

struct splitkv_arrays {
  const float *q, *k, *v;
  float *o, *lse, *o_part, *lse_part;
  std::atomic<int>* splits_done;  // per (batch, KV group, row tile), zero before a run
};

// The merge of one query row (flash2_splitkv_merge.cu): every partial read, O and lse written.
void merge_row(const problem& p, int splits, std::int64_t row, const splitkv_arrays& a, float* lse_s, float* out,
               byte_counter& bytes, exp_counter& exps, splitkv_fault fault) {
  const std::int64_t d = p.d;
  for (int si = 0; si < splits; ++si) lse_s[si] = *read_tile(a.lse_part + si * p.rows() + row, 1, bytes);
  float M = neg_inf;
  for (int si = 0; si < splits; ++si) M = std::max(M, lse_s[si]);
  float L = 0;
  std::fill(out, out + d, 0.0f);
  for (int si = 0; si < splits; ++si) {
    float w = M == neg_inf ? 0.0f : exp_approx(lse_s[si] - M);  // lse_s = -inf -> 0
    if (fault == splitkv_fault::unweighted_merge) w = lse_s[si] == neg_inf ? 0.0f : 1.0f;
    L += w;
    const float* os = read_tile(a.o_part + (si * p.rows() + row) * d, d, bytes);
    for (std::int64_t x = 0; x < d; ++x) out[x] += w * os[x];
  }
  exps.add(splits);
  if (L > 0)
    scale(out, d, 1.0f / L);
  else
    std::fill(out, out + d, 0.0f);
  if (output_dtype(p.type) == dtype::bf16) round_bf16(out, d);
  const float lse_row = L > 0 ? M + std::log(L) : neg_inf;
  store(a.o + row * d, out, d, bytes, output_bytes(p.type));
  store(a.lse + row, &lse_row, 1, bytes);
}

void splitkv_forward(const problem& p, const cuda::flash2_plan& plan, const splitkv_arrays& a, byte_counter& bytes,
                     exp_counter& exps, splitkv_fault fault) {
  const problem& g = plan.geometry;
  const int pack = plan.pack, splits = plan.splits;
  const std::int64_t d = p.d, Br = g.Br, Bc = g.Bc, rows = cuda::packed_rows(g, pack);
  const std::int64_t row_tiles = ceil_div(rows, Br), tasks = p.B * p.Hkv * row_tiles * splits;
  const std::int64_t e_in = dtype_bytes(p.type), e_out = output_bytes(p.type);
  const bool bf16_out = output_dtype(p.type) == dtype::bf16;
  const float scale_qk = 1.0f / std::sqrt(static_cast<float>(d));
  blas_single_thread blas;
#pragma omp parallel if (worth_threads(p))
  {
    // Tile buffers: Q (R x d, pre-scaled), S / P (R x Bc), accumulator (R x d), m, l, alpha,
    // and 16 key rows for a last partial group of keys.
    std::vector<float> buf(2 * Br * d + Br * Bc + 3 * Br + 16 * d);
    float* qb = buf.data();
    float* acc = qb + Br * d;
    float* s = acc + Br * d;
    float* m = s + Br * Bc;
    float* l = m + Br;
    float* alpha = l + Br;
    float* pad = alpha + Br;
    std::vector<float> lse_s(splits);
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t t = 0; t < tasks; ++t) {
      const int split = static_cast<int>(t % splits);
      const std::int64_t rt = t / splits % row_tiles, bg = t / splits / row_tiles;
      const std::int64_t b = bg / p.Hkv, hkv = bg % p.Hkv;
      const std::int64_t kv_head = fault == splitkv_fault::wrong_kv_group ? (hkv + 1) % p.Hkv : hkv;
      const std::int64_t r0 = rt * Br, R = std::min(Br, rows - r0);
      const span64 qr = cuda::packed_query_range(r0, r0 + R, pack);
      const tile_spans sp = kv_tiles_for_queries(g, qr.lo, qr.hi, tile_walk::visible);
      const span64 ord = cuda::split_ordinals(sp.count(), splits, split);
      // packed row r: query (r0 + r) / pack of head hkv * pack + (r0 + r) % pack
      auto query = [&](std::int64_t r) { return (r0 + r) / pack; };
      auto head = [&](std::int64_t r) { return hkv * pack + (r0 + r) % pack; };
      // From 16 rows on, flash2's layout: Q^T (d x Br), S^T = K Q^T with the rows in the vector
      // lanes, online_softmax_columns, P V as a TN product (H 8, Hkv 1, Nq 4, Nkv 16k, one
      // thread: 3.3 ms against 10.7 ms with the dot products, docs/cpu.md).
      const bool lanes_hold_rows = R >= 16;
      if (!ord.empty())
        for (std::int64_t r = 0; r < R; ++r) {
          const float* qrow = a.q + q_offset(p, b, head(r), query(r));
          if (lanes_hold_rows) {
            load_transposed(qb + r, Br, qrow, 1, d, bytes, e_in);
          } else {
            load(qb + r * d, qrow, d, bytes, e_in);
            scale(qb + r * d, d, scale_qk);
          }
        }
      std::fill(m, m + R, neg_inf);
      std::fill(l, l + R, 0.0f);
      bool acc_written = false;
      for (std::int64_t n = ord.lo; n < ord.hi; ++n) {
        const std::int64_t nf = sp.first.size();
        const std::int64_t kt = n < nf ? sp.first.lo + n : sp.second.lo + (n - nf);
        const std::int64_t cols = kv_tile_cols(g, kt), c0 = kt * Bc;
        const float* ks = read_tile(a.k + kv_offset(p, b, kv_head, c0), cols * d, bytes, e_in);
        const float* vs = read_tile(a.v + kv_offset(p, b, kv_head, c0), cols * d, bytes, e_in);
        // Prefetch into L2 the tile read next: V while the scores read K, the next K tile
        // while P V reads V.
        std::int64_t next_floats = 0;
        const float* next_k = nullptr;
        if (n + 1 < ord.hi) {
          const std::int64_t kn = n + 1 < nf ? sp.first.lo + n + 1 : sp.second.lo + (n + 1 - nf);
          next_k = a.k + kv_offset(p, b, kv_head, kn * Bc);
          next_floats = kv_tile_cols(g, kn) * d;
        }
        const bool masked = !tile_fully_visible(g, qr, c0, c0 + cols);
        if (lanes_hold_rows) {
          tile_gemm(cols, R, d, scale_qk, {ks, d, 1}, qb, Br, s, Br, {});  // S^T = scale K Q^T
          if (masked)
            for (std::int64_t r = 0; r < R; ++r) mask_strided(g, head(r), query(r), c0, s + r, Br, cols, neg_inf);
          exps.add(online_softmax_columns(s, cols, Br, R, m, l, alpha));
          tile_gemm(R, d, cols, 1.0f, {s, 1, Br}, vs, d, acc, d, {.accumulate = acc_written, .c_row_scale = alpha});
        } else {
          scores(ks, cols, qb, R, d, s, Bc, pad, vs);
          if (masked)
            for (std::int64_t r = 0; r < R; ++r) mask_row(g, query(r), c0, s + r * Bc, cols, neg_inf);
          online_softmax_rows(s, cols, Bc, R, m, l, alpha, exps);
          pv(s, Bc, vs, R, cols, d, acc, alpha, acc_written, next_k, next_floats);  // acc = diag(alpha) acc + P V
        }
        acc_written = true;
      }
      for (std::int64_t r = 0; r < R; ++r) {
        if (acc_written && l[r] > 0) {  // m finite
          scale(acc + r * d, d, 1.0f / l[r]);
          l[r] = m[r] + std::log(l[r]);
        } else {  // no visible key in this split: zeros, lse -inf
          std::fill(acc + r * d, acc + (r + 1) * d, 0.0f);
          l[r] = neg_inf;
        }
      }
      for (std::int64_t r = 0; r < R; ++r) {
        const std::int64_t row = (b * p.H + head(r)) * p.Nq + query(r);
        if (splits == 1) {
          if (bf16_out) round_bf16(acc + r * d, d);
          store(a.o + row * d, acc + r * d, d, bytes, e_out);
          store(a.lse + row, l + r, 1, bytes);
        } else {
          store(a.o_part + (split * p.rows() + row) * d, acc + r * d, d, bytes);
          store(a.lse_part + split * p.rows() + row, l + r, 1, bytes);
        }
      }
      // The split that finishes its row tile last merges it (the CUDA merge kernel's work),
      // so no barrier separates the splits from the merge: a barrier costs a scheduler
      // quantum (4-12 ms) whenever another process holds a core (docs/cpu.md). acq_rel: the
      // last split sees every other split's partials.
      if (splits > 1 && a.splits_done[bg * row_tiles + rt].fetch_add(1, std::memory_order_acq_rel) == splits - 1)
        for (std::int64_t r = 0; r < R; ++r)
          merge_row(p, splits, (b * p.H + head(r)) * p.Nq + query(r), a, lse_s.data(), acc, bytes, exps, fault);
    }
  }
}

class flash2_splitkv_runner final : public cpu_runner {
 public:
  flash2_splitkv_runner(const problem& p, bool writes_lse, int forced_splits, splitkv_fault fault)
      : cpu_runner(p, true), plan_(splitkv_plan(p, forced_splits)), fault_(fault), writes_lse_(writes_lse) {
    if (plan_.splits > 1) {
      o_part_.resize(static_cast<std::size_t>(plan_.splits * p.rows() * p.d));
      lse_part_.resize(static_cast<std::size_t>(plan_.splits * p.rows()));
    }
    const problem& g = plan_.geometry;
    row_tiles_ = p.B * p.Hkv * cuda::row_tiles(g, plan_.pack, g.Br);
    splits_done_ = std::make_unique<std::atomic<int>[]>(static_cast<std::size_t>(row_tiles_));
  }
  void run() override {
    reset_counters();
    for (std::int64_t t = 0; t < row_tiles_; ++t) splits_done_[t].store(0, std::memory_order_relaxed);
    splitkv_forward(
        p_, plan_,
        {q_.data(), k_.data(), v_.data(), o_.data(), lse_.data(), o_part_.data(), lse_part_.data(), splits_done_.get()},
        bytes_, exps_, fault_);
  }
  host_outputs get_outputs() override {
    host_outputs out = cpu_runner::get_outputs();
    if (!writes_lse_) out.lse.clear();
    return out;
  }

 private:
  cuda::flash2_plan plan_;
  splitkv_fault fault_;
  bool writes_lse_;
  std::vector<float> o_part_, lse_part_;
  std::int64_t row_tiles_ = 0;
  std::unique_ptr<std::atomic<int>[]> splits_done_;
};

}  // namespace

problem splitkv_geometry(const problem& p) {
  problem g = p;
  const auto packed = static_cast<std::uint64_t>(p.group() * p.Nq);
  g.Br = std::clamp<std::int64_t>(static_cast<std::int64_t>(std::bit_ceil(packed)), 16, 256);
  g.Bc = splitkv_bc;
  return g;
}

cuda::flash2_plan splitkv_plan(const problem& p, int forced_splits) {
  cuda::flash2_plan plan;
  plan.geometry = splitkv_geometry(p);
  plan.pack = static_cast<int>(p.group());
  plan.walk = tile_walk::visible;
  if (forced_splits > 0) {
    plan.splits = forced_splits;
    return plan;
  }
  const problem& g = plan.geometry;
  const std::int64_t tasks = p.B * p.Hkv * cuda::row_tiles(g, plan.pack, g.Br);
  // About 4 tasks per thread under dynamic scheduling (3 over 2 threads would leave one
  // idle a third of the time); each split keeps at least 4 key tiles (256 keys), so its
  // partial O (d fp32 per row, written and read once) stays below 1/16 of the K/V it reads.
  const std::int64_t want = ceil_div(4LL * max_threads(), tasks);
  const std::int64_t cap = std::max<std::int64_t>(1, most_tiles(g, plan.pack) / 4);
  plan.splits = static_cast<int>(std::clamp<std::int64_t>(std::min(want, cap), 1, 256));
  return plan;
}

std::int64_t splitkv_workspace_bytes(const problem& p) {
  const int splits = splitkv_plan(p).splits;
  return splits > 1 ? static_cast<std::int64_t>(splits) * p.rows() * (p.d + 1) * 4 : 0;
}

std::unique_ptr<runner> make_flash2_splitkv_runner(const problem& p, bool writes_lse, int forced_splits,
                                                   splitkv_fault fault) {
  return std::make_unique<flash2_splitkv_runner>(p, writes_lse, forced_splits, fault);
}

}  // namespace attnbench::cpu

// flash2_bwd_kernel: the main kernel of a FlashAttention-2-style backward on
// tensor cores (mma.sync m16n8k16, fp16/bf16 in, fp32 accumulate), sm_80+.
//
// The idea (Dao 2023, Algorithm 2; the tile loop of kernels/cpu/flash2_bwd.cpp):
// KV outer. A CTA owns one key tile (Bc = 64 or 128 keys) of one KV head; K_j and V_j are
// loaded once, and dK_j, dV_j stay in registers (each of the Bc / 16 warps owns 16 keys x d)
// while the CTA walks every query tile of every query head of the KV group
// that visits the key tile (the forward's causal-bound walk transposed; on the sparse row,
// the query tiles of its forward's key-tile lists, transposed: prm.q_tiles). Per
// visit: S^T = K Q^T recomputed, P^T = exp(scale S^T - lse) from the
// forward's log-sum-exp (no max, no sum), dP^T = V dO^T, dS^T = P^T * (dP^T - D),
// dV += P^T dO and dK += dS^T Q (P^T, dS^T converted in registers from the C
// to the A fragment layout, as the forward's P), then dS goes to shared memory
// and each warp computes 16 query rows x d / (Bc / 64) columns of dQ_i += dS K, added into the fp32
// accumulator with atomicAdd (CTAs of other key tiles add to the same rows), or in
// the deterministic mode stores them to its key tile's own slice of the wave (dq_part).
// What changed from the forward (flash2_kernel.cuh): the loop order (keys
// outer), the 5 products per visit instead of 2, and the dQ reduction across
// CTAs. GQA is native: the group's query heads are an outer loop of the same
// CTA, so dK and dV are summed over the group in registers and written once;
// no expanded [B, H, Nkv, d] buffers. When that grid is short (bwd_head_splits) the group is
// split over prm.head_splits CTAs (blockIdx.z), each storing its part in fp32 for a reduce
// kernel: at Hkv 2, causal, N 8k the first key tile's CTA walked all 8 heads, 8x the visits of
// Hkv 16's, and took 1.74x its time (20cfac8).
//
// Expected bottleneck (64 x 64 tile): per visit the CTA does 5 * 2 * 64 * 64 * d FLOPs
// (5.2 MFLOP at d = 128) against 64 * 2 d * 2 bytes of Q and dO, 512 of lse
// and D, and 64 * d * 4 * 2 bytes of dQ atomics (read-modify-write in L2):
// 99 KB, 53 FLOP per byte, far below H200's ~200 FLOP/B ridge if all of it
// came from HBM; Q, dO and the accumulator rows are re-read by every key
// tile's CTA, so it leans on L2 and on the atomics' throughput there (the
// atomics are two thirds of the bytes: FA2's reason for larger key tiles). The next visit's
// Q, dO, lse and D are copied (cp.async) into the one buffer during this visit's dQ, which
// reads only dS and K (K::prefetch; not in the dense d = 128 64 x 64 kernel, which spilled with
// it: 2 CTAs per SM overlap there). A visit whose pairs are all visible skips the per-element
// mask (K::whole_path: 1137 instead of 1388 instructions per warp and visit at 64 x 128 d 128),
// and the mask is branch-free. The 64 x 64 tile serves both head dims. First H200 run
// (results/nvidia-h200/gpu-check-5759d44): 111-120 TFLOP/s at d = 64, N 4k-8k, against cuDNN's 427-442. Since then, on
// sm_90, the dQ atomics add float2 pairs (red.global.add.v2.f32): a warp's atomic then covers 8 whole 32-byte sectors
// instead of 8 half-used ones: 0.773x the time at d = 64 and 0.661x at d = 128 (N 8k, same
// call; 156 and 206 TFLOP/s). A second visit buffer (the next Q, dO, lse and D copied during
// this visit, branch altb) took 1.18x the time at d = 64 and 1.00x at d = 128, where every
// arrangement tried spilled 36-100 bytes beside 255 registers: not kept.
// The 64 x 128 tile (FA2's hdim128 tile, 8 warps, 1 CTA per SM) keeps each warp's registers
// as they are and halves the visits per key: per visit 2x the FLOPs against the same Q, dO,
// lse, D and dQ atomics. At d = 128 both tiles take each visit's 64 queries in two halves of
// 32 (K::QH; S^T, dP^T to dS^T and the half's share of dV, dK and dS, then the next half): 32
// accumulators of S^T and dP^T live instead of 64, for K and V fragments loaded twice per
// visit; same products in the same order. At 64 x 64 the halves made room for the sparse
// row's list walk (12-40 bytes of spills without them) and the sparse terms; the kernel for
// interval masks has neither and takes the 64 queries at once (K::sparse false: 0 spills, 16
// bytes with halves), as the 64 x 64 kernel measured at 20cfac8 did. With all 64 queries at
// once ptxas (CUDA 13.0, sm_90) spilled 32 bytes beside 255 registers at 64 x 128, 16 with
// 32-column dQ chunks, 36-44 with the dQ loops rolled, with the keys' visible rows in shared
// memory, or with P^T packed before dP^T (which also spilled the 64 x 64 tile); 32 with the
// shared-memory base made opaque per visit, 40 with 32-bit head and query-tile counters. Not
// yet measured on a GPU.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/launch.cuh"
#include "kernels/cuda/flash2/flash2_bwd_params.hpp"
#include "kernels/cuda/flash2/flash2_ptx.cuh"

namespace attnbench::cuda {

// Sparse_: the sparse row's list walk and the sparse terms compiled in (false: only the
// causal-bound walk and the interval masks, flash2_bwd_instances.cpp).
template <int D_, int BN_, class T_, bool Sparse_ = true>
struct flash2_bwd_traits {
  using T = T_;
  static constexpr bool sparse = Sparse_;
  static constexpr int D = D_, BM = static_cast<int>(kBwdBr), BN = BN_;
  static constexpr int warps = BN / 16, threads = 32 * warps;  // a warp owns 16 keys
  static constexpr int QT = BM / 8;                            // n8 tiles of S^T per warp (query columns)
  static constexpr int DT = D / 8;                             // n8 tiles of dK, dV per warp
  // dQ = dS K (BM x D) over the warps: WQM groups of 16 rows x WQD groups of DQ_COLS columns,
  // each done in chunks of DQ_DT n8 tiles (at most 64 columns: 32 accumulators beside dK and
  // dV; the whole d = 128 row at once spilled).
  static constexpr int WQM = BM / 16, WQD = warps / WQM, DQ_COLS = D / WQD;
  static constexpr int DQ_DT = DQ_COLS / 8 < 8 ? DQ_COLS / 8 : 8;
  // Parts of a visit's queries done one after the other (S^T, dP^T of BM / QH queries live
  // at a time): 2 at d = 128 where the whole BM spilled (header): at 64 x 128, and at 64 x 64
  // with the sparse machinery; the dense 64 x 64 kernel spilled 16 bytes with halves, none without.
  static constexpr int QH = D == 128 && (BN == 128 || sparse) ? 2 : 1;
  // The next visit's rows copied during this one's dQ (kernel body): everywhere but the dense
  // d = 128 64 x 64 kernel (QH 1, the kernel measured at 20cfac8), where the visit walk held
  // across the dQ spilled 8-32 bytes (with halves it fit); two CTAs per SM overlap one's copies
  // with the other's products there.
  static constexpr bool prefetch = !(D == 128 && BN == 64 && !sparse);
  // A visit whose pairs are all visible skips the per-element mask (kernel body): per visit
  // 1137 instead of 1388 SASS instructions at 64 x 128 d 128, 864 instead of 1176 at 64 x 64
  // d 64 (sm_90, CUDA 13.0). Not in the dense d = 128 64 x 64 kernel, where the second copy
  // of the P loop spilled 4 bytes.
  static constexpr bool whole_path = prefetch;
  static_assert(QT % (2 * QH) == 0, "a part is whole k16 query steps");
  static constexpr int KS = D / 16;   // k16 steps over d
  static constexpr int CH = D / 8;    // 16-byte chunks of a row of Q, K, V, dO
  static constexpr int LD = D + 8;    // padded row (16 bytes: conflict-free ldmatrix, see flash2_kernel.cuh)
  static constexpr int LDS = BN + 8;  // padded row of the dS tile
  // sQ, sdO [BM][LD], sK, sV [BN][LD], sdS [BM][LDS] in T; lse, D [BM] in fp32.
  static constexpr int smem_bytes = flash2_bwd_smem_bytes(D, BN);
  static_assert(smem_bytes == 2 * (2 * BM * LD + 2 * BN * LD + BM * LDS) + 4 * 2 * BM, "the host's formula");
  static_assert(is_bwd_tile(BM, BN) && warps % WQM == 0 && DQ_COLS % (8 * DQ_DT) == 0, "dQ must split over warps");
  static_assert(BM * CH % threads == 0 && BN * CH % threads == 0, "copies must split evenly");
  static constexpr bool sparse_terms = sparse && flash2_bwd_sparse_terms(D, BN);
  static_assert(2 * QT * 2 == 32, "sparse bits: a thread's 2 keys x 2 QT queries in one word");
};

template <class K>
__global__ void __launch_bounds__(K::threads, 1) flash2_bwd_kernel(const __grid_constant__ flash2_bwd_params prm) {
  using T = typename K::T;
  using namespace f2;
  constexpr int D = K::D, BM = K::BM, BN = K::BN, QT = K::QT, DT = K::DT, KS = K::KS, CH = K::CH;
  constexpr int DQ_DT = K::DQ_DT, DQ_COLS = K::DQ_COLS;
  constexpr int LD = K::LD, LDS = K::LDS;
  constexpr float log2e = 1.4426950408889634f;
  const float neg_inf = -__builtin_huge_valf();

  extern __shared__ __align__(128) unsigned char smem_raw[];
  T* const sQ = reinterpret_cast<T*>(smem_raw);
  T* const sdO = sQ + BM * LD;
  T* const sK = sdO + BM * LD;
  T* const sV = sK + BN * LD;
  T* const sdS = sV + BN * LD;
  float* const s_lse = reinterpret_cast<float*>(sdS + BM * LDS);  // lse * log2(e)
  float* const s_delta = s_lse + BM;

  const problem& p = prm.p;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t = lane & 3;
  const std::int64_t kt = blockIdx.x;
  if (kt < prm.kt_offset) return;  // deterministic mode: a key tile of an earlier wave
  const std::int64_t b = blockIdx.y / p.Hkv, kvh = blockIdx.y % p.Hkv;
  const std::int64_t k0 = kt * BN;
  auto off = [](int row, int chunk) { return row * LD + (chunk << 3); };
  auto off_ds = [](int row, int chunk) { return row * LDS + (chunk << 3); };

  // Rows [r0, r0 + R) of two [rows, D] tensors (a, b) into their padded tiles, zeros from
  // row n on; the caller commits the group.
  auto copy_rows = [&]<int R>(std::integral_constant<int, R>, T* sa, const T* ga, T* sb, const T* gb, std::int64_t r0,
                              std::int64_t n) {
#pragma unroll
    for (int rep = 0; rep < R * CH / K::threads; ++rep) {
      const int idx = tid + rep * K::threads;
      const int row = idx / CH, c = idx % CH;
      const bool ok = r0 + row < n;
      const std::int64_t o = ok ? (r0 + row) * D + c * 8 : 0;
      cp_async_16(sa + off(row, c), ga + o, ok ? 16 : 0);
      cp_async_16(sb + off(row, c), gb + o, ok ? 16 : 0);
    }
  };

  const std::int64_t kv_base = (b * p.Hkv + kvh) * p.Nkv * D;
  copy_rows(std::integral_constant<int, BN>{}, sK, static_cast<const T*>(prm.k) + kv_base, sV,
            static_cast<const T*>(prm.v) + kv_base, k0, p.Nkv);
  cp_async_commit();

  // dK, dV of this warp's 16 keys: rows g, g + 8 of the m16 tile, d-tile dt.
  float dk_acc[DT][4], dv_acc[DT][4];
#pragma unroll
  for (int dt = 0; dt < DT; ++dt)
#pragma unroll
    for (int e = 0; e < 4; ++e) dk_acc[dt][e] = dv_acc[dt][e] = 0.f;

  const int key_row = warp * 16;  // this warp's keys in the tile

  // The interval masks as is_visible defines them, per key: key j < Nkv is visible to
  // query i iff j < G (a global key: every row), or i < G (a global row), or j lies in the
  // window of row i. The window's ends are non-decreasing in i (core/tiles.hpp), so the
  // rows whose window holds j are one interval [q_first, q_end), found once per CTA by
  // binary search for this thread's two keys, and the rest folds into q_all: rows
  // [0, q_all) see the key (Nq for a global key, G otherwise, 0 past Nkv). 6 registers.
  // (row_window per element in 64-bit math spilled 68-92 bytes at d = 128; the windows per
  // visit in shared memory 32 bytes on sm_90, separate G and Nkv terms 8.)
  int q_first[2], q_end[2], q_all[2];
#pragma unroll
  for (int hh = 0; hh < 2; ++hh) {
    const std::int64_t j = k0 + key_row + g + 8 * hh;
    std::int64_t a = 0, b = p.Nq;  // first row whose window ends after j
    while (a < b) {
      const std::int64_t m = (a + b) / 2;
      if (window_keys(p, m, m + 1).hi > j)
        b = m;
      else
        a = m + 1;
    }
    q_first[hh] = static_cast<int>(a);
    b = p.Nq;  // first row whose window starts after j
    while (a < b) {
      const std::int64_t m = (a + b) / 2;
      if (window_keys(p, m, m + 1).lo > j)
        b = m;
      else
        a = m + 1;
    }
    q_end[hh] = static_cast<int>(a);
    const std::int64_t all = j < p.mask.global ? p.Nq : (p.mask.global < p.Nq ? p.mask.global : p.Nq);
    q_all[hh] = j < p.Nkv ? static_cast<int>(all) : 0;
    if (j >= p.Nkv) q_first[hh] = q_end[hh] = 0;
  }

  // This CTA's part of the query heads of its KV head (all of them with one split).
  const std::int64_t heads = p.group() / prm.head_splits, h0 = kvh * p.group() + blockIdx.z * heads;
  const std::int64_t h_end = h0 + heads, n_qt = bwd_q_tiles(p);
  const bool listed = K::sparse && prm.q_tiles.num != nullptr;

  // The visits in order: query head h, its n-th visit (the n-th query tile of its list, or of
  // the causal-bound walk when that tile visits). next_visit moves (h, n) to the first visit at
  // or after it and returns its query tile, -1 past the last.
  auto next_visit = [&](std::int64_t& h, std::int64_t& n) -> std::int64_t {
    for (; h < h_end; ++h, n = 0) {
      if (listed) {
        if (n < prm.q_tiles.count(h, kt)) return prm.q_tiles.at(h, kt, n);
      } else {
        for (; n < n_qt; ++n)
          if (bwd_visits(p, n, kt)) return n;
      }
    }
    return -1;
  };
  // A visit's Q and dO rows, lse and D into their one buffer, one cp.async group. Rows past Nq
  // are zeros (lse and D too: the mask terms already leave those rows out, so their P is 0).
  auto load_visit = [&](std::int64_t h, std::int64_t qt) {
    const std::int64_t row0 = (b * p.H + h) * p.Nq, q0 = qt * BM;
    copy_rows(std::integral_constant<int, BM>{}, sQ, static_cast<const T*>(prm.q) + row0 * D, sdO,
              static_cast<const T*>(prm.d_o) + row0 * D, q0, p.Nq);
    if (tid < BM) {
      const bool ok = q0 + tid < p.Nq;
      const std::int64_t o = ok ? row0 + q0 + tid : 0;
      if constexpr (K::prefetch) {  // in flight during the dQ: not a load the warp waits for
        cp_async_4(s_lse + tid, prm.lse + o, ok ? 4 : 0);
        cp_async_4(s_delta + tid, prm.delta + o, ok ? 4 : 0);
      } else {  // the copies' registers spilled 12 bytes there
        s_lse[tid] = ok ? prm.lse[o] : 0.f;
        s_delta[tid] = ok ? prm.delta[o] : 0.f;
      }
    }
    cp_async_commit();
  };

  // One visit's products after its rows are in: S^T, dP^T, dS^T, dV and dK, dS to sdS.
  auto visit_products = [&](std::int64_t h, std::int64_t q0) {
    // The sparse terms (strided, random, block layout) of this thread's 2 keys x 16 queries,
    // bit 16 hh + 2 nt + e, from one rolled loop of out-of-line calls (sparse_visible)
    // before the S^T and dP^T accumulators are live, as the forward does ahead of S = Q K^T.
    std::uint32_t sparse_bits = 0u;
    if (K::sparse_terms && p.mask.has_sparse()) {
#pragma unroll 1
      for (int c = 0; c < 32; ++c) {
        const std::int64_t i = q0 + ((c >> 1) & 7) * 8 + 2 * t + (c & 1);
        const std::int64_t j = k0 + key_row + g + 8 * (c >> 4);
        if (i < p.Nq && j < p.Nkv && sparse_visible(p, h, i, j)) sparse_bits |= 1u << c;
      }
    }

    // Whether every warp's keys see every row of the visit through the interval terms (each
    // thread's two keys: every row below q_all, or the rows inside [q_first, q_end)); a key
    // past Nkv sees none. One vote per warp, so the branch below is uniform.
    bool whole = true;
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) whole &= (q0 + BM <= q_all[hh]) | ((q_first[hh] <= q0) & (q0 + BM <= q_end[hh]));
    const bool whole_visit = K::whole_path && __all_sync(0xffffffffu, whole);

    // The visit's queries in QH parts of BM / QH (a part's S^T, dP^T, P^T, dS^T and its
    // share of dV, dK and dS, in query order): QH = 2 halves the S^T and dP^T accumulators
    // (32 registers instead of 64) for K and V fragments loaded once per part.
#pragma unroll
    for (int qh = 0; qh < K::QH; ++qh) {
      constexpr int QTP = QT / K::QH;  // n8 query tiles of a part
      // ---- S^T = K Q^T and dP^T = V dO^T: this warp's 16 keys x the part's queries --
      float st[QTP][4], dpt[QTP][4];
#pragma unroll
      for (int nt = 0; nt < QTP; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) st[nt][e] = dpt[nt][e] = 0.f;
#pragma unroll
      for (int ks = 0; ks < KS; ++ks) {
        std::uint32_t ak[4], av[4];
        ldmatrix_x4(ak, sK + off(key_row + (lane & 15), 2 * ks + (lane >> 4)));
        ldmatrix_x4(av, sV + off(key_row + (lane & 15), 2 * ks + (lane >> 4)));
#pragma unroll
        for (int np = 0; np < QTP / 2; ++np) {
          const int qrow = (qh * QTP / 2 + np) * 16 + (lane & 7) + ((lane >> 4) << 3);
          std::uint32_t bq[4], bo[4];
          ldmatrix_x4(bq, sQ + off(qrow, 2 * ks + ((lane >> 3) & 1)));
          ldmatrix_x4(bo, sdO + off(qrow, 2 * ks + ((lane >> 3) & 1)));
          mma_16816<T>(st[2 * np], ak, bq[0], bq[1]);
          mma_16816<T>(st[2 * np + 1], ak, bq[2], bq[3]);
          mma_16816<T>(dpt[2 * np], av, bo[0], bo[1]);
          mma_16816<T>(dpt[2 * np + 1], av, bo[2], bo[3]);
        }
      }

      // ---- P^T from lse (masked pairs 0), dS^T = P^T (dP^T - D) --------------
      // Element (key key_row + g + 8 hh, query (qh QTP + nt) * 8 + 2 t + e) is [nt][2 hh + e].
      // masked: the visibility per element; not masked (the warp's keys see every row of the
      // visit: each row then has a visible key, lse finite) none.
      auto p_and_ds = [&](auto masked) {
#pragma unroll
        for (int nt = 0; nt < QTP; ++nt)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const int qn = qh * QTP + nt;  // the query tile in the visit
            const int qc = qn * 8 + 2 * t + e;
            const int i = static_cast<int>(q0) + qc;
            const float l2 = s_lse[qc] * log2e, dd = s_delta[qc];
            const bool row_seen = l2 != neg_inf;
#pragma unroll
            for (int hh = 0; hh < 2; ++hh) {
              // Bitwise, and an exp for every element, of -inf where masked (2^-inf = 0): with &&
              // and || and the exp only where visible nvcc branched around each exp. Per visit
              // (first to last HMMA, sm_90, CUDA 13.0) at 64 x 128 d 128: 66 BRA, 17 BSSY, 1481
              // instructions before, 18, 2, 1388 after; dense 64 x 64 d 128: 57, 19, 1247 -> 6, 2,
              // 1152; 64 x 64 d 64: 84, 39, 1288 -> 18, 7, 1176. Other spellings of the same
              // select (after the exp, or on a temporary) spilled 4 bytes in the dense kernel.
              bool vis = true;
              if constexpr (decltype(masked)::value)
                vis = row_seen & ((i < q_all[hh]) | ((q_first[hh] <= i) & (i < q_end[hh])) |
                                  (((sparse_bits >> (16 * hh + 2 * qn + e)) & 1u) != 0u));
              const float pe = fast_exp2(vis ? fmaf(st[nt][2 * hh + e], prm.scale_log2, -l2) : neg_inf);
              st[nt][2 * hh + e] = pe;
              dpt[nt][2 * hh + e] = pe * (dpt[nt][2 * hh + e] - dd);
            }
          }
      };
      if (whole_visit)  // false at compile time without K::whole_path
        p_and_ds(std::false_type{});
      else
        p_and_ds(std::true_type{});

        // ---- dV += P^T dO, dK += dS^T Q (A fragments from the C fragments) -----
#pragma unroll
      for (int pl = 0; pl < QTP / 2; ++pl) {
        const int ps = qh * QTP / 2 + pl;  // the k16 query step in the visit
        std::uint32_t ap[4], as[4];
        ap[0] = pack2<T>(st[2 * pl][0], st[2 * pl][1]);
        ap[1] = pack2<T>(st[2 * pl][2], st[2 * pl][3]);
        ap[2] = pack2<T>(st[2 * pl + 1][0], st[2 * pl + 1][1]);
        ap[3] = pack2<T>(st[2 * pl + 1][2], st[2 * pl + 1][3]);
        as[0] = pack2<T>(dpt[2 * pl][0], dpt[2 * pl][1]);
        as[1] = pack2<T>(dpt[2 * pl][2], dpt[2 * pl][3]);
        as[2] = pack2<T>(dpt[2 * pl + 1][0], dpt[2 * pl + 1][1]);
        as[3] = pack2<T>(dpt[2 * pl + 1][2], dpt[2 * pl + 1][3]);
        const int qrow = ps * 16 + (lane & 7) + (((lane >> 3) & 1) << 3);
#pragma unroll
        for (int dp = 0; dp < DT / 2; ++dp) {
          std::uint32_t bo[4], bq[4];
          ldmatrix_x4_trans(bo, sdO + off(qrow, 2 * dp + (lane >> 4)));
          ldmatrix_x4_trans(bq, sQ + off(qrow, 2 * dp + (lane >> 4)));
          mma_16816<T>(dv_acc[2 * dp], ap, bo[0], bo[1]);
          mma_16816<T>(dv_acc[2 * dp + 1], ap, bo[2], bo[3]);
          mma_16816<T>(dk_acc[2 * dp], as, bq[0], bq[1]);
          mma_16816<T>(dk_acc[2 * dp + 1], as, bq[2], bq[3]);
        }
        // dS (query-major) to shared memory for dQ = dS K: the as registers hold
        // keys (key_row + g, + 8) x queries (ps * 16 + 2t.., + 8).
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          const int kk = key_row + g + 8 * (r & 1), qq = ps * 16 + 2 * t + 8 * (r >> 1);
          const std::uint32_t pair = as[r];
          const std::uint16_t lo = static_cast<std::uint16_t>(pair & 0xFFFFu);
          const std::uint16_t hi = static_cast<std::uint16_t>(pair >> 16);
          reinterpret_cast<std::uint16_t*>(sdS)[qq * LDS + kk] = lo;
          reinterpret_cast<std::uint16_t*>(sdS)[(qq + 1) * LDS + kk] = hi;
        }
      }
    }
  };
  // One visit's dQ rows += scale dS K (reads sdS and sK only), atomically or to its slice.
  auto visit_dq = [&](std::int64_t head_row0, std::int64_t q0) {
    // ---- dQ rows dq_row.. (16), columns dq_col.. (DQ_COLS) += scale dS K, atomically into
    // the accumulator, in chunks of DQ_DT n8 tiles.
    const int dq_row = warp % K::WQM * 16, dq_col = warp / K::WQM * DQ_COLS;
#pragma unroll
    for (int cc = 0; cc < DQ_COLS / 8; cc += DQ_DT) {
      const int c0 = dq_col / 8 + cc;
      float dq[DQ_DT][4];
#pragma unroll
      for (int dt = 0; dt < DQ_DT; ++dt)
#pragma unroll
        for (int e = 0; e < 4; ++e) dq[dt][e] = 0.f;
#pragma unroll
      for (int ks = 0; ks < BN / 16; ++ks) {
        std::uint32_t a[4];
        ldmatrix_x4(a, sdS + off_ds(dq_row + (lane & 15), 2 * ks + (lane >> 4)));
        const int krow = ks * 16 + (lane & 7) + (((lane >> 3) & 1) << 3);
#pragma unroll
        for (int dp = 0; dp < DQ_DT / 2; ++dp) {
          std::uint32_t bk[4];
          ldmatrix_x4_trans(bk, sK + off(krow, c0 + 2 * dp + (lane >> 4)));
          mma_16816<T>(dq[2 * dp], a, bk[0], bk[1]);
          mma_16816<T>(dq[2 * dp + 1], a, bk[2], bk[3]);
        }
      }
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const std::int64_t i = q0 + dq_row + g + 8 * hh;
        if (i >= p.Nq) continue;
        if (prm.dq_part) {  // deterministic: this key tile's own slice in the wave, plain stores
          float* const row = prm.dq_part + ((kt * p.B * p.H * p.Nq) + head_row0 + i) * D + c0 * 8;
#pragma unroll
          for (int dt = 0; dt < DQ_DT; ++dt)
            *reinterpret_cast<float2*>(row + dt * 8 + 2 * t) =
                make_float2(prm.scale * dq[dt][2 * hh], prm.scale * dq[dt][2 * hh + 1]);
        } else {
          float* const row = prm.dq_acc + (head_row0 + i) * D + c0 * 8;
#pragma unroll
          for (int dt = 0; dt < DQ_DT; ++dt)
            atomic_add2(row + dt * 8 + 2 * t, prm.scale * dq[dt][2 * hh], prm.scale * dq[dt][2 * hh + 1]);
        }
      }
    }
  };

  if constexpr (K::prefetch) {
    // The next visit's copies are issued once this visit's last reads of sQ, sdO, lse and D are
    // done, and land during its dQ (one buffer: no registers held across the products).
    std::int64_t h = h0, n = 0;
    std::int64_t qt = next_visit(h, n);
    if (qt >= 0) load_visit(h, qt);
    while (qt >= 0) {
      const std::int64_t head_row0 = (b * p.H + h) * p.Nq, q0 = qt * BM;
      cp_async_wait<0>();
      __syncthreads();  // this visit's rows are in; every warp is done with the last visit's sdS
      visit_products(h, q0);
      __syncthreads();  // sdS is whole; sQ, sdO, lse and D are free
      ++n;
      qt = next_visit(h, n);
      if (qt >= 0) load_visit(h, qt);
      visit_dq(head_row0, q0);
    }
  } else {
    static_assert(!K::sparse, "the plain loop walks the causal bound only");
    for (std::int64_t h = h0; h < h_end; ++h)
      for (std::int64_t qt = 0; qt < n_qt; ++qt) {
        if (!bwd_visits(p, qt, kt)) continue;
        __syncthreads();  // the previous visit is done with sQ, sdO, sdS, lse and D
        load_visit(h, qt);
        cp_async_wait<0>();
        __syncthreads();
        visit_products(h, qt * BM);
        __syncthreads();
        visit_dq((b * p.H + h) * p.Nq, qt * BM);
      }
  }
  cp_async_wait<0>();  // a key tile no query tile visits still waits for its copies

  // ---- dK = scale dS^T Q and dV, written once (zero for keys no query sees); with head
  // splits this CTA's part in fp32, for the reduce kernel.
  T* const gdK = static_cast<T*>(prm.dk) + kv_base;
  T* const gdV = static_cast<T*>(prm.dv) + kv_base;
  float* const part = prm.dkv_part ? prm.dkv_part + blockIdx.z * 2 * p.B * p.Hkv * p.Nkv * D + kv_base : nullptr;
#pragma unroll
  for (int hh = 0; hh < 2; ++hh) {
    const std::int64_t j = k0 + key_row + g + 8 * hh;
    if (j >= p.Nkv) continue;
#pragma unroll
    for (int dt = 0; dt < DT; ++dt) {
      const int c = dt * 8 + 2 * t;
      if (part) {
        *reinterpret_cast<float2*>(part + j * D + c) =
            make_float2(prm.scale * dk_acc[dt][2 * hh], prm.scale * dk_acc[dt][2 * hh + 1]);
        *reinterpret_cast<float2*>(part + p.B * p.Hkv * p.Nkv * D + j * D + c) =
            make_float2(dv_acc[dt][2 * hh], dv_acc[dt][2 * hh + 1]);
      } else {
        *reinterpret_cast<std::uint32_t*>(gdK + j * D + c) =
            pack2<T>(prm.scale * dk_acc[dt][2 * hh], prm.scale * dk_acc[dt][2 * hh + 1]);
        *reinterpret_cast<std::uint32_t*>(gdV + j * D + c) = pack2<T>(dv_acc[dt][2 * hh], dv_acc[dt][2 * hh + 1]);
      }
    }
  }
}

// Host launcher of one instantiation (called from its own translation unit).
template <class K>
void launch_flash2_bwd(const flash2_bwd_params& prm, void* stream) {
  static const bool configured = [] {
    ATTN_CUDA_CHECK(
        cudaFuncSetAttribute(flash2_bwd_kernel<K>, cudaFuncAttributeMaxDynamicSharedMemorySize, K::smem_bytes));
    return true;
  }();
  (void)configured;
  const problem& p = prm.p;
  // Deterministic mode: the CTAs of key tiles [kt_offset, kt_offset + dq_slices); those before
  // return at once (an offset added to blockIdx.x spilled 8-12 bytes at d = 128).
  const std::int64_t end = prm.kt_offset + prm.dq_slices, n_kt = bwd_kv_tiles(p);
  const std::int64_t tiles = prm.dq_part && end < n_kt ? end : n_kt;
  const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>(p.B * p.Hkv),
                  static_cast<unsigned>(prm.head_splits));
  launch(flash2_bwd_kernel<K>, grid, K::threads, K::smem_bytes, static_cast<cudaStream_t>(stream), prm);
  ATTN_CUDA_CHECK_LAUNCH();
}

}  // namespace attnbench::cuda

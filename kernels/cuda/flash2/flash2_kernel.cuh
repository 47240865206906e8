// flash2_fwd_kernel: a FlashAttention-2-style forward pass on tensor cores
// (mma.sync m16n8k16, fp16/bf16 in, fp32 accumulate).
//
// The idea (FA2 over FA1): the loop over key tiles is the inner loop of one
// CTA that owns a tile of query rows, so O, the running max m and the running
// sum l stay in registers for the whole pass and O is written once, normalised
// at the end; FA1 instead re-read and re-wrote O, l, m per key block. Per key
// tile: S = Q K^T (ldmatrix + mma), mask, online softmax in the log2 domain
// (exp2 with scale * log2(e) folded into one FMA), P converted in registers
// from the C-fragment layout of S to the A-fragment layout of P V (no shared
// memory round trip), O += P V with V read by ldmatrix.trans. K and V tiles
// arrive by cp.async into two stages: the copy of tile j+1 is in flight while
// tile j is computed. Shared memory rows are padded by 16 bytes, so the 8 row
// addresses of every ldmatrix phase land in 8 different 16-byte bank groups
// (conflict-free; see padded_offset below for why a pad and not an XOR swizzle).
//
// Expected bottleneck (not measured here; docs/flash2.md says how): a CTA
// does 4 * BM * d FLOPs per key against 4 * d bytes of K and V (fp16/bf16),
// i.e. BM FLOP per K/V byte -- 128 for BM = 128, below H200's ~200 FLOP/B
// ridge. If every CTA's K/V reads came from HBM the kernel would be memory
// bound; it can reach the tensor-core limit only because the Nq / BM CTAs of
// one head re-read the same K/V and the L2 (50 MB) serves those re-reads.
// The same kernel serves the sparse, packed-GQA and split-KV rows through
// runtime parameters (flash2_params.hpp). Masks with sparse terms (strided,
// random blocks, block layouts; docs/masks.md) take the runner's key-tile
// lists on the sparse row, and their element-wise mask comes from one rolled
// loop over sparse_visible per masked tile, ahead of S = Q K^T (interval masks
// never enter it; the decode instantiations have no such path).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#if !defined(ATTN_EMULATE)  // the host emulator (tests/emu) has no CUDA runtime
#include "core/cuda/cuda_check.cuh"
#include "core/cuda/launch.cuh"
#endif
#include "kernels/cuda/flash2/flash2_params.hpp"
#include "kernels/cuda/flash2/flash2_ptx.cuh"
#include "kernels/cuda/flash2/flash2_traits.cuh"

namespace attnbench::cuda {

namespace f2 {

constexpr float neg_inf = -__builtin_huge_valf();

// Element offset of (row, 16-byte chunk) in a [rows][D + 8] tile. The 16-byte
// pad per row shifts consecutive rows by one 16-byte bank group (row stride
// 272 B for d = 128, 144 B for d = 64, both = 16 mod 128), so the 8 row
// addresses of each ldmatrix phase hit 8 different bank groups. An XOR
// swizzle (chunk ^ row % 8) would save the pad (6% of the tile). Registers
// are no argument either way: the swizzled draft measured 219 registers
// for the 64x64 d = 128 tile, the padded kernel takes 245 there (sm_90,
// docs/flash2.md), both without spills; the swizzle did spill at 128x128
// (since reworked). The pad stays because its address math is additive in
// the k step and its conflict-freedom is a one-line argument.
template <int D>
__device__ __forceinline__ int padded_offset(int row, int chunk) {
  return row * (D + 8) + (chunk << 3);
}

}  // namespace f2

template <class K>
__global__ void __launch_bounds__(K::threads, K::min_ctas)
    flash2_fwd_kernel(const __grid_constant__ flash2_params prm) {
  using T = typename K::T;
  using namespace f2;
  constexpr int D = K::D, BM = K::BM, BN = K::BN, MT = K::MT, NT = K::NT, DT = K::DT;
  constexpr int KS = K::KS, PS = K::PS, CH = K::CH, WN = K::WN;

  extern __shared__ __align__(128) unsigned char smem_raw[];
  T* const sQ = reinterpret_cast<T*>(smem_raw);
  T* const sK = sQ + BM * K::LD;      // [2][BN][LD]
  T* const sV = sK + 2 * BN * K::LD;  // [2][BN][LD]

  const problem& p = prm.p;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wm = warp % K::WM, wn = warp / K::WM;
  const int g = lane >> 2, t = lane & 3;

  // ---- which rows, heads and key tiles this CTA owns ------------------------
  const int pack = prm.pack;
  const std::int64_t groups = p.H / pack;
  const std::int64_t b = blockIdx.y / groups;
  const std::int64_t head0 = (blockIdx.y % groups) * pack;
  const std::int64_t kvh = head0 / p.group();
  const std::int64_t rows = packed_rows(p, pack);
  const std::int64_t r0 = static_cast<std::int64_t>(blockIdx.x) * BM;
  const std::int64_t r1 = r0 + BM < rows ? r0 + BM : rows;
  const span64 qr = packed_query_range(r0, r1, pack);
  // A listed walk (sparse masks, pack 1): row tile blockIdx.x is query tile blockIdx.x.
  const bool listed = prm.tiles.num != nullptr;
  const tile_spans spans = listed ? tile_spans{} : kv_tiles_for_queries(p, qr.lo, qr.hi, prm.walk);
  const std::int64_t walk_count = listed ? prm.tiles.count(head0, blockIdx.x) : spans.count();
  const span64 ord = split_ordinals(walk_count, prm.splits, blockIdx.z);
  const int n_tiles = static_cast<int>(ord.size());
  const std::int64_t first_n = spans.first.size();
  auto tile_at = [&](std::int64_t o) -> std::int64_t {
    if (listed) return prm.tiles.at(head0, blockIdx.x, o);
    return o < first_n ? spans.first.lo + o : spans.second.lo + (o - first_n);
  };

  const T* const gQ = static_cast<const T*>(prm.q);
  const std::int64_t kv_off = (b * p.Hkv + kvh) * p.Nkv * D;
  const T* const gK = static_cast<const T*>(prm.k) + kv_off;
  const T* const gV = static_cast<const T*>(prm.v) + kv_off;

  // Global row (b, head, query) of packed row r.
  auto flat_row = [&](std::int64_t r) { return (b * p.H + head0 + r % pack) * p.Nq + r / pack; };

  auto load_kv = [&](std::int64_t kt, int stage) {
    const std::int64_t n0 = kt * BN;
    T* const dk = sK + stage * BN * K::LD;
    T* const dv = sV + stage * BN * K::LD;
#pragma unroll
    for (int rep = 0; rep < BN * CH / K::threads; ++rep) {
      const int idx = tid + rep * K::threads;
      const int row = idx / CH, c = idx % CH;
      const bool ok = n0 + row < p.Nkv;
      const std::int64_t off = ok ? (n0 + row) * D + c * 8 : 0;
      cp_async_16(dk + padded_offset<D>(row, c), gK + off, ok ? 16 : 0);
      cp_async_16(dv + padded_offset<D>(row, c), gV + off, ok ? 16 : 0);
    }
  };

  if (n_tiles > 0) {
#pragma unroll
    for (int rep = 0; rep < BM * CH / K::threads; ++rep) {
      const int idx = tid + rep * K::threads;
      const int row = idx / CH, c = idx % CH;
      const bool ok = r0 + row < rows;
      const std::int64_t off = ok ? flat_row(r0 + row) * D + c * 8 : 0;
      cp_async_16(sQ + padded_offset<D>(row, c), gQ + off, ok ? 16 : 0);
    }
    load_kv(tile_at(ord.lo), 0);
    cp_async_commit();
  }

  // ---- per-thread state: rows g and g + 8 of each of the warp's m16 tiles ---
  float o_acc[MT][DT][4];
  float m_row[MT][2], l_row[MT][2];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
    for (int dt = 0; dt < DT; ++dt)
#pragma unroll
      for (int e = 0; e < 4; ++e) o_acc[mt][dt][e] = 0.f;
    m_row[mt][0] = m_row[mt][1] = neg_inf;
    l_row[mt][0] = l_row[mt][1] = 0.f;
  }
  std::uint32_t q_frag[K::q_in_regs ? KS : 1][4];
  const float sl2 = prm.scale_log2;
  auto row_base = [&](int mt) { return (wm * MT + mt) * 16; };
  // Visible keys of this thread's rows for the element-wise mask, as
  // is_visible defines them: keys < min(G, Nkv), plus the row's window
  // [lo, hi) (all keys for a global row). Kept as 32-bit ints (4 registers
  // per m16 tile) instead of calling is_visible per element in 64-bit math,
  // which cost ptxas spills in the 128x128 tile.
  const int glob_keys = static_cast<int>(p.mask.global < p.Nkv ? p.mask.global : p.Nkv);
  int vis_lo[MT][2], vis_hi[MT][2];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const span64 w = row_window(p, (r0 + row_base(mt) + g + 8 * h) / pack);
      vis_lo[mt][h] = static_cast<int>(w.lo);
      vis_hi[mt][h] = static_cast<int>(w.hi);
    }

  for (int it = 0; it < n_tiles; ++it) {
    const int stage = it & 1;
    const std::int64_t kt = tile_at(ord.lo + it);
    if (it + 1 < n_tiles) {
      load_kv(tile_at(ord.lo + it + 1), stage ^ 1);
      cp_async_commit();
      cp_async_wait<1>();  // tile `it` (and Q) landed; tile it + 1 stays in flight
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();
    const T* const tK = sK + stage * BN * K::LD;
    const T* const tV = sV + stage * BN * K::LD;

    if constexpr (K::q_in_regs) {
      if (it == 0) {
#pragma unroll
        for (int ks = 0; ks < KS; ++ks)
          ldmatrix_x4(q_frag[ks], sQ + padded_offset<D>(row_base(0) + (lane & 15), 2 * ks + (lane >> 4)));
      }
    }

    // ---- which keys need the element-wise mask ------------------------------
    const std::int64_t k0 = kt * BN;
    const std::int64_t k1 = k0 + BN < p.Nkv ? k0 + BN : p.Nkv;
    const bool needs_mask = k0 + BN > p.Nkv || !tile_fully_visible(p, qr, k0, k1);
    // Sparse terms (strided, random, layout): this thread's 2 NT keys of each
    // of its rows as bits, from one rolled loop (one inlined copy of
    // sparse_visible instead of MT x NT x 4 unrolled ones), inlined, before
    // S = Q K^T while S's registers are not yet live: 0 spills; inside the
    // mask, or as an out-of-line call, it spilled 4-12 bytes in the d128
    // 128x32 and decode tiles.
    static_assert(2 * NT <= 32, "sparse bits: one word per row");
    std::uint32_t sparse_bits[MT][2];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) sparse_bits[mt][0] = sparse_bits[mt][1] = 0u;
    if constexpr (K::WN == 1) {  // main-loop tiles; the decode rows claim no sparse term
      if (needs_mask && p.mask.has_sparse()) {
#pragma unroll 1
        for (int row_slot = 0; row_slot < 2 * MT; ++row_slot) {
          const std::int64_t r = r0 + row_base(row_slot >> 1) + g + 8 * (row_slot & 1);
          std::uint32_t bits = 0u;
          if (r < rows) {
            const std::int64_t i = r / pack, head = head0 + r % pack;
#pragma unroll 1
            for (int c = 0; c < 2 * NT; ++c) {
              const std::int64_t j = k0 + wn * K::WKEYS + (c >> 1) * 8 + 2 * t + (c & 1);
              if (j < p.Nkv && sparse_visible_inline(p, head, i, j)) bits |= 1u << c;
            }
          }
#pragma unroll
          for (int mt = 0; mt < MT; ++mt)
#pragma unroll
            for (int h = 0; h < 2; ++h)
              if (row_slot == 2 * mt + h) sparse_bits[mt][h] = bits;
        }
      }
    }

    // ---- S = Q K^T (raw scores, this warp's rows x its WKEYS keys) ----------
    float s[MT][NT][4];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) s[mt][nt][e] = 0.f;
#pragma unroll
    for (int ks = 0; ks < KS; ++ks) {
      std::uint32_t a[MT][4];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        if constexpr (K::q_in_regs) {
#pragma unroll
          for (int e = 0; e < 4; ++e) a[mt][e] = q_frag[ks][e];
        } else {
          ldmatrix_x4(a[mt], sQ + padded_offset<D>(row_base(mt) + (lane & 15), 2 * ks + (lane >> 4)));
        }
      }
#pragma unroll
      for (int np = 0; np < NT / 2; ++np) {
        // Matrices: keys n..n+7 at k chunks 2ks, 2ks+1, then keys n+8..n+15:
        // b0/b1 of n-tile 2np, then of n-tile 2np + 1.
        std::uint32_t bk[4];
        const int key = wn * K::WKEYS + np * 16 + (lane & 7) + ((lane >> 4) << 3);
        ldmatrix_x4(bk, tK + padded_offset<D>(key, 2 * ks + ((lane >> 3) & 1)));
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          mma_16816<T>(s[mt][2 * np], a[mt], bk[0], bk[1]);
          mma_16816<T>(s[mt][2 * np + 1], a[mt], bk[2], bk[3]);
        }
      }
    }

    // ---- mask: only tiles that cross a window edge, Nkv, or are ragged ------
    if (needs_mask) {
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int lo = vis_lo[mt][h], hi = vis_hi[mt][h];
#pragma unroll
          for (int nt = 0; nt < NT; ++nt)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
              const int j = static_cast<int>(k0) + wn * K::WKEYS + nt * 8 + 2 * t + e;
              if (!(j < glob_keys || (lo <= j && j < hi) || ((sparse_bits[mt][h] >> (2 * nt + e)) & 1u)))
                s[mt][nt][2 * h + e] = neg_inf;
            }
        }
    }

    // ---- online softmax (rows are shared by the 4 threads of a quad) --------
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float mx = neg_inf;
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) mx = fmaxf(mx, fmaxf(s[mt][nt][2 * h], s[mt][nt][2 * h + 1]));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        const float m_new = fmaxf(m_row[mt][h], mx);
        // A row with no visible key so far keeps m = -inf: exponentiate against
        // 0 instead, so exp2(-inf - (-inf)) = NaN never happens; its P is 0.
        const float m_scaled = (m_new == neg_inf ? 0.f : m_new) * sl2;
        const float alpha = fast_exp2(m_row[mt][h] * sl2 - m_scaled);  // 0 when m_old = -inf
        m_row[mt][h] = m_new;
        float sum = 0.f;
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const float pe = fast_exp2(fmaf(s[mt][nt][2 * h + e], sl2, -m_scaled));
            s[mt][nt][2 * h + e] = pe;
            sum += pe;
          }
        l_row[mt][h] = l_row[mt][h] * alpha + sum;  // per-thread partial; quad sum at the end
#pragma unroll
        for (int dt = 0; dt < DT; ++dt) {
          o_acc[mt][dt][2 * h] *= alpha;
          o_acc[mt][dt][2 * h + 1] *= alpha;
        }
      }

      // ---- O += P V: C fragments of S (n-tiles 2ps, 2ps+1) are the A fragment --
#pragma unroll
    for (int ps = 0; ps < PS; ++ps) {
      std::uint32_t a[MT][4];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        a[mt][0] = pack2<T>(s[mt][2 * ps][0], s[mt][2 * ps][1]);
        a[mt][1] = pack2<T>(s[mt][2 * ps][2], s[mt][2 * ps][3]);
        a[mt][2] = pack2<T>(s[mt][2 * ps + 1][0], s[mt][2 * ps + 1][1]);
        a[mt][3] = pack2<T>(s[mt][2 * ps + 1][2], s[mt][2 * ps + 1][3]);
      }
#pragma unroll
      for (int dp = 0; dp < DT / 2; ++dp) {
        // Transposed 8x8 matrices: keys k..k+7 / k+8..k+15 at d chunk 2dp, then
        // at chunk 2dp+1: b0/b1 of d-tile 2dp, then of d-tile 2dp + 1.
        std::uint32_t bv[4];
        const int key = wn * K::WKEYS + ps * 16 + (lane & 7) + (((lane >> 3) & 1) << 3);
        ldmatrix_x4_trans(bv, tV + padded_offset<D>(key, 2 * dp + (lane >> 4)));
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          mma_16816<T>(o_acc[mt][2 * dp], a[mt], bv[0], bv[1]);
          mma_16816<T>(o_acc[mt][2 * dp + 1], a[mt], bv[2], bv[3]);
        }
      }
    }
    __syncthreads();  // every warp is done with this stage before it is refilled
  }

  // ---- epilogue: merge warp columns, normalise, write O and lse once --------
  float* const sm_m = reinterpret_cast<float*>(smem_raw);  // [WN][BM]
  float* const sm_l = sm_m + WN * BM;                      // [WN][BM]
  float* const sO = sm_l + WN * BM;                        // [WN][BM][o_stride]
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float l = l_row[mt][h];
      l += __shfl_xor_sync(0xffffffffu, l, 1);
      l += __shfl_xor_sync(0xffffffffu, l, 2);
      l_row[mt][h] = l;
      if (t == 0) {
        const int lr = row_base(mt) + g + 8 * h;
        sm_m[wn * BM + lr] = m_row[mt][h];
        sm_l[wn * BM + lr] = l;
      }
    }
  __syncthreads();
  // Merged state of local row lr over the WN warp columns: max M and sum L
  // (L = 0 and M = -inf for a row with no visible key).
  auto merged = [&](int lr, float& M, float& L) {
    M = neg_inf;
#pragma unroll
    for (int w = 0; w < WN; ++w) M = fmaxf(M, sm_m[w * BM + lr]);
    L = 0.f;
#pragma unroll
    for (int w = 0; w < WN; ++w) {
      const float mw = sm_m[w * BM + lr];
      if (mw != neg_inf) L += sm_l[w * BM + lr] * fast_exp2((mw - M) * sl2);
    }
  };
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int lr = row_base(mt) + g + 8 * h;
      float M, L;
      merged(lr, M, L);
      // Own m finite implies own l >= 1, hence L > 0.
      const float f = m_row[mt][h] == neg_inf ? 0.f : fast_exp2((m_row[mt][h] - M) * sl2) / L;
      float* const dst = sO + (wn * BM + lr) * K::o_stride + 2 * t;
#pragma unroll
      for (int dt = 0; dt < DT; ++dt)
        *reinterpret_cast<float2*>(dst + dt * 8) = make_float2(o_acc[mt][dt][2 * h] * f, o_acc[mt][dt][2 * h + 1] * f);
    }
  __syncthreads();

  const std::int64_t rows_total = p.B * p.H * p.Nq;
#pragma unroll
  for (int rep = 0; rep < BM * CH / K::threads; ++rep) {
    const int idx = tid + rep * K::threads;
    const int row = idx / CH, c = idx % CH;
    if (r0 + row >= rows) continue;
    float acc[8];
#pragma unroll
    for (int e = 0; e < 8; ++e) acc[e] = 0.f;
#pragma unroll
    for (int w = 0; w < WN; ++w) {
      // Threads c and c + 4 of a quarter-warp are 32 words apart: the odd
      // group of four reads its upper half first, so each 128-bit phase
      // touches 32 distinct banks (no 2-way conflict).
      const float* src = sO + (w * BM + row) * K::o_stride + c * 8;
      const bool hi_first = (c >> 2) & 1;
      const float4 u = *reinterpret_cast<const float4*>(src + (hi_first ? 4 : 0));
      const float4 z = *reinterpret_cast<const float4*>(src + (hi_first ? 0 : 4));
      const float4 x = hi_first ? z : u, y = hi_first ? u : z;
      acc[0] += x.x;
      acc[1] += x.y;
      acc[2] += x.z;
      acc[3] += x.w;
      acc[4] += y.x;
      acc[5] += y.y;
      acc[6] += y.z;
      acc[7] += y.w;
    }
    const std::int64_t fr = flat_row(r0 + row);
    float lse = 0.f;
    if (c == 0) {
      float M, L;
      merged(row, M, L);
      lse = L > 0.f ? M * prm.scale + logf(L) : neg_inf;
    }
    if (prm.splits == 1) {
      uint4 packed;
      packed.x = pack2<T>(acc[0], acc[1]);
      packed.y = pack2<T>(acc[2], acc[3]);
      packed.z = pack2<T>(acc[4], acc[5]);
      packed.w = pack2<T>(acc[6], acc[7]);
      *reinterpret_cast<uint4*>(static_cast<T*>(prm.o) + fr * D + c * 8) = packed;
      if (c == 0) prm.lse[fr] = lse;
    } else {
      float* const dst = prm.o_part + (blockIdx.z * rows_total + fr) * D + c * 8;
      *reinterpret_cast<float4*>(dst) = make_float4(acc[0], acc[1], acc[2], acc[3]);
      *reinterpret_cast<float4*>(dst + 4) = make_float4(acc[4], acc[5], acc[6], acc[7]);
      if (c == 0) prm.lse_part[blockIdx.z * rows_total + fr] = lse;
    }
  }
}

// Grid of one launch: row tiles x (batch, head group) x splits.
template <class K>
dim3 flash2_grid(const flash2_params& prm) {
  const problem& p = prm.p;
  return dim3(static_cast<unsigned>(row_tiles(p, prm.pack, K::BM)), static_cast<unsigned>(p.B * (p.H / prm.pack)),
              static_cast<unsigned>(prm.splits));
}

// Empty when prm.p's tile is the compiled one; else why not. A problem
// planned for another Br/Bc would make the byte/FLOP models and the tile walk
// disagree with what runs.
template <class K>
std::string flash2_tile_mismatch(const flash2_params& prm) {
  if (prm.p.Br == K::BM && prm.p.Bc == K::BN) return {};
  return "flash2: problem tile Br x Bc = " + std::to_string(prm.p.Br) + "x" + std::to_string(prm.p.Bc) +
         " launched on the " + std::to_string(K::BM) + "x" + std::to_string(K::BN) + " kernel";
}

#if !defined(ATTN_EMULATE)
// Host launcher of one instantiation (called from its own translation unit).
// The host emulator (tests/emu/emu_launch.hpp) defines its own, with the same
// grid and tile check.
template <class K>
void launch_flash2_fwd(const flash2_params& prm, void* stream) {
  if (std::string why = flash2_tile_mismatch<K>(prm); !why.empty()) throw backend_error(why);
  static const bool configured = [] {
    ATTN_CUDA_CHECK(
        cudaFuncSetAttribute(flash2_fwd_kernel<K>, cudaFuncAttributeMaxDynamicSharedMemorySize, K::smem_bytes));
    return true;
  }();
  (void)configured;
  launch(flash2_fwd_kernel<K>, flash2_grid<K>(prm), K::threads, K::smem_bytes, static_cast<cudaStream_t>(stream), prm);
  ATTN_CUDA_CHECK_LAUNCH();
}
#endif  // !ATTN_EMULATE

}  // namespace attnbench::cuda

#if defined(ATTN_EMULATE)
#include <attn_emu_launch.hpp>  // provided by the emulator's include path (tests/emu/include)
#endif

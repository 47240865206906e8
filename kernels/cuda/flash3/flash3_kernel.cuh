// flash3_fwd_kernel: a FlashAttention-3-style forward pass for Hopper
// (sm_90a): TMA loads, wgmma, warp specialization, pingpong scheduling.
//
// The idea (FA3 over FA2): on Hopper the tensor cores are fed asynchronously.
// A producer warp (warpgroup 0, registers cut to 24 by setmaxnreg) issues TMA
// copies (cp.async.bulk.tensor, 128-byte swizzle) of the Q tile once and of
// the K and V tiles through an S-stage ring of full/empty mbarriers
// (expect_tx counts the bytes); no consumer thread computes a load address.
// Two consumer warpgroups (registers raised to 240) own 64 query rows each
// and run wgmma.mma_async: S = Q K^T with both operands read from shared
// memory through matrix descriptors, O += P V with P from registers (the
// fp32 accumulator fragment of S re-packed in registers as the A fragment;
// V is read MN-major, transpose bit set, so no V transpose is needed for
// 16-bit types). Softmax is online, in registers, in the log2 domain
// (exp2 with scale * log2(e) in one FMA), as in flash2.
//
// Overlap, two levels:
//   * pingpong: the warpgroups take turns issuing their GEMMs (named
//     barriers 1 and 2): while one warpgroup's GEMMs run on the tensor cores
//     the other does its softmax;
//   * intra-warpgroup: in iteration j a warpgroup issues S_j = Q K_j^T and
//     O += P_{j-1} V_{j-1} back to back, waits only for S_j, and does the
//     softmax of S_j while the P V GEMM is still running.
// What changed from flash2 (flash2_kernel.cuh): mma.sync + ldmatrix +
// cp.async by every warp, synchronised by __syncthreads, become TMA by one
// thread + wgmma by warpgroups synchronised by mbarriers; 128 rows per CTA
// with 64-row warpgroup tiles instead of 16-row warp tiles (4x fewer
// shared-memory operand reads per FLOP); the tile walk, packing, masks and
// the epilogue's conventions are flash2's.
//
// Expected bottleneck (estimate, docs/flash3.md; not measured yet): the
// tensor cores. Per consumer warpgroup and 128-key tile at d = 128 the GEMMs
// are 4 * 64 * 128 * 128 FLOP = 1024 cycles of an SM's dense bf16 rate (4096
// FLOP/clk), the softmax 8192 exp2 = 512 cycles of MUFU (16/clk) plus its
// FMAs; the pingpong hides one warpgroup's softmax behind the other's GEMMs.
// At d = 64 the GEMMs halve and the exponentials bind. K/V bytes per FLOP are
// flash2's at Br = 128 (128 FLOP/B; the L2 serves the re-reads).
//
// FP8 (e4m3, the flash3_fp8 row; FA3's third Hopper feature): Q, K, V are
// e4m3 codes with a per-tensor scale each, folded in: the scores by
// descale_q * descale_k (into the exp2 scale), O by descale_v. S = Q K^T and
// O += P V run as m64nNk32 e4m3 wgmma with fp32 accumulators (twice the
// 16-bit rate). 8-bit wgmma has no transpose, so V (keys x d, d contiguous)
// is copied to V^T (d x keys, keys contiguous) in shared memory by the
// producer warpgroup's warps 1-3, with 32-bit loads, 4 x 4 byte transposes
// (prmt) and 32-bit stores, through a third mbarrier ring. The transposer
// also permutes the keys within each 16-key block so that the accumulator
// fragment of S, converted in place to e4m3 (cvt.rn.satfinite.e4m3x2), is
// already the A fragment of P V: the A fragment of an 8-bit k32 step wants
// columns 4t..4t+3 of a row in one register, S's fragment holds columns
// 2t, 2t+1, 8+2t, 9+2t; instead of shuffling P across lanes (FA3 permutes
// registers), V^T's column 4t+i holds key 8(i/2) + 2t + i%2 (P V sums over
// keys, so any order shared by P and V^T gives the same O). P is exponentiated
// with FA3's max offset of 8 (P in (0, 256]) so small probabilities stay out
// of e4m3's subnormals; l sums the unrounded fp32 P, the offset cancels in
// O = P V / l and is taken out of the log-sum-exp. O is written in bf16
// through its own staging tile. Expected bottleneck: the exponentials (the
// GEMMs take half the 16-bit time, the softmax the same), then the V
// transpose's shared-memory traffic (16 KB read + 16 KB written per 128-key
// tile at d = 128, against 1024 cycles of both warpgroups' GEMMs).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/launch.cuh"
#include "kernels/cuda/flash2/flash2_params.hpp"  // packed_rows, packed_query_range
#include "kernels/cuda/flash2/flash2_ptx.cuh"     // f2::fast_exp2, f2::pack2
#include "kernels/cuda/flash3/flash3_params.hpp"
#include "kernels/cuda/flash3/flash3_ptx.cuh"
#include "kernels/cuda/flash3/flash3_traits.cuh"

namespace attnbench::cuda {

namespace f3 {

constexpr float neg_inf = -__builtin_huge_valf();

// Fault switches exist only in the emulator build (emu.flash3_faults).
__device__ __forceinline__ bool faulty(const flash3_params& prm, flash3_fault f) {
#if defined(ATTN_EMULATE)
  return prm.fault == f;
#else
  (void)prm;
  (void)f;
  return false;
#endif
}

// Named barrier ids: 0 is __syncthreads; 1, 2 the GEMM turns of consumer
// warpgroups 0, 1; 3, 4 their epilogue staging.
constexpr int kTurnBarrier = 1, kEpilogueBarrier = 3;

// Swizzle<B,4,3> of a byte offset from a 1024-aligned tile base: the 16-byte
// chunk bits XOR the row phase (bits 7..), as TMA writes and wgmma reads.
template <int RowBytes>
__device__ __forceinline__ int swizzled(int off) {
  constexpr int mask = RowBytes == 128 ? 7 : 3;
  return off ^ (((off >> 7) & mask) << 4);
}
template <int RowBytes>
constexpr smem_swizzle swizzle_of() {
  return RowBytes == 128 ? smem_swizzle::b128 : smem_swizzle::b64;
}

// fp8: 4 fp32 values -> 4 e4m3 bytes, a first.
__device__ __forceinline__ std::uint32_t pack4_e4m3(float a, float b, float c, float d) {
  return static_cast<std::uint32_t>(cvt_e4m3x2(b, a)) | (static_cast<std::uint32_t>(cvt_e4m3x2(d, c)) << 16);
}

// fp8: the V -> V^T copy of one stage by the transposer threads (tt in
// [0, 96)). Work item (kb, t, dg): keys 16 kb + {2t, 2t+1, 8+2t, 9+2t} x
// columns 4 dg..4 dg+3 of V (four 32-bit loads, one per key) become columns
// 16 kb + 4t..4t+3 of V^T rows 4 dg..4 dg+3 (four 32-bit stores). A warp's
// 32 items are 4 dg x 4 t x 2 kb: its loads and its stores each touch 16
// banks twice (2-way conflicts) with the 128B swizzle.
template <class K>
__device__ __forceinline__ void transpose_v_stage(const unsigned char* v, unsigned char* vt, int tt, bool permute) {
  constexpr int D = K::D, BN = K::BN, items = BN * D / 16;
  for (int i = tt; i < items; i += K::transposer_threads) {
    const int dgl = i % 4, t = (i / 4) % 4, kbl = (i / 16) % 2, rest = i / 32;
    const int dg = (rest % (D / 16)) * 4 + dgl, kb = (rest / (D / 16)) * 2 + kbl;
    const int col = 4 * dg;  // byte column of V
    const int v_panel = col / K::row_bytes, v_col = col % K::row_bytes;
    std::uint32_t w[4];
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      // permute: the key of V^T column 4t + r of this 16-key block; plain: 4t + r
      const int key = 16 * kb + (permute ? 8 * (r / 2) + 2 * t + (r % 2) : 4 * t + r);
      w[r] = *reinterpret_cast<const std::uint32_t*>(v + v_panel * K::kv_panel_bytes +
                                                     swizzled<K::row_bytes>(key * K::row_bytes + v_col));
    }
    const std::uint32_t lo01 = __byte_perm(w[0], w[1], 0x5140), hi01 = __byte_perm(w[0], w[1], 0x7362);
    const std::uint32_t lo23 = __byte_perm(w[2], w[3], 0x5140), hi23 = __byte_perm(w[2], w[3], 0x7362);
    const std::uint32_t o[4] = {__byte_perm(lo01, lo23, 0x5410), __byte_perm(lo01, lo23, 0x7632),
                                __byte_perm(hi01, hi23, 0x5410), __byte_perm(hi01, hi23, 0x7632)};
    const int pos = 16 * kb + 4 * t;  // byte column of V^T
    const int vt_panel = pos / K::vt_row_bytes, vt_col = pos % K::vt_row_bytes;
#pragma unroll
    for (int j = 0; j < 4; ++j)
      *reinterpret_cast<std::uint32_t*>(vt + vt_panel * K::vt_panel_bytes +
                                        swizzled<K::vt_row_bytes>((col + j) * K::vt_row_bytes + vt_col)) = o[j];
  }
}

}  // namespace f3

template <class K>
__global__ void __launch_bounds__(K::threads, 1) flash3_fwd_kernel(const __grid_constant__ flash3_params prm) {
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
  __trap();  // built without sm_90a: the row refuses to launch (flash3_rows.cpp)
#else
  using T = typename K::T;
  using TO = std::conditional_t<K::fp8, __nv_bfloat16, T>;  // O's element
  using namespace f3;
  constexpr bool FP8 = K::fp8;
  constexpr int D = K::D, BN = K::BN, S = K::stages, PANELS = K::panels;
  constexpr int NT = BN / 8;                     // n8 column tiles of S per thread row
  constexpr int DT = D / 8;                      // n8 column tiles of O
  constexpr int KS = D * K::elem_bytes / 32;     // k steps of Q K^T (k16, or k32 for fp8)
  constexpr int PS = BN * K::elem_bytes / 32;    // k steps of P V
  constexpr float max_offset = FP8 ? 8.f : 0.f;  // P in (0, 2^8] for fp8 (FA3's Max_offset)

  extern __shared__ __align__(1024) unsigned char smem_raw[];
  unsigned char* const smem = reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(smem_raw) + 1023) &
                                                               ~static_cast<std::uintptr_t>(1023));
  unsigned char* const sQ = smem;
  unsigned char* const sK = smem + K::off_k;
  unsigned char* const sV = smem + K::off_v;
  unsigned char* const sVt = smem + K::off_vt;             // fp8 only
  unsigned char* const sO = FP8 ? smem + K::off_o : smem;  // O staging: Q's tile for 16-bit types
  std::uint64_t* const bar_q = reinterpret_cast<std::uint64_t*>(smem + K::off_bar);
  std::uint64_t* const full_k = bar_q + 1;
  std::uint64_t* const empty_k = full_k + S;
  std::uint64_t* const full_v = empty_k + S;
  std::uint64_t* const empty_v = full_v + S;
  std::uint64_t* const full_vt = empty_v + S;  // fp8 only
  std::uint64_t* const empty_vt = full_vt + S;

  const problem& p = prm.p;
  const int tid = threadIdx.x, wg = tid / 128;

  // ---- which rows, heads and key tiles this CTA owns (flash2's walk) ----------
  const int pack = prm.pack;
  const int tile_rows = static_cast<int>(p.Br);
  const std::int64_t groups = p.H / pack;
  const std::int64_t b = blockIdx.y / groups;
  const std::int64_t head0 = (blockIdx.y % groups) * pack;
  const std::int64_t kvh = head0 / p.group();
  const std::int64_t rows = packed_rows(p, pack);
  // Row tiles in reverse launch order: under a causal mask the last tiles
  // visit the most key tiles, and starting them first shortens the tail.
  const std::int64_t r0 = static_cast<std::int64_t>(gridDim.x - 1 - blockIdx.x) * tile_rows;
  const std::int64_t r1 = r0 + tile_rows < rows ? r0 + tile_rows : rows;
  const span64 qr = packed_query_range(r0, r1, pack);
  const tile_spans spans = kv_tiles_for_queries(p, qr.lo, qr.hi, prm.walk);
  const int n_tiles = static_cast<int>(spans.count());
  const std::int64_t first_n = spans.first.size();
  auto tile_at = [&](int o) { return o < first_n ? spans.first.lo + o : spans.second.lo + (o - first_n); };

  if (tid == 0) {
    mbarrier_init(bar_q, 1);
    for (int s = 0; s < S; ++s) {
      mbarrier_init(&full_k[s], 1);
      mbarrier_init(&full_v[s], 1);
      mbarrier_init(&empty_k[s], K::consumer_wgs);
      // fp8: the transposer reads V and releases it; the consumers release V^T.
      mbarrier_init(&empty_v[s], FP8 ? K::transposer_threads : K::consumer_wgs);
      if constexpr (FP8) {
        mbarrier_init(&full_vt[s], K::transposer_threads);
        mbarrier_init(&empty_vt[s], K::consumer_wgs);
      }
    }
    fence_mbarrier_init();
  }
  // Rows of the Q tile no TMA box covers (pack does not divide 128): zeros,
  // written by the generic proxy and read by wgmma (the async proxy), hence
  // the proxy fence before the barrier.
  if (wg > 0 && tile_rows < K::BM) {
    const int pad_chunks = (K::BM - tile_rows) * (K::row_bytes / 16);  // 16-byte chunks per panel
    for (int i = tid - 128; i < PANELS * pad_chunks; i += 256) {
      const int panel = i / pad_chunks, c = i % pad_chunks;
      *reinterpret_cast<uint4*>(sQ + panel * K::q_panel_bytes + tile_rows * K::row_bytes + c * 16) =
          make_uint4(0, 0, 0, 0);
    }
    if (!faulty(prm, flash3_fault::missing_fence)) fence_proxy_async_shared();
  }
  __syncthreads();

  // ---- producer: one elected thread of warp 0 issues every TMA copy ------------
  if (wg == 0) {
    setmaxnreg_dec<K::producer_regs>();
    if constexpr (FP8) {
      // Warps 1-3: V (stage j % S) -> V^T (the same stage), key-permuted.
      if (tid >= 32) {
        const int tt = tid - 32;
        for (int j = 0; j < n_tiles; ++j) {
          const int s = j % S;
          mbarrier_wait_parity(&full_v[s], (j / S) & 1);
          if (j >= S) mbarrier_wait_parity(&empty_vt[s], ((j / S) - 1) & 1);
          if (!faulty(prm, flash3_fault::missing_v_transpose))
            transpose_v_stage<K>(sV + s * K::kv_tile_bytes, sVt + s * K::vt_tile_bytes, tt,
                                 !faulty(prm, flash3_fault::unpermuted_v_transpose));
          fence_proxy_async_shared();  // generic writes of V^T before wgmma (async proxy) reads them
          mbarrier_arrive(&full_vt[s]);
          mbarrier_arrive(&empty_v[s]);
        }
        return;
      }
    }
    if (tid < 32 && n_tiles > 0 && elect_one_sync()) {
      tma_prefetch_descriptor(&prm.tma_q);
      tma_prefetch_descriptor(&prm.tma_k);
      tma_prefetch_descriptor(&prm.tma_v);
      mbarrier_arrive_expect_tx(bar_q, PANELS * tile_rows * K::row_bytes);
      for (int panel = 0; panel < PANELS; ++panel)
        tma_load_4d(sQ + panel * K::q_panel_bytes, &prm.tma_q, bar_q, panel * K::panel_cols, static_cast<int>(head0),
                    static_cast<int>(qr.lo), static_cast<int>(b));
      // Tile j of K (or V) uses stage j % S; its (j / S)-th use waits for the
      // consumers' release of the previous one (phase j / S - 1).
      auto load = [&](const CUtensorMap* map, unsigned char* base, std::uint64_t* full, std::uint64_t* empty, int j,
                      bool k_side) {
        const int s = j % S;
        if (j >= S) mbarrier_wait_parity(&empty[s], ((j / S) - 1) & 1);
        if (k_side && faulty(prm, flash3_fault::missing_expect_tx))
          mbarrier_arrive(&full[s]);
        else
          mbarrier_arrive_expect_tx(&full[s], K::kv_tile_bytes);
        const int n0 = static_cast<int>(tile_at(j) * BN);
        for (int panel = 0; panel < PANELS; ++panel)
          tma_load_4d(base + s * K::kv_tile_bytes + panel * K::kv_panel_bytes, map, &full[s], panel * K::panel_cols, n0,
                      static_cast<int>(kvh), static_cast<int>(b));
      };
      if constexpr (FP8) {
        // V_j right after K_j: the transposer turns it into V^T_j before the
        // consumers need it (iteration j + 1).
        for (int j = 0; j < n_tiles; ++j) {
          load(&prm.tma_k, sK, full_k, empty_k, j, true);
          load(&prm.tma_v, sV, full_v, empty_v, j, false);
        }
      } else {
        // Consumption order with intra-warpgroup overlap: K_0, then K_j before V_{j-1}.
        for (int j = 0; j < n_tiles; ++j) {
          load(&prm.tma_k, sK, full_k, empty_k, j, true);
          if (j > 0) load(&prm.tma_v, sV, full_v, empty_v, j - 1, false);
        }
        load(&prm.tma_v, sV, full_v, empty_v, n_tiles - 1, false);
      }
    }
    return;
  }

  // ---- consumers: warpgroup cw owns CTA rows [64 cw, 64 cw + 64) ---------------
  setmaxnreg_inc<K::consumer_regs>();
  const int cw = wg - 1, wtid = tid % 128;
  const int warp = wtid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  // Scores in the kernel's units are S_codes * descale_q * descale_k (1 for 16-bit types).
  const float descale_qk = prm.descale_q * (faulty(prm, flash3_fault::wrong_descale) ? prm.descale_q : prm.descale_k);
  const float sl2 = prm.scale_log2 * descale_qk;
  constexpr smem_swizzle swz_real = swizzle_of<K::row_bytes>();
  const smem_swizzle swz = faulty(prm, flash3_fault::wrong_swizzle)
                               ? (swz_real == smem_swizzle::b128 ? smem_swizzle::b64 : smem_swizzle::b128)
                               : swz_real;

  // Descriptors (128B swizzle, atoms of 8 rows x 128 B, SBO = 1024 B; fp8
  // at d = 64: 64B swizzle, 8 rows x 64 B, SBO = 512 B): Q and K K-major (a
  // k step = +32 B inside a panel, the next panel per row of the swizzle
  // span); V MN-major (16 keys = +2048 B; LBO = the panel stride between
  // 64-column blocks of d); fp8's V^T K-major like K (D rows of keys). One
  // base descriptor per operand; a step adds its byte offset / 16 to the
  // start-address field (addresses stay below 2^18, so no carry leaves the
  // field). Recomputing 16 full descriptors per operand instead kept them
  // all live: 12 bytes of spills at d = 256.
  constexpr int KPR = K::k_steps_per_row;
  const std::uint64_t dq0 = smem_desc(smem_u32(sQ) + cw * K::wg_rows * K::row_bytes, 16, 8 * K::row_bytes, swz);
  const std::uint64_t dk0 = smem_desc(smem_u32(sK), 16, 8 * K::row_bytes, swz);
  const std::uint64_t dv0 = FP8 ? smem_desc(smem_u32(sVt), 16, 8 * K::vt_row_bytes, swizzle_of<K::vt_row_bytes>())
                                : smem_desc(smem_u32(sV), K::kv_panel_bytes, 1024, swz);
  auto desc_q = [&](int ks) {
    return dq0 + static_cast<std::uint64_t>(((ks / KPR) * K::q_panel_bytes + (ks % KPR) * 32) >> 4);
  };
  auto desc_k = [&](int s, int ks) {
    return dk0 +
           static_cast<std::uint64_t>((s * K::kv_tile_bytes + (ks / KPR) * K::kv_panel_bytes + (ks % KPR) * 32) >> 4);
  };
  auto desc_v = [&](int s, int kk) {
    if constexpr (FP8) {
      constexpr int VPR = K::vt_row_bytes / 32;  // k32 steps per V^T panel row
      return dv0 +
             static_cast<std::uint64_t>((s * K::vt_tile_bytes + (kk / VPR) * K::vt_panel_bytes + (kk % VPR) * 32) >> 4);
    } else {
      return dv0 + static_cast<std::uint64_t>((s * K::kv_tile_bytes + kk * 2048) >> 4);
    }
  };

  float o_acc[D / 2];
  float s_acc[BN / 2];
  std::uint32_t p_frag[PS][4];
  float m_row[2] = {neg_inf, neg_inf}, l_row[2] = {0.f, 0.f};
#pragma unroll
  for (int i = 0; i < D / 2; ++i) o_acc[i] = 0.f;

  // This thread's rows (CTA-local): 64 cw + 16 warp + g + 8 h. Visible keys as
  // flash2 keeps them: keys < min(G, Nkv) plus the row's window.
  const int row_local0 = cw * K::wg_rows + warp * 16 + g;
  const int glob_keys = static_cast<int>(p.mask.global < p.Nkv ? p.mask.global : p.Nkv);
  int vis_lo[2], vis_hi[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const span64 w = row_window(p, (r0 + row_local0 + 8 * h) / pack);
    vis_lo[h] = static_cast<int>(w.lo);
    vis_hi[h] = static_cast<int>(w.hi);
  }

  auto wait_full = [&](std::uint64_t* full, int j) {
    const std::uint32_t flip = full == full_k && faulty(prm, flash3_fault::wrong_phase) ? 1u : 0u;
    mbarrier_wait_parity(&full[j % S], ((j / S) & 1) ^ flip);
  };
  auto release = [&](std::uint64_t* empty, int j) {
    if (wtid == 0) mbarrier_arrive(&empty[j % S]);
  };
  // Waits (spin loops) stay outside the fence..commit stretch: ptxas
  // serialises wgmma issued on a divergent path.
  auto issue_s = [&](int j) {
#pragma unroll
    for (int ks = 0; ks < KS; ++ks) {
      if constexpr (FP8)
        wgmma_ss_e4m3<BN>(s_acc, desc_q(ks), desc_k(j % S, ks), ks > 0 ? 1 : 0);
      else
        wgmma_ss<T, BN, 0>(s_acc, desc_q(ks), desc_k(j % S, ks), ks > 0 ? 1 : 0);
    }
    wgmma_commit_group();
  };
  auto issue_pv = [&](int j) {
#pragma unroll
    for (int kk = 0; kk < PS; ++kk) {
      if constexpr (FP8)
        wgmma_rs_e4m3<D>(o_acc, p_frag[kk], desc_v(j % S, kk), 1);
      else
        wgmma_rs<T, D, 1>(o_acc, p_frag[kk], desc_v(j % S, kk), 1);
    }
    wgmma_commit_group();
  };
  auto fence_s = [&] {
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) fence_operand(s_acc[i]);
  };
  auto fence_o = [&] {
#pragma unroll
    for (int i = 0; i < D / 2; ++i) fence_operand(o_acc[i]);
  };
  // The ISA wants every register write to an A fragment or accumulator done
  // before the wgmma.fence of the batch that reads it: these pin P's
  // conversion and O's rescale ahead of the next fence (FA3 fences both the
  // same way); ptxas would otherwise serialise the wgmma (C7520) if it sank them.
  auto fence_p = [&] {
#pragma unroll
    for (int kk = 0; kk < PS; ++kk)
#pragma unroll
      for (int r = 0; r < 4; ++r) fence_operand(p_frag[kk][r]);
  };
  // Hand the GEMM turn over; warpgroup 1 skips it after its last tile
  // (warpgroup 0 has no turn left to take), so every bar.arrive is matched.
  auto pass_turn = [&](int j) {
    if (cw == 0 || j + 1 < n_tiles) named_barrier_arrive(kTurnBarrier + 1 - cw, 256);
  };

  // Mask (only tiles that cross a window edge or Nkv) and online softmax of
  // S_j in place (S becomes P); alpha = exp2 of the max's change per row.
  auto softmax = [&](int j, float(&alpha)[2]) {
    const std::int64_t k0 = tile_at(j) * BN;
    const std::int64_t k1 = k0 + BN < p.Nkv ? k0 + BN : p.Nkv;
    if (k0 + BN > p.Nkv || !tile_fully_visible(p, qr, k0, k1)) {
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const int key = static_cast<int>(k0) + nt * 8 + 2 * t + e;
            if (!(key < glob_keys || (vis_lo[h] <= key && key < vis_hi[h]))) s_acc[4 * nt + 2 * h + e] = neg_inf;
          }
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {  // a row's 4 threads are one quad
      float mx = m_row[h];
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) mx = fmaxf(mx, fmaxf(s_acc[4 * nt + 2 * h], s_acc[4 * nt + 2 * h + 1]));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      // A row with no visible key so far keeps m = -inf: exponentiate against
      // 0 so exp2(-inf - -inf) = NaN never happens.
      const float m_scaled = (mx == neg_inf ? 0.f : mx) * sl2;
      alpha[h] = f2::fast_exp2(m_row[h] * sl2 - m_scaled);
      m_row[h] = mx;
      const float bias = max_offset - m_scaled;
      float sum = 0.f;
#pragma unroll
      for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const float pe = f2::fast_exp2(fmaf(s_acc[4 * nt + 2 * h + e], sl2, bias));
          s_acc[4 * nt + 2 * h + e] = pe;
          sum += pe;
        }
      l_row[h] = l_row[h] * alpha[h] + sum;  // per-thread partial; quad sum in the epilogue
    }
  };
  // S accumulator fragment -> A fragment of P V step kk. 16-bit: n8 tiles
  // 2kk, 2kk+1. fp8: n8 tiles 4kk..4kk+3; register r holds keys (2t, 2t+1,
  // 8+2t, 9+2t) of one 16-key half (r / 2) and row (g, g+8 by r % 2), which
  // V^T's key permutation puts at k = 16 (r / 2) + 4t..4t+3.
  auto convert_p = [&] {
#pragma unroll
    for (int kk = 0; kk < PS; ++kk) {
      if constexpr (FP8) {
        const float* q = s_acc + 16 * kk;
        p_frag[kk][0] = pack4_e4m3(q[0], q[1], q[4], q[5]);
        p_frag[kk][1] = pack4_e4m3(q[2], q[3], q[6], q[7]);
        p_frag[kk][2] = pack4_e4m3(q[8], q[9], q[12], q[13]);
        p_frag[kk][3] = pack4_e4m3(q[10], q[11], q[14], q[15]);
      } else {
        const float* q4 = s_acc + 8 * kk;
        p_frag[kk][0] = f2::pack2<T>(q4[0], q4[1]);
        p_frag[kk][1] = f2::pack2<T>(q4[2], q4[3]);
        p_frag[kk][2] = f2::pack2<T>(q4[4], q4[5]);
        p_frag[kk][3] = f2::pack2<T>(q4[6], q4[7]);
      }
    }
  };

  if (n_tiles > 0) {
    if (cw == 1) named_barrier_arrive(kTurnBarrier, 256);  // warpgroup 0 takes the first turn
    mbarrier_wait_parity(bar_q, 0);
    float alpha[2];
    // Tile 0: S only.
    wait_full(full_k, 0);
    named_barrier_sync(kTurnBarrier + cw, 256);
    wgmma_fence();
    issue_s(0);
    pass_turn(0);
    wgmma_wait_group<0>();
    fence_s();
    release(empty_k, 0);
    softmax(0, alpha);
    convert_p();
    fence_p();
    std::uint64_t* const full_pv = FP8 ? full_vt : full_v;  // what P V reads: V^T for fp8
    std::uint64_t* const empty_pv = FP8 ? empty_vt : empty_v;
    for (int j = 1; j < n_tiles; ++j) {
      wait_full(full_k, j);
      wait_full(full_pv, j - 1);
      named_barrier_sync(kTurnBarrier + cw, 256);
      wgmma_fence();
      issue_s(j);
      issue_pv(j - 1);
      pass_turn(j);
      if (!faulty(prm, flash3_fault::missing_wait_group)) wgmma_wait_group<1>();  // S_j done; P V may run on
      fence_s();
      release(empty_k, j);
      softmax(j, alpha);
      wgmma_wait_group<0>();
      fence_o();
      release(empty_pv, j - 1);
#pragma unroll
      for (int i = 0; i < D / 2; ++i) o_acc[i] *= alpha[(i / 2) % 2];
      fence_o();
      convert_p();
      fence_p();
    }
    wait_full(full_pv, n_tiles - 1);
    wgmma_fence();
    issue_pv(n_tiles - 1);
    wgmma_wait_group<0>();
    fence_o();
    release(empty_pv, n_tiles - 1);
  }

  // ---- epilogue: normalise, stage O in this warpgroup's Q rows, store ---------
  float inv_l[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float l = l_row[h];
    l += __shfl_xor_sync(0xffffffffu, l, 1);
    l += __shfl_xor_sync(0xffffffffu, l, 2);
    l_row[h] = l;
    inv_l[h] = l > 0.f ? prm.descale_v / l : 0.f;  // no visible key: l = 0, O = 0
  }
  // O in 16 bits in 64-column panels of 128-byte rows (Q's layout for 16-bit
  // types, fp8's own staging tile): chunk c of row r at c ^ (r % 8), so the 8
  // rows x 4 threads of a warp's store hit 32 different banks.
#pragma unroll
  for (int dt = 0; dt < DT; ++dt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = row_local0 + 8 * h, col = dt * 8 + 2 * t;
      const int panel = col / 64, chunk = (col % 64) / 8;
      unsigned char* dst = sO + panel * K::o_panel_bytes + r * 128 + ((chunk ^ (r % 8)) * 16) + (col % 8) * 2;
      *reinterpret_cast<std::uint32_t*>(dst) =
          f2::pack2<TO>(o_acc[4 * dt + 2 * h] * inv_l[h], o_acc[4 * dt + 2 * h + 1] * inv_l[h]);
    }
  named_barrier_sync(kEpilogueBarrier + cw, 128);

  auto flat_row = [&](std::int64_t r) { return (b * p.H + head0 + r % pack) * p.Nq + r / pack; };
  constexpr int CH = D / 8;  // 16-byte chunks per row
  for (int idx = wtid; idx < K::wg_rows * CH; idx += 128) {
    const int rl = idx / CH, c = idx % CH;
    const int r = cw * K::wg_rows + rl;
    if (r >= tile_rows || r0 + r >= rows) continue;
    const int panel = c / 8, chunk = c % 8;
    const uint4 v = *reinterpret_cast<const uint4*>(sO + panel * K::o_panel_bytes + r * 128 + ((chunk ^ (r % 8)) * 16));
    *reinterpret_cast<uint4*>(static_cast<TO*>(prm.o) + flat_row(r0 + r) * D + c * 8) = v;
  }
  if (t == 0) {
    // lse = ln sum exp(s * scale): P carried 2^max_offset, l with it.
    const float scale = prm.scale * descale_qk, offset_ln = max_offset * 0.69314718f;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = row_local0 + 8 * h;
      if (r < tile_rows && r0 + r < rows)
        prm.lse[flat_row(r0 + r)] = l_row[h] > 0.f ? m_row[h] * scale + logf(l_row[h]) - offset_ln : neg_inf;
    }
  }
#endif
}

// Grid of one launch: row tiles x (batch, head group).
inline dim3 flash3_grid(const flash3_params& prm) {
  const problem& p = prm.p;
  return dim3(static_cast<unsigned>(ceil_div(packed_rows(p, prm.pack), p.Br)),
              static_cast<unsigned>(p.B * (p.H / prm.pack)), 1);
}

// Empty when prm's plan fits the compiled kernel; else why not.
template <class K>
std::string flash3_plan_mismatch(const flash3_params& prm) {
  if (prm.p.Bc == K::BN && prm.p.Br >= 1 && prm.p.Br <= K::BM && prm.p.Br == prm.pack * prm.queries_per_tile &&
      prm.p.d == K::D)
    return {};
  return "flash3: plan Br=" + std::to_string(prm.p.Br) + " Bc=" + std::to_string(prm.p.Bc) +
         " pack=" + std::to_string(prm.pack) + " d=" + std::to_string(prm.p.d) + " launched on the " +
         std::to_string(K::D) + "/" + std::to_string(K::BM) + "x" + std::to_string(K::BN) + " kernel";
}

// Host launcher of one instantiation (called from its own translation unit),
// the same for the device and the host emulator.
template <class K>
void launch_flash3_fwd(const flash3_params& prm, void* stream) {
  if (std::string why = flash3_plan_mismatch<K>(prm); !why.empty()) throw backend_error(why);
  static const bool configured = [] {
    ATTN_CUDA_CHECK(
        cudaFuncSetAttribute(flash3_fwd_kernel<K>, cudaFuncAttributeMaxDynamicSharedMemorySize, K::smem_bytes));
    return true;
  }();
  (void)configured;
  launch(flash3_fwd_kernel<K>, flash3_grid(prm), K::threads, K::smem_bytes, static_cast<cudaStream_t>(stream), prm);
}

}  // namespace attnbench::cuda

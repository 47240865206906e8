// Analytical FLOP and byte models, one home per algorithm: the CPU and the
// CUDA model of one algorithm side by side (kernels/models/<algorithm>.cpp;
// docs/models.md derives each formula). One rule for element sizes: Q, K
// and V at dtype_bytes(p.type), O at output_bytes(p.type) (bf16 for e4m3,
// else p.type), in every model; the score/probability matrices S and P, the
// log-sum-exp, FlashAttention-1's l and m and linear attention's state are
// fp32 (4 bytes) on every backend. Every model is exact for ragged lengths:
// a partial tile counts its real rows and columns. The CPU kernels count the
// same bytes while they run (runner::counted_bytes); tests compare the two.
//
// CUDA "bytes" are the global-memory requests the kernels issue, each element
// counted once per request at the block level (what a cache-less GPU would
// move); L2 hits are not subtracted. memory_bytes_*: device bytes a run
// allocates (inputs, outputs, workspace).
#pragma once

#include <cstdint>
#include <functional>

#include "core/tiles.hpp"
#include "core/variant.hpp"

namespace attnbench {

namespace cuda {
struct flash2_plan;  // kernels/cuda/flash2/flash2_params.hpp
}

// Fixed tile edges of the CUDA kernels (the models depend on them).
inline constexpr std::int64_t cuda_naive_tile = 32;         // naive GEMMs: 32 x 32 outputs, k-step 32
inline constexpr std::int64_t cuda_linear_rows = 16;        // linear output pass: rows per sub-tile
inline constexpr std::int64_t cuda_linear_state_rows = 32;  // linear state pass: state rows per block

// ---- every softmax variant ----------------------------------------------------
// Useful FLOPs: 4 * d per visible (query, key) pair (QK^T and PV, one FMA = 2
// FLOPs), times B * H. exp, max, scaling and division are not counted.
double model_flops_softmax(const problem& p);
// Minimum traffic: read Q, K, V once (Hkv heads of K/V), write O once.
double model_bytes_min(const problem& p);

// ---- naive, naive_gqa_expand, cublas_unfused (naive.cpp) -----------------------
// Executed: every (query, key) pair.
double model_flops_executed_naive(const problem& p);
// cpu: S = QK^T written, read by softmax, P written, read by PV; K and V
// re-read once per query tile.
double model_bytes_naive(const problem& p);
// cpu: copy K and V to H heads (read + write per query head), then naive with Hkv = H.
double model_bytes_naive_gqa_expand(const problem& p);
// cuda naive: tiled GEMM S = QK^T (fp32), masked softmax writing P (fp32)
// and lse, tiled GEMM O = PV.
double model_bytes_naive_cuda(const problem& p);
std::int64_t memory_bytes_naive_cuda(const problem& p);
// cuda naive_gqa_expand: K and V copied to H heads, then naive with Hkv = H.
double model_bytes_naive_gqa_expand_cuda(const problem& p);
std::int64_t memory_bytes_naive_gqa_expand_cuda(const problem& p);
// cublas_unfused: two cuBLAS GEMMs (each operand counted once: the minimum a
// GEMM can move; cuBLAS's own tiling is not modeled), S in fp32, softmax
// reading S twice and writing P in p.type.
double model_bytes_cublas_unfused(const problem& p);
std::int64_t memory_bytes_cublas_unfused(const problem& p);

// ---- flash1 (flash1.cpp) --------------------------------------------------------
// Executed: blocks within the causal bound.
double model_flops_executed_flash1(const problem& p);
// cpu: Algorithm 1: O, l, m initialised; per visited block read K_j, V_j,
// Q_i, O_i, l_i, m_i and write O_i, l_i, m_i.
double model_bytes_flash1(const problem& p);
// cuda: one block per (b, h, query tile) runs Algorithm 1's KV loop; Q_i
// stays in shared memory, O_i (fp32), l_i, m_i go through global memory
// between KV blocks; the last block writes O (p.type) and lse. A query tile
// that visits no key tile (causal, Nq > Nkv) writes O = 0 and lse without
// reading Q.
double model_bytes_flash1_cuda(const problem& p);
std::int64_t memory_bytes_flash1_cuda(const problem& p);
// Shared memory of one flash1 block (Q, K, V tiles in p.type with rows padded
// by 4 bytes, S in fp32, two per-row factors).
std::int64_t flash1_smem_bytes(const problem& p);

// ---- flash2, sparse, flash2_gqa_packed, flash2_splitkv (flash2.cpp) ---------------
// Executed: tiles in causal_bounded_kv_tiles (flash2) or visible_kv_tiles (sparse).
double model_flops_executed_flash2(const problem& p);
double model_flops_executed_sparse(const problem& p);
// cpu: per query tile Q read and O + lse written once, K/V tiles of
// causal_bounded_kv_tiles read once each; sparse restricted to visible_kv_tiles.
double model_bytes_flash2(const problem& p);
double model_bytes_sparse(const problem& p);
// cuda: the kernel's walk, exact per row tile: real rows R of the tile, real
// keys of the visited key tiles, per split; a row tile (or split) that visits
// no key tile skips its Q read; split partials in fp32 plus the merge.
model_figures model_flash2_cuda(const problem& p, const cuda::flash2_plan& plan);
// The exps of that walk, counted per thread that executes them: each visited tile one
// per score of its real rows and keys plus `rescale_per_row` per real row (the threads
// that hold a row each compute its rescale factor); `final_per_row` per real row of a
// row tile (split) that visits a key tile, after its loop; a split merge (splits > 1)
// `merge_per_row_split` per row and split. flash2: 4 WN, 4 (WN + 1), d (model_flash2_cuda);
// flash3: 4, 0 (it normalises by a reciprocal), no splits.
struct walk_exps {
  int rescale_per_row = 1, final_per_row = 0, merge_per_row_split = 1;
};
model_figures model_tile_walk_cuda(const problem& p, const cuda::flash2_plan& plan, const walk_exps& x);
// cpu flash2_splitkv (kernels/cpu/flash2_splitkv.cpp): the same walk over the CPU plan
// (cpu::splitkv_plan: pack G, visible walk, packed-row tile, splits from the thread count),
// bytes counted as the CUDA walk counts them; exps one per score and one rescale per row
// per visited tile, none after the loop, one merge weight per row and split.
model_figures model_flash2_splitkv_cpu(const problem& p, const cuda::flash2_plan& plan);

// ---- cudnn_sdpa (cudnn.cpp) ------------------------------------------------------------
// cuDNN's tiling is closed, so the byte model is the MINIMAL IO of the pass:
// Q, K, V read once, O written once (model_bytes_min) plus the fp32 lse.
double model_bytes_cudnn_sdpa_min_io(const problem& p);
// Q, K, V, O, lse and cuDNN's workspace (known once the graph is built).
std::int64_t memory_bytes_cudnn_sdpa(const problem& p, std::int64_t workspace_bytes);
// cudnn_sdpa backward (closed kernel): the minimal IO, Q, K, V, O, dO and lse read once, dQ,
// dK, dV written once; executed FLOPs = the useful 2.5x; one exp per visible pair (P recomputed).
model_figures model_cudnn_sdpa_backward_min_io(const problem& p);

// ---- flash3 (flash3.cpp) ------------------------------------------------------------
// cuda (sm_90a): flash2's per-row-tile walk over flash3's plan (geometry:
// Br = packed rows per CTA, Bc = 128; pack heads per CTA; one split).
model_figures model_flash3_cuda(const problem& p, const problem& geometry, int pack, tile_walk walk);

// ---- exponentials (docs/models.md "Exponentials") ------------------------------------
// What each kernel executes, counted like flops_executed: real rows and real keys of
// the visited tiles (padding lanes not counted). Softmax: one exp per computed score
// (masked scores of a visited tile included: the kernel exponentiates their -inf), and
// the per-row factors of the algorithm (online softmax: one rescale per row per visited
// tile). Linear attention: one exp per element of elu + 1 (phi). Per-row logs (lse) and
// reciprocals (1 / l) are not counted (at most 2 per row).
// The least any softmax kernel executes: one exp per visible pair.
double model_exps_min(const problem& p);
// cpu naive, naive_gqa_expand: softmax over the whole row, Nkv exps per row with a visible key.
double model_exps_naive(const problem& p);
// cuda naive, naive_gqa_expand, cublas_unfused (masked_softmax.cu): the online pass and the
// P pass, one exp each per visible score, and the block's reduction of 128 partial
// (max, sum) states, 8 merges of up to 2 exps on each of 128 threads, less the first
// visible score of each thread (no exp): 2 per visible pair + 1920 per row with a visible
// key. Exact when every thread holds a visible key (any 128 consecutive visible keys); an
// upper bound otherwise.
double model_exps_unfused_cuda(const problem& p);
// flash1: every score of a visited block (cpu: all rows; cuda: rows with a visible key in
// the block), plus, per row and block holding a visible key of the row, the merge factors
// e^(m - m_new) and e^(m~ - m_new): 1 in its first such block, 2 after.
double model_exps_flash1(const problem& p);
double model_exps_flash1_cuda(const problem& p);
// cpu flash2 / sparse: every score of a visited tile plus one rescale exp per row per tile.
double model_exps_flash2(const problem& p);
double model_exps_sparse(const problem& p);
// linear (elu + 1 features): d exps per key walked by the state pass (per KV head) and per
// query row and, causal, per key of the intra-chunk block (per query head).
double model_exps_linear(const problem& p);
double model_exps_linear_cuda(const problem& p);

// ---- linear (linear.cpp) ------------------------------------------------------------
// Linear attention (phi = elu + 1) in its recurrent form, V augmented with a
// ones column for the normaliser: 2d(d+1) per key and KV head (state update)
// plus 2d(d+1) per query row that sees a key (state read). phi not counted.
double model_flops_linear(const problem& p);
// Executed: the chunked form when causal.
double model_flops_executed_linear(const problem& p);
// cpu: non-causal: state pass (K, V read, per-KV-head state written) then
// output pass (state read per query tile). Causal: prefix states per key
// chunk (chunk = Bc), then per chunk: state, Q rows, K/V chunk read, O written.
double model_bytes_linear(const problem& p);
// cuda: state pass per (b, KV head, 32 state rows), then output pass per 16
// query rows (causal: chunk = Bc, intra-chunk keys read per sub-tile).
double model_bytes_linear_cuda(const problem& p);
double model_flops_executed_linear_cuda(const problem& p);
std::int64_t memory_bytes_linear_cuda(const problem& p);
// Causal linear attention groups query rows by key chunk (chunk = Bc): rows
// [lo, hi) whose aligned position i' = i + Nkv - Nq falls in key chunk c
// (keys [c*Bc, (c+1)*Bc)). Rows with i' < 0 belong to no chunk (zeros).
span64 linear_chunk_rows(const problem& p, std::int64_t c);
// First key chunk that holds the aligned position of some query row.
std::int64_t linear_first_chunk(const problem& p);

// ---- the scans (scan.cpp; docs/alternatives.md) -------------------------------------
// On the attention problem of the same width: D = H * d channels (head h holds channels
// h*d .. h*d + d - 1), L = Nq = Nkv steps; u, dt, z in Q, K, V, the output in O.
// Selective scan (Mamba-1), per (b, channel, step): 6 FLOPs per state element n (dt A,
// dA h, dt u B, their sum, C h and its accumulation) and 5 more (dt + bias, dt u, D u and
// its add, y silu(z)); softplus and silu as functions (their exps count apart).
double model_flops_selective_scan(const problem& p);
// cpu: per (b, head) task: A (d x N), D, bias once; u, dt, z read and out written once; B and
// C (N per step) once per group segment of the head's channels. The carry stays on chip.
double model_bytes_selective_scan(const problem& p);
// One exp per (b, channel, step, n) (exp(dt A)) plus softplus's and silu's: D L (N + 2) per b.
double model_exps_selective_scan(const problem& p);
// The runs of one group among head h's channels (G groups of H d / G channels each).
std::int64_t selective_scan_segments(const problem& p, std::int64_t h);
// WKV (RWKV-4), per (b, channel, step): 17 FLOPs (the output's 6, the state's 5, the
// exponents' 6 adds); max not counted.
double model_flops_wkv(const problem& p);
// cpu: per (b, head): w and u once, K and V read and O written once.
double model_bytes_wkv(const problem& p);
// Four exps per (b, channel, step): the running-max form's two weights for the output and two
// for the state update.
double model_exps_wkv(const problem& p);
// WKV6 (RWKV-6, d x d state per head), per (b, head, step): 5 d^2 + 5 d FLOPs (the state read
// r S 2 d^2, the update w S + k v^T 3 d^2; the bonus sum_j r u k 3 d and its v term 2 d).
double model_flops_wkv6(const problem& p);
// cpu: per (b, head): u once; r, k, v, w_raw read and O written once. The state stays on chip.
double model_bytes_wkv6(const problem& p);
// Two exps per (b, channel, step): the decay exp(-exp(w_raw)).
double model_exps_wkv6(const problem& p);
// SSD (Mamba-2, chunked; P = d channels a head, N = dstate, chunk Q = Bc), per (b, head) and
// chunk of T steps: 3 T (dt + bias, dt A, the cumulative sum), 6 T P (dt x, exp(A_cs) C S,
// the add, D x and its add, the gate), 2 T N P (C S_in), the intra-chunk products over the
// T (T + 1) / 2 visible pairs (C B^T and M (dt x): 2 (N + P) each, the mask's subtract and
// multiply: 2) and, for every chunk but the last, the state update (T P + 2 T N P + 2 N P).
// Executed: the intra-chunk products over all T^2 pairs (the kernel multiplies full tiles).
double model_flops_ssd(const problem& p);
double model_flops_executed_ssd(const problem& p);
// cpu: per (b, head): A, D, bias once; dt_raw, x, z read and out written once; B and C of the
// head's group once per head. The state stays on chip.
double model_bytes_ssd(const problem& p);
// Per chunk: T (T + 1) / 2 for the decay mask, T softplus, T exp(A_cs), T P silu, and T for
// the state update's decays (every chunk but the last).
double model_exps_ssd(const problem& p);
// cuda: the same figures at the kernel's 64-step chunk; bytes as the cpu's with x, z, out in
// p.type; device memory: Q, K, V, O plus the parameters. SSD's support (cpu and cuda): a scan's,
// and G dividing H (groups of whole heads).
double model_bytes_ssd_cuda(const problem& p);
std::int64_t memory_bytes_ssd_cuda(const problem& p);
support ssd_support(const problem& p);
// cuda (kernels/cuda/scan): the selective scan per block (b, h, 8 channels): A, D, bias once,
// u, dt, z, out once in p.type, B and C once per group the block's channels span; WKV per
// channel: w, u once, K, V, O once in p.type. Device memory: Q, K, V, O plus the parameters.
double model_bytes_selective_scan_cuda(const problem& p);
std::int64_t memory_bytes_selective_scan_cuda(const problem& p);
double model_bytes_wkv_cuda(const problem& p);
std::int64_t memory_bytes_wkv_cuda(const problem& p);
// wkv6 per head: u once, r, k, v, O in p.type and w_raw (fp32) once; memory adds w_raw and u.
double model_bytes_wkv6_cuda(const problem& p);
std::int64_t memory_bytes_wkv6_cuda(const problem& p);
// Every scan row's support (cpu and cuda): Nq = Nkv, and with groups, G dividing H d.
support scan_support(const problem& p, bool groups);
// ---- the backward pass (backward.cpp; docs/backward.md) -------------------------------
// Useful FLOPs of the backward: 2.5 x the forward's (5 products per visible pair: S
// recomputed, dP, dV, dQ, dK: the convention of FlashAttention's and cuDNN's benchmarks);
// fwd_bwd: the forward's plus this, 3.5 x.
double model_flops_backward(const problem& p);
// cpu naive backward: P kept from the forward; dP, dS through memory; 4 products per pair
// executed, no exp.
model_figures model_naive_backward_cpu(const problem& p);
// cpu flash2 backward: D preprocess and dQ zeroed; per key tile K, V read and dK, dV
// written once; per visiting query tile Q, dO, lse, D read and dQ read-modify-written;
// 5 products and 1 exp per computed pair of the forward's walk.
model_figures model_flash2_backward_cpu(const problem& p);
model_figures model_sparse_backward_cpu(const problem& p);  // the exact key-tile lists
// cuda flash2 backward (kernels/cuda/flash2/flash2_bwd_*), 64 x Bc tiles, elements of
// p.type (e bytes): preprocess per query row O, dO read (2 d e), D written (4) and the fp32 dQ
// accumulator row cleared (4 d); main per (batch, KV head, key tile) K, V read and dK, dV
// written once (real keys, 4 d e per key), per visiting (query head of the group, query tile)
// Q, dO read (2 d e per real row), lse, D read (8) and the dQ accumulator rows read-modify-
// written by atomicAdd (8 d); convert 4 + e per dQ element. Executed: 10 d per pair of every
// computed 64 x Bc tile (padding included); exps: the real pairs of the visited tiles. With a
// GQA group split over head_splits CTAs (bwd_head_splits) K and V are read by each, and each
// writes its dK, dV part in fp32 (8 d per key), read back by the reduce kernel, which writes dK
// and dV (e d each).
model_figures model_flash2_backward_cuda(const problem& p, int head_splits = 1);
// The sparse row's backward: the same kernel and bytes per visit over its forward's key-tile
// lists transposed (the query tiles whose list holds the key tile, per head for a per-head layout).
model_figures model_sparse_backward_cuda(const problem& p, int head_splits = 1);
// Its deterministic mode (flash2_bwd_deterministic) in waves of `slices` key tiles
// (bwd_dq_slices): nothing cleared; per visit the slice rows written (4 d) and read back by
// the wave's sum (4 d), the bytes of the atomics; the fp32 accumulator carried across the W
// waves (8 d (W - 1) per row); dQ written once (d e).
model_figures model_flash2_backward_deterministic_cuda(const problem& p, std::int64_t slices, int head_splits = 1);
// cuda cublas_unfused backward: P kept from the forward; dP = dO V^T (fp32), dV = P^T dO,
// dS = P (dP - D) with D = rowsum(dO O), dQ = dS K, dK = dS^T Q; every GEMM operand counted
// once, GQA summed inside the dK/dV GEMMs (no extra bytes); 8 d per score executed, no exp.
model_figures model_cublas_unfused_backward(const problem& p);
// Its admission memory: the forward's plus dO, dQ, dK, dV (p.type) and dS (p.type).
std::int64_t memory_bytes_cublas_unfused_backward(const problem& p);
// A row's figures at p.pass: `fwd` (the forward's), bwd(p), or their sum (fwd_bwd).
model_figures model_for_pass(const problem& p, model_figures fwd,
                             const std::function<model_figures(const problem&)>& bwd);
// ---- linformer (linformer.cpp) ------------------------------------------------------
// The problem flash2 runs after the projections: Nkv = k = linformer_k(p), no mask.
problem linformer_reduced_problem(const problem& p);
// cpu: the projection pass per (batch, KV head) (E, F, K, V read once, K-bar and V-bar
// written once in fp32; 2 Nkv k d FLOPs per product), then flash2's figures on the
// reduced problem. Useful FLOPs = the projections + 4 d per (query, projected key) pair.
model_figures model_linformer(const problem& p);
// The projection pass's share of the bytes.
double model_linformer_projection_bytes(const problem& p);
// cuda (kernels/cuda/approx/linformer.cu): the same projections (cuBLAS), then cublas_unfused's
// forward over the k projected keys (S and P through memory): model_bytes_cublas_unfused,
// model_flops_executed_naive and model_exps_unfused_cuda of the reduced problem.
model_figures model_linformer_cuda(const problem& p);
std::int64_t memory_bytes_linformer_cuda(const problem& p);

// ---- performer (performer.cpp) -----------------------------------------------------
// cpu, m = performer_features(p) random features per (batch, KV head):
// non-causal: key pass A (K read, U = K omega~^T: the stabiliser, a max over every key
// and feature), key pass B (K, V read again, phi(K) = exp(U - |k~|^2/2 - s), state
// S = phi(K)^T V and z written, m (d + 1) fp32), output pass per query tile (state read,
// Q read, phi(Q), O written). Causal: pass B writes the exclusive prefix state of each
// key chunk that holds a query row; the output pass per chunk adds the masked
// intra-chunk block phi(Q) phi(K_c)^T [V_c, 1], phi(K_c) recomputed.
model_figures model_performer(const problem& p);
// cuda (kernels/cuda/approx/performer.cu), the CPU row's useful FLOPs; its own passes: a
// feature pass per 16 rows (omega~ read per block, Q / K read, phi(Q) and the keys' log
// features u written, m fp32 each, and each key block's max), the stabiliser reduction, the
// state pass (u read once, V once per 32 features, states written), the output pass as
// linear's with phi(Q) read instead of Q and exp(u - s) read for the intra-chunk keys. Each
// feature is computed once (the CPU row maps the keys twice) but crosses global memory.
model_figures model_performer_cuda(const problem& p);
inline constexpr std::int64_t cuda_performer_rows = 16;        // feature pass: rows per block
inline constexpr std::int64_t cuda_performer_state_rows = 32;  // state pass: features per block

// ---- routing (routing.cpp) ---------------------------------------------------------
// cpu, the Routing Transformer with c clusters, w_q and w_k tokens each (routing_shape_of):
// routing: per (batch, KV head) K and the centroids read, 2 d c FLOPs per key, the key index
// lists (4 bytes each) written; per (batch, head) the same for Q. Attention: per (batch, head)
// and cluster the index lists read, w_q query rows and w_k key and value rows gathered,
// 4 d w_q w_k FLOPs and w_q w_k exps (every routed pair, masked ones included: the causal
// visible share depends on the routing, so useful FLOPs = executed), O written once per head.
// The scatter-mean's additions are not counted. Phases in this order: routing, attention.
std::vector<model_phase> model_routing_phases(const problem& p);
model_figures model_routing(const problem& p);  // the sum of the phases
// cuda (kernels/cuda/approx/routing.cu), the CPU row's FLOPs; its own bytes. Routing, per side
// (keys per (batch, KV head), queries per (batch, head)): X read, the centroids once per
// 32-token block, c fp64 scores per token written; the rank count reads the cluster's n scores
// once per 256-token block (8 n ceil(n / 256) per cluster, from L2 in practice), writes a flag
// per token; the compaction reads the flags, writes the index list (and, queries, a slot per
// token and cluster). Attention, per (batch, head) and cluster: the query list, per routed row
// its Q row, per routed key its index, K and V rows (gathered, every pair), the row's result
// and seen flag written; the scatter-mean reads c slots per row, each routed row's result and
// flag, writes O. Exps: 2 per routed pair (the online softmax's rescale; at most: none before
// a row's first visible key). The rank count's c n^2 comparisons are not FLOPs and not counted.
std::vector<model_phase> model_routing_cuda_phases(const problem& p);
model_figures model_routing_cuda(const problem& p);            // the sum of the phases
inline constexpr std::int64_t cuda_routing_score_tokens = 32;  // tokens per score block
inline constexpr std::int64_t cuda_routing_threads = 256;      // tokens per rank-count block

// ---- additive (additive.cpp) -------------------------------------------------------
// cpu, Bahdanau's score with width a = additive_width(p): the projection pass (Q, K read,
// Q' = Q W^T and K' = K U^T written in fp32, W^T and U^T read once per head), then
// flash2's walk with Q' for Q and K' for K (widths a), v read per query tile. FLOPs:
// 2 d a per projected row, 3a + 2d per score (q' + k', v . tanh, P V); exps: flash2's
// softmax exps plus a tanh per width element of every computed score.
// Q, K, V are read and O written in p.type's element size (the CPU row is fp32 only).
double model_additive_projection_bytes(const problem& p);
model_figures model_additive(const problem& p);
// cuda (kernels/cuda/approx/additive.cu): the same passes, FLOPs and bytes; its tanh is
// 1 - 2 / (e^{2x} + 1), two multi-function ops (ex2, rcp), so exps count 2a per computed score.
model_figures model_additive_cuda(const problem& p);

}  // namespace attnbench

// The CPU rows of the registry: the only place CPU variants are declared.
// Each algorithm lives in its own file (naive.cpp, naive_gqa_expand.cpp,
// flash1.cpp, flash2.cpp, sparse.cpp, linear.cpp, flash2_splitkv.cpp, selective_scan.cpp, wkv.cpp,
// wkv6.cpp, linformer.cpp, performer.cpp, additive.cpp, routing.cpp); its model in
// kernels/models/<algorithm>.cpp.
#include <fmt/format.h>

#include "kernels/cpu/cpu_common.hpp"
#include "kernels/cpu/flash2_splitkv.hpp"
#include "kernels/reference/approx_params.hpp"
#include "kernels/registry.hpp"

namespace attnbench {

namespace {

// Host memory of one run: Q, K, V, O (+ lse) as fp32 arrays whatever the dtype, the algorithm's
// workspace, and each thread's tile buffers (generous bound).
std::int64_t io_bytes(const problem& p, bool lse) {
  return 4 * (p.q_elems() + 2 * p.kv_elems() + p.o_elems() + (lse ? p.rows() : 0));
}
std::int64_t tile_bytes(const problem& p) {
  const std::int64_t t = std::max(p.Br, p.Bc);
  return 4 * cpu::max_threads() * (4 * t * p.d + t * t + p.d * p.d + p.d + 4 * t + p.Nkv);
}
std::int64_t score_bytes(const problem& p) { return 2 * 4 * p.B * p.H * p.Nq * p.Nkv; }  // S, P

// Memory of a row writing lse or not, plus its workspace.
template <bool lse, std::int64_t (*workspace)(const problem&)>
std::int64_t cpu_memory(const problem& p) {
  return io_bytes(p, lse) + tile_bytes(p) + workspace(p);
}
std::int64_t no_workspace(const problem&) { return 0; }
std::int64_t expand_workspace(const problem& p) { return score_bytes(p) + 2 * 4 * p.B * p.H * p.Nkv * p.d; }
std::int64_t flash1_workspace(const problem& p) { return 2 * 4 * p.rows(); }  // l, m
// E and F, then K-bar and V-bar.
std::int64_t linformer_workspace(const problem& p) {
  const problem r = linformer_reduced_problem(p);
  return 4 * (2 * p.Nkv * r.Nkv + 2 * r.kv_elems());
}
// W^T, U^T, Q', K'.
std::int64_t additive_workspace(const problem& p) {
  const std::int64_t a = additive_width(p);
  return 4 * a * (2 * p.d + p.B * p.H * p.Nq + p.B * p.Hkv * p.Nkv);
}
// omega~, the states (causal: one per chunk), the keys' stabilisers.
std::int64_t performer_workspace(const problem& p) {
  const std::int64_t m = performer_features(p), states = p.mask.kind == mask_kind::causal ? num_kv_tiles(p) : 1;
  return 4 * (p.d * m + (m * p.d + m) * p.B * p.Hkv * states + p.B * p.Hkv);
}
// The centroids, the index lists, each thread's gathered tiles and the head's accumulator.
std::int64_t routing_workspace(const problem& p) {
  const routing_shape rs = routing_shape_of(p);
  const std::int64_t lists = rs.clusters * (p.B * p.Hkv * rs.wk + p.B * p.H * rs.wq);
  const std::int64_t tiles = 2 * rs.wq * p.d + 2 * rs.wk * p.d + rs.wq * rs.wk + p.Nq * (p.d + 1);
  return 4 * (rs.clusters * p.d + lists + cpu::max_threads() * tiles);
}
std::int64_t splitkv_workspace(const problem& p) { return cpu::splitkv_workspace_bytes(p); }
std::int64_t linear_workspace(const problem& p) {
  return 4 * (p.d * p.d + p.d) * p.B * p.Hkv * (p.mask.kind == mask_kind::causal ? num_kv_tiles(p) : 1);
}

// The scans (docs/alternatives.md): the selective scan's parameters (A, D, bias per channel; B
// and C per step and group) and each thread's tiles; WKV's w and u and tiles.
std::int64_t selective_scan_memory(const problem& p) {
  const std::int64_t width = p.H * p.d, N = p.dstate;
  return io_bytes(p, false) + 4 * (width * (N + 2) + 2 * p.B * p.ngroups * p.Nkv * N) +
         4 * cpu::max_threads() * (4 * p.Bc * p.d + 2 * p.Bc * N + 2 * N * p.d + 5 * p.d);
}
std::int64_t ssd_memory(const problem& p) {
  const std::int64_t Q = p.Bc, P = p.d, N = p.dstate;
  return io_bytes(p, false) + 4 * (3 * p.H + p.B * p.H * p.Nkv + 2 * p.B * p.ngroups * p.Nkv * N) +
         4 * cpu::max_threads() * (4 * Q * P + 2 * Q * N + N * P + Q * Q + 4 * Q);
}
std::int64_t wkv6_memory(const problem& p) {
  return io_bytes(p, false) + 4 * (p.q_elems() + p.H * p.d) +
         4 * cpu::max_threads() * (5 * p.Bc * p.d + p.d * p.d + 3 * p.d);
}
std::int64_t wkv_memory(const problem& p) {
  return io_bytes(p, false) + 4 * 2 * p.H * p.d + 4 * cpu::max_threads() * (3 * p.Bc * p.d + 5 * p.d);
}

template <double (*executed)(const problem&), double (*bytes)(const problem&), double (*exps)(const problem&),
          double (*useful)(const problem&) = model_flops_softmax>
model_figures cpu_model(const problem& p) {
  return {useful(p), executed(p), bytes(p), exps(p)};
}

// Rows that also run the backward (docs/backward.md): the forward's figures, the
// backward's or their sum by p.pass; the runner by p.pass; the memory of a
// backward run adds dO, dQ, dK, dV, D and the backward's tile buffers.
template <model_figures (*fwd)(const problem&), model_figures (*bwd)(const problem&)>
model_figures per_pass_model(const problem& p) {
  problem f = p;
  f.pass = pass_kind::fwd;
  return model_for_pass(p, fwd(f), bwd);
}
template <std::unique_ptr<runner> (*fwd)(const problem&, bool), std::unique_ptr<runner> (*bwd)(const problem&, bool)>
std::unique_ptr<runner> per_pass_runner(const problem& p, bool lse) {
  return p.pass == pass_kind::fwd ? fwd(p, lse) : bwd(p, lse);
}
template <std::int64_t (*fwd)(const problem&)>
std::int64_t per_pass_memory(const problem& p) {
  if (p.pass == pass_kind::fwd) return fwd(p);
  const std::int64_t t = std::max(p.Br, p.Bc);
  return fwd(p) + 4 * (2 * p.q_elems() + 2 * p.kv_elems() + p.rows()) +
         4 * cpu::max_threads() * (6 * t * p.d + 2 * t * t);
}
// The backward on the CPU: fp32; the masks of the row (naive: the interval masks; flash2 and
// sparse: the sparse terms too, through the element mask and the key-tile lists).
support backward_check(const problem& p) {
  if (p.pass == pass_kind::fwd) return support::yes();
  if (p.type != dtype::fp32)
    return support::no(fmt::format("the cpu backward computes in fp32 only, not {}", to_string(p.type)));
  return support::yes();
}

const capabilities fp32_softmax{.dtypes = {dtype::fp32}};
// flash2 and sparse take the sparse terms (strided, random, layout, per-head
// layouts: the element mask and the key-tile lists take the query head) through
// core's is_visible and make_kv_tile_list. They also take bf16 and e4m3 inputs
// (fp8 beside bf16 on the CPU): computed in fp32, O rounded to bf16,
// e4m3's P rounded as FA3's fp8 kernel rounds it (flash2.cpp, docs/cpu.md).
const capabilities flash2_softmax{.dtypes = {dtype::fp32, dtype::bf16, dtype::e4m3},
                                  .masks = mask_all | mask_sparse_terms};

}  // namespace

void add_cpu_variants(std::vector<variant>& rows) {
  rows.push_back({
      .name = "naive",
      .summary = "S = QK^T and P = softmax(S) materialised in memory, then O = PV; bwd: dP, dS in memory",
      .caps = {.dtypes = {dtype::fp32}, .passes = pass_all},
      .tags = {tag::baseline, tag::unfused},
      .model = per_pass_model<cpu_model<model_flops_executed_naive, model_bytes_naive, model_exps_naive>,
                              model_naive_backward_cpu>,
      .memory_bytes = per_pass_memory<cpu_memory<false, score_bytes>>,
      .make_runner = per_pass_runner<cpu::make_naive_runner, cpu::make_naive_backward_runner>,
  });
  rows.push_back({
      .name = "naive_gqa_expand",
      .summary = "copies K/V to H heads (GQA baseline), then naive",
      .caps = {.dtypes = {dtype::fp32}, .gqa_only = true},
      .tags = {tag::unfused, tag::gqa},
      .model = cpu_model<model_flops_executed_naive, model_bytes_naive_gqa_expand, model_exps_naive>,
      .memory_bytes = cpu_memory<false, expand_workspace>,
      .make_runner = cpu::make_naive_gqa_expand_runner,
  });
  rows.push_back({
      .name = "flash1",
      .summary = "FlashAttention-1: KV-outer loop, O/l/m read and written per block",
      .caps = fp32_softmax,
      .tags = {tag::fused, tag::tiled},
      .model = cpu_model<model_flops_executed_flash1, model_bytes_flash1, model_exps_flash1>,
      .memory_bytes = cpu_memory<false, flash1_workspace>,
      .make_runner = cpu::make_flash1_runner,
  });
  rows.push_back({
      .name = "flash2",
      .summary = "FlashAttention-2: Q-outer loop, online softmax, one write of O and lse, native GQA; bwd: KV-outer, P "
                 "from lse",
      .writes_lse = true,
      .caps = {.dtypes = flash2_softmax.dtypes, .masks = flash2_softmax.masks, .passes = pass_all},
      .tags = {tag::fused, tag::tiled},
      .check = backward_check,
      .model = per_pass_model<cpu_model<model_flops_executed_flash2, model_bytes_flash2, model_exps_flash2>,
                              model_flash2_backward_cpu>,
      .memory_bytes = per_pass_memory<cpu_memory<true, no_workspace>>,
      .make_runner = per_pass_runner<cpu::make_flash2_runner, cpu::make_flash2_backward_runner>,
  });
  rows.push_back({
      .name = "sparse",
      .summary =
          "flash2 visiting only key tiles with a visible pair (window, global; key-tile lists for strided, random, "
          "layout); bwd: each key tile visits only the query tiles that see it",
      .writes_lse = true,
      .caps = {.dtypes = flash2_softmax.dtypes, .masks = flash2_softmax.masks, .passes = pass_all},
      .tags = {tag::fused, tag::tiled},
      .check =
          [](const problem& p) {
            if (p.mask.kind == mask_kind::local || p.mask.global > 0 || p.mask.has_sparse()) return backward_check(p);
            return support::no(
                fmt::format("mask {} has no local/global sparsity; flash2 covers it", to_string(p.mask)));
          },
      .model = per_pass_model<cpu_model<model_flops_executed_sparse, model_bytes_sparse, model_exps_sparse>,
                              model_sparse_backward_cpu>,
      .memory_bytes = per_pass_memory<cpu_memory<true, no_workspace>>,
      .make_runner = per_pass_runner<cpu::make_sparse_runner, cpu::make_sparse_backward_runner>,
  });
  rows.push_back({
      .name = "linear",
      .math = attention_math::linear,
      .summary = "linear attention, elu+1 features: K^T V state (non-causal), chunked prefix (causal)",
      .caps = {.dtypes = {dtype::fp32}, .masks = mask_none | mask_causal},
      .tags = {tag::fused},
      .model = cpu_model<model_flops_executed_linear, model_bytes_linear, model_exps_linear, model_flops_linear>,
      .memory_bytes = cpu_memory<false, linear_workspace>,
      .make_runner = cpu::make_linear_runner,
  });
  // The scans: a recurrence in place of attention, on the problem of the same width (D = H d
  // channels, L = N; docs/alternatives.md). Causal by nature: they claim the causal mask only.
  rows.push_back({
      .name = "selective_scan",
      .math = attention_math::selective_scan,
      .summary =
          "Mamba-1 selective scan: h = exp(dt A) h + dt B u, y = C h + D u, out = y silu(z); chunks of Bc steps, "
          "the state carried on chip",
      .caps = {.dtypes = {dtype::fp32}, .masks = mask_causal, .gqa = false},
      .tags = {tag::scan},
      .check = [](const problem& p) { return scan_support(p, true); },
      .model = cpu_model<model_flops_selective_scan, model_bytes_selective_scan, model_exps_selective_scan,
                         model_flops_selective_scan>,
      .memory_bytes = selective_scan_memory,
      .make_runner = [](const problem& p, bool lse) { return cpu::make_selective_scan_runner(p, lse); },
  });
  rows.push_back({
      .name = "ssd",
      .math = attention_math::ssd,
      .summary = "Mamba-2 SSD, chunked: per chunk of Bc steps (C B^T o L)(dt x) plus exp(A_cs) C S, the N x d state "
                 "carried across chunks on chip; a scalar A per head, G groups of heads share B and C",
      .caps = {.dtypes = {dtype::fp32}, .masks = mask_causal, .gqa = false},
      .tags = {tag::scan},
      .check = ssd_support,
      .model = cpu_model<model_flops_executed_ssd, model_bytes_ssd, model_exps_ssd, model_flops_ssd>,
      .memory_bytes = ssd_memory,
      .make_runner = [](const problem& p, bool lse) { return cpu::make_ssd_runner(p, lse); },
  });
  rows.push_back({
      .name = "wkv",
      .math = attention_math::wkv,
      .summary = "RWKV-4 WKV: per-channel decayed weighted mean of v with bonus u, running-max form; chunks of Bc "
                 "steps, the carry on chip",
      .caps = {.dtypes = {dtype::fp32}, .masks = mask_causal, .gqa = false},
      .tags = {tag::scan},
      .check = [](const problem& p) { return scan_support(p, false); },
      .model = cpu_model<model_flops_wkv, model_bytes_wkv, model_exps_wkv, model_flops_wkv>,
      .memory_bytes = wkv_memory,
      .make_runner = [](const problem& p, bool lse) { return cpu::make_wkv_runner(p, lse); },
  });
  rows.push_back({
      .name = "wkv6",
      .math = attention_math::wkv6,
      .summary = "RWKV-6 WKV: a d x d state per head, data-dependent decay exp(-exp(w)) and bonus u, r/k/v in Q/K/V; "
                 "chunks of Bc steps, the state on chip",
      .caps = {.dtypes = {dtype::fp32}, .masks = mask_causal, .gqa = false},
      .tags = {tag::scan},
      .check = [](const problem& p) { return scan_support(p, false); },
      .model = cpu_model<model_flops_wkv6, model_bytes_wkv6, model_exps_wkv6, model_flops_wkv6>,
      .memory_bytes = wkv6_memory,
      .make_runner = [](const problem& p, bool lse) { return cpu::make_wkv6_runner(p, lse); },
  });
  rows.push_back({
      .name = "linformer",
      .math = attention_math::linformer,
      .summary = "Linformer: K-bar = E^T K, V-bar = F^T V (seeded n x k, k = min(256, Nkv)), flash2 over k keys; "
                 "no mask (E^T K mixes every position)",
      .writes_lse = true,
      .caps = {.dtypes = {dtype::fp32}, .masks = mask_none},
      .tags = {tag::fused, tag::comparison},
      .model = model_linformer,
      .memory_bytes = cpu_memory<true, linformer_workspace>,
      .make_runner = [](const problem& p, bool lse) { return cpu::make_linformer_runner(p, lse); },
  });
  rows.push_back({
      .name = "performer",
      .math = attention_math::performer,
      .summary = "Performer FAVOR+: m = 256 seeded orthogonal positive random features, stabilised; linear attention "
                 "over them (state, or chunked prefix sums when causal)",
      .caps = {.dtypes = {dtype::fp32}, .masks = mask_none | mask_causal},
      .tags = {tag::fused, tag::comparison},
      .model = model_performer,
      .memory_bytes = cpu_memory<false, performer_workspace>,
      .make_runner = [](const problem& p, bool lse) { return cpu::make_performer_runner(p, lse); },
  });
  rows.push_back({
      .name = "additive",
      .math = attention_math::additive,
      .summary = "Bahdanau additive score v^T tanh(W q + U k) (a = d, seeded), projections once, then an online "
                 "softmax fused as flash2; tanh on the FPU",
      .writes_lse = true,
      .caps = {.dtypes = {dtype::fp32}, .masks = mask_all | mask_sparse_terms},
      .tags = {tag::fused, tag::comparison},
      .model = model_additive,
      .memory_bytes = cpu_memory<true, additive_workspace>,
      .make_runner = [](const problem& p, bool lse) { return cpu::make_additive_runner(p, lse); },
  });
  rows.push_back({
      .name = "routing",
      .math = attention_math::routing,
      .summary = "Routing Transformer: c = round(sqrt(Nkv)) fixed seeded centroids, each cluster's top ceil(N/c) "
                 "queries and keys, dense attention per cluster, scatter-mean; routing and attention timed apart",
      .caps = {.dtypes = {dtype::fp32}, .masks = mask_none | mask_causal},
      .tags = {tag::fused, tag::comparison},
      .model = model_routing,
      .model_phases = model_routing_phases,
      .memory_bytes = cpu_memory<false, routing_workspace>,
      .make_runner = [](const problem& p, bool lse) { return cpu::make_routing_runner(p, lse); },
  });
  // The CPU twin of cuda:flash2_splitkv: its plan, tile walk, merge and model
  // (model_tile_walk_cuda over cpu::splitkv_plan); interval masks, as its sibling.
  rows.push_back({
      .name = "flash2_splitkv",
      .summary = "decode (Nq <= 16): GQA heads packed in one tile (K/V read once per group), KV range "
                 "split over threads, partial O/lse merged; dot products across d",
      .writes_lse = true,
      .caps = {.dtypes = {dtype::fp32, dtype::bf16}, .max_nq = 16},
      .tags = {tag::fused, tag::decode, tag::gqa},
      .model = [](const problem& p) { return model_flash2_splitkv_cpu(p, cpu::splitkv_plan(p)); },
      .memory_bytes = cpu_memory<true, splitkv_workspace>,
      .make_runner = [](const problem& p, bool lse) { return cpu::make_flash2_splitkv_runner(p, lse); },
      .resolve = cpu::splitkv_geometry,
  });
}

}  // namespace attnbench

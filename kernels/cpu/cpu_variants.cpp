// The CPU rows of the registry: the only place CPU variants are declared.
// Each algorithm lives in its own file (naive.cpp, naive_gqa_expand.cpp,
// flash1.cpp, flash2.cpp, sparse.cpp, linear.cpp, flash2_splitkv.cpp); its model in
// kernels/models/<algorithm>.cpp.
#include <fmt/format.h>

#include "kernels/cpu/cpu_common.hpp"
#include "kernels/cpu/flash2_splitkv.hpp"
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
std::int64_t expand_workspace(const problem& p) {
  return score_bytes(p) + 2 * 4 * p.B * p.H * p.Nkv * p.d;
}
std::int64_t flash1_workspace(const problem& p) { return 2 * 4 * p.rows(); }  // l, m
std::int64_t splitkv_workspace(const problem& p) { return cpu::splitkv_workspace_bytes(p); }
std::int64_t linear_workspace(const problem& p) {
  return 4 * (p.d * p.d + p.d) * p.B * p.Hkv *
         (p.mask.kind == mask_kind::causal ? num_kv_tiles(p) : 1);
}

template <double (*executed)(const problem&), double (*bytes)(const problem&), double (*exps)(const problem&),
          double (*useful)(const problem&) = model_flops_softmax>
model_figures cpu_model(const problem& p) {
  return {useful(p), executed(p), bytes(p), exps(p)};
}

const capabilities fp32_softmax{.dtypes = {dtype::fp32}};
// flash2 and sparse take the sparse terms (strided, random, layout, per-head
// layouts: the element mask and the key-tile lists take the query head) through
// core's is_visible and make_kv_tile_list. They also take bf16 and e4m3 inputs
// (issue 16: fp8 beside bf16 on the CPU): computed in fp32, O rounded to bf16,
// e4m3's P rounded as FA3's fp8 kernel rounds it (flash2.cpp, docs/cpu.md).
const capabilities flash2_softmax{.dtypes = {dtype::fp32, dtype::bf16, dtype::e4m3},
                                  .masks = mask_all | mask_sparse_terms};

}  // namespace

void add_cpu_variants(std::vector<variant>& rows) {
  rows.push_back({
      .name = "naive",
      .summary = "S = QK^T and P = softmax(S) materialised in memory, then O = PV",
      .caps = fp32_softmax,
      .tags = {tag::baseline, tag::unfused},
      .model = cpu_model<model_flops_executed_naive, model_bytes_naive, model_exps_naive>,
      .memory_bytes = cpu_memory<false, score_bytes>,
      .make_runner = cpu::make_naive_runner,
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
      .summary = "FlashAttention-2: Q-outer loop, online softmax, one write of O and lse, native GQA",
      .writes_lse = true,
      .caps = flash2_softmax,
      .tags = {tag::fused, tag::tiled},
      .model = cpu_model<model_flops_executed_flash2, model_bytes_flash2, model_exps_flash2>,
      .memory_bytes = cpu_memory<true, no_workspace>,
      .make_runner = cpu::make_flash2_runner,
  });
  rows.push_back({
      .name = "sparse",
      .summary = "flash2 visiting only key tiles with a visible pair (window, global; key-tile lists for strided, random, layout)",
      .writes_lse = true,
      .caps = flash2_softmax,
      .tags = {tag::fused, tag::tiled},
      .check =
          [](const problem& p) {
            if (p.mask.kind == mask_kind::local || p.mask.global > 0 || p.mask.has_sparse()) return support::yes();
            return support::no(fmt::format("mask {} has no local/global sparsity; flash2 covers it",
                                           to_string(p.mask)));
          },
      .model = cpu_model<model_flops_executed_sparse, model_bytes_sparse, model_exps_sparse>,
      .memory_bytes = cpu_memory<true, no_workspace>,
      .make_runner = cpu::make_sparse_runner,
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

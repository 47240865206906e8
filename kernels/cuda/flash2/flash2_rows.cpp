// Registry rows of the tensor-core flash2 family on CUDA: flash2, sparse,
// flash2_gqa_packed and flash2_splitkv. All four run flash2_fwd_kernel
// (flash2_kernel.cuh) with the plan of their row (flash2_plan.cpp); the
// split-KV row adds the merge kernel. Host C++.
#include <fmt/format.h>

#include "core/cuda/launch_limits.hpp"
#include "kernels/cuda/common/device_runner.cuh"
#include "kernels/cuda/flash2/flash2_bwd_params.hpp"
#include "kernels/cuda/flash2/flash2_plan.hpp"
#include "kernels/models/models.hpp"

namespace attnbench {

namespace {

using cuda::flash2_row;

// Tiles of the sweep that the main kernel has for head dim d.
std::string tile_list(int d, dtype t) {
  int n = 0;
  const cuda::flash2_config* c = cuda::flash2_configs(&n);
  std::string s;
  for (int i = 0; i < n; ++i)
    if (!c[i].decode && c[i].d == d && c[i].type == t)
      s += fmt::format("{}{}x{}", s.empty() ? "" : ", ", c[i].bm, c[i].bn);
  return s;
}

// The instantiation p asks for, then the launch: grid (row tiles, B * H / pack)
// and the instantiation's shared memory.
support check_launch_of(const problem& p, flash2_row row) {
  if (row == flash2_row::sparse && p.mask.kind != mask_kind::local && p.mask.global == 0 && !p.mask.has_sparse())
    return support::no(fmt::format("mask {} has no local/global sparsity; flash2 covers it", to_string(p.mask)));
  const cuda::flash2_plan plan = cuda::plan_for(row, p, cuda::current_device_limits().sm_count);
  const int d = static_cast<int>(p.d);
  const cuda::flash2_config* c = cuda::flash2_config_for(row, p);
  if (!c)
    return support::no(
        fmt::format("no Br x Bc = {}x{} instantiation for d={} (have {})", p.Br, p.Bc, p.d, tile_list(d, p.type)));
  const problem& g = plan.geometry;
  return cuda::check_launch({.grid_x = cuda::row_tiles(g, plan.pack, c->bm) * plan.splits,
                             .grid_y = p.B * (p.H / plan.pack),
                             .threads = 32LL * c->warps,
                             .smem_bytes = c->smem},
                            fmt::format("flash2 tile {}x{} at d={}", c->bm, c->bn, c->d));
}

std::int64_t flash2_memory(const problem& p, flash2_row row) {
  const int sms = cuda::current_device_limits().sm_count;
  const std::int64_t base =
      cuda::device_runner::base_memory_bytes(p) + cuda::mask_device_bytes(cuda::plan_for(row, p, sms));
  return row == flash2_row::splitkv ? base + cuda::splitkv_workspace_bytes(p, sms) : base;
}

variant flash2_family_row(std::string name, std::string summary, flash2_row kind, capabilities caps,
                          std::vector<tag> tags) {
  return {
      .name = std::move(name),
      .backend = backend_kind::cuda,
      .math = attention_math::softmax,
      .summary = std::move(summary),
      .writes_lse = true,
      .caps = std::move(caps),
      .tags = std::move(tags),
      .check = [kind](const problem& p) { return check_launch_of(p, kind); },
      .model = [kind](const problem& p) { return cuda::model_flash2_row(kind, p); },
      .memory_bytes = [kind](const problem& p) { return flash2_memory(p, kind); },
      .make_runner = [kind](const problem& p, bool lse) { return cuda::make_flash2_runner(p, lse, kind, 0); },
      .resolve = kind == flash2_row::splitkv ? std::function<problem(const problem&)>(cuda::decode_geometry) : nullptr,
  };
}

const std::vector<dtype> tensor_core_types = {dtype::bf16, dtype::fp16};
const std::vector<std::int64_t> head_dims = {64, 128};
// flash2 (covering walk, element-wise mask) and sparse (exact tile lists) pass
// the query head to sparse_visible, so per-head layouts too.
constexpr unsigned sparse_masks = mask_all | mask_sparse_terms;

// The backward of the flash2 and sparse rows (docs/backward.md "The CUDA flash2 backward"): its
// own tiles, 64 x 64 and 64 x 128, so a bwd or fwd_bwd entry runs at one of them (the
// forward of a fwd_bwd entry is the row's forward at that tile); its masks are the forward's,
// the sparse terms element-wise within the visited tiles (not at d = 128 with 64 x 128).
support backward_check(const problem& p) {
  if (p.pass == pass_kind::fwd) return support::yes();
  if (p.Br != cuda::kBwdBr ||
      !cuda::find_flash2_bwd_kernel(static_cast<int>(p.d), static_cast<int>(p.Bc), p.type, true))
    return support::no(fmt::format("the flash2 backward runs the tiles {}x{} and {}x{}, not Br x Bc = {}x{}",
                                   cuda::kBwdBr, cuda::kBwdBcs[0], cuda::kBwdBr, cuda::kBwdBcs[1], p.Br, p.Bc));
  if (p.mask.has_sparse() && !cuda::flash2_bwd_sparse_terms(p.d, p.Bc))
    return support::no(fmt::format(
        "the flash2 backward evaluates sparse mask terms at d={} with the 64x64 tile only (its registers are full)",
        p.d));
  return cuda::check_launch({.grid_x = cuda::bwd_kv_tiles(p),
                             .grid_y = p.B * p.Hkv,
                             .grid_z = cuda::bwd_head_splits(p, cuda::current_device_limits().sm_count),
                             .threads = 32 * p.Bc / 16,
                             .smem_bytes = cuda::flash2_bwd_smem_bytes(static_cast<int>(p.d), static_cast<int>(p.Bc))},
                            fmt::format("flash2 backward tile {}x{} at d={}", p.Br, p.Bc, p.d));
}

// The row's check, model, memory and runner by p.pass (the forward's for fwd). deterministic:
// flash2_bwd_deterministic (the flash2 row's walk).
void with_backward(variant& row, flash2_row kind, bool deterministic) {
  row.check = [fwd = row.check](const problem& p) {
    const support s = fwd(p);
    return s.ok ? backward_check(p) : s;
  };
  row.model = [fwd = row.model, kind, deterministic](const problem& p) {
    problem f = p;
    f.pass = pass_kind::fwd;
    return model_for_pass(p, fwd(f), [kind, deterministic](const problem& q) {
      const int sms = cuda::current_device_limits().sm_count, splits = cuda::bwd_head_splits(q, sms);
      if (kind == flash2_row::sparse) return model_sparse_backward_cuda(q, splits);
      if (!deterministic) return model_flash2_backward_cuda(q, splits);
      return model_flash2_backward_deterministic_cuda(q, cuda::bwd_dq_slices(q, sms, splits), splits);
    });
  };
  row.memory_bytes = [fwd = row.memory_bytes, kind, deterministic](const problem& p) {
    return p.pass == pass_kind::fwd ? fwd(p) : cuda::flash2_backward_memory_bytes(p, kind, deterministic);
  };
  row.make_runner = [fwd = row.make_runner, kind, deterministic](const problem& p, bool lse) {
    return p.pass == pass_kind::fwd ? fwd(p, lse) : cuda::make_flash2_backward_runner(p, lse, kind, deterministic);
  };
}

}  // namespace

void add_cuda_rows_flash2(std::vector<variant>& rows) {
  rows.push_back(flash2_family_row(
      "flash2",
      "FlashAttention-2 on tensor cores (mma.sync, ldmatrix, cp.async double buffer), causal tile "
      "bound, one write of O and lse",
      flash2_row::flash2,
      {.dtypes = tensor_core_types, .masks = sparse_masks, .head_dims = head_dims, .passes = pass_all},
      {tag::fused, tag::tiled}));
  with_backward(rows.back(), flash2_row::flash2, false);
  rows.push_back(flash2_family_row(
      "flash2_bwd_deterministic",
      "the flash2 backward without atomics: waves of S key tiles (two CTAs per SM) storing fp32 dQ slices, "
      "each wave summed in a fixed order into an accumulator (bit-identical runs; extra memory (S + 1) x dQ in "
      "fp32)",
      flash2_row::flash2,
      {.dtypes = tensor_core_types, .masks = sparse_masks, .head_dims = head_dims, .passes = pass_bwd},
      {tag::fused, tag::tiled}));
  with_backward(rows.back(), flash2_row::flash2, true);
  rows.push_back(flash2_family_row(
      "sparse",
      "flash2 kernel visiting only key tiles with a visible pair (local window, global tokens; "
      "per-query-tile key-tile lists for strided, random and layout masks); backward over the lists "
      "transposed (the query tiles that see each key tile)",
      flash2_row::sparse,
      {.dtypes = tensor_core_types, .masks = sparse_masks, .head_dims = head_dims, .passes = pass_all},
      {tag::fused, tag::tiled}));
  with_backward(rows.back(), flash2_row::sparse, false);
  rows.push_back(
      flash2_family_row("flash2_gqa_packed",
                        "flash2 with all query heads of a KV group packed into one CTA's rows: K/V loaded once per "
                        "group and row tile",
                        flash2_row::packed, {.dtypes = tensor_core_types, .head_dims = head_dims, .gqa_only = true},
                        {tag::fused, tag::tiled, tag::gqa}));
  rows.push_back(
      flash2_family_row("flash2_splitkv",
                        "decode (Nq <= 16): KV range split over CTAs (splits from SM count), GQA heads packed, "
                        "partial O/lse merged by a second kernel; fixed 16x64 tiles",
                        flash2_row::splitkv, {.dtypes = tensor_core_types, .head_dims = head_dims, .max_nq = 16},
                        {tag::fused, tag::decode, tag::gqa}));
}

}  // namespace attnbench

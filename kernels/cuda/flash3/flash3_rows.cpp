// Registry rows of the Hopper flash3 family: flash3_fwd_kernel
// (flash3_kernel.cuh) with the plan of flash3_plan.cpp, in bf16/fp16
// (flash3) and in e4m3 (flash3_fp8). Refused, with the reason, on anything
// but an sm_90 device or in a build without sm_90a code.
// Host C++.
#include <fmt/format.h>

#include "core/cuda/launch_limits.hpp"
#include "kernels/cuda/common/device_runner.cuh"
#include "kernels/cuda/flash2/flash2_params.hpp"  // packed_rows
#include "kernels/cuda/flash3/flash3_plan.hpp"

namespace attnbench {

namespace {

support check_flash3(const problem& p) {
  if (std::string why = cuda::flash3_unsupported_reason(p); !why.empty()) return support::no(why);
  const cuda::flash3_config* c = cuda::find_flash3_config(static_cast<int>(p.d), p.type);
  if (!c) return support::no(fmt::format("flash3: no instantiation for d={} {}", p.d, to_string(p.type)));
  const cuda::flash3_plan plan = cuda::plan_flash3(p);
  return cuda::check_launch({.grid_x = ceil_div(cuda::packed_rows(plan.geometry, plan.pack), plan.geometry.Br),
                             .grid_y = p.B * (p.H / plan.pack),
                             .threads = c->threads,
                             .smem_bytes = c->smem},
                            fmt::format("flash3 tile {}x{} at d={}", c->bm, c->bn, c->d));
}

// One row of the family; the kernel instantiation follows the problem's dtype.
variant flash3_row(std::string name, std::string summary, std::vector<dtype> dtypes) {
  return {
      .name = std::move(name),
      .backend = backend_kind::cuda,
      .math = attention_math::softmax,
      .summary = std::move(summary),
      .writes_lse = true,
      .caps = {.dtypes = std::move(dtypes), .head_dims = {64, 128, 256}},
      .tags = {tag::fused},
      .check = check_flash3,
      .model = cuda::model_flash3_row,
      .memory_bytes = [](const problem& p) { return cuda::device_runner::base_memory_bytes(p); },
      .make_runner = cuda::make_flash3_runner,
      .resolve = cuda::flash3_resolve,
  };
}

}  // namespace

void add_cuda_rows_flash3(std::vector<variant>& rows) {
  rows.push_back(flash3_row("flash3",
                            "FlashAttention-3 on Hopper (sm_90a): TMA + mbarrier K/V ring from a producer warp, two "
                            "pingpong consumer warpgroups on wgmma, setmaxnreg, GQA heads packed; 128x128 tiles "
                            "(128x64 at d=256)",
                            {dtype::bf16, dtype::fp16}));
  rows.push_back(flash3_row("flash3_fp8",
                            "flash3 in FP8 (sm_90a): e4m3 Q/K/V with per-tensor descales folded in, e4m3 wgmma (k32) "
                            "with fp32 accumulation, V transposed in shared memory by the producer warpgroup, P in "
                            "e4m3 (max offset 8), O in bf16; 128x128 tiles (128x64 at d=256)",
                            {dtype::e4m3}));
}

}  // namespace attnbench

// The CPU rows of the registry: the only place CPU variants are listed.
// Each algorithm lives in its own file (naive.cpp, naive_gqa_expand.cpp,
// flash1.cpp, flash2.cpp, sparse.cpp, linear.cpp); models in harness/models.cpp.
#include <fmt/format.h>

#include "harness/registry.hpp"
#include "kernels/cpu/cpu_common.hpp"

namespace attnbench {

namespace {

using cpu_make = std::unique_ptr<runner> (*)(const problem&);

support fp32_only(const problem& p) {
  if (p.type != dtype::fp32) return support::no("cpu backend computes in fp32 only");
  return support::yes();
}

// Host memory of one run: Q, K, V, O (+ lse) in fp32, the algorithm's
// workspace, and each thread's tile buffers (generous bound).
std::int64_t io_bytes(const problem& p, bool lse) {
  return 4 * (p.q_elems() + 2 * p.kv_elems() + p.o_elems() + (lse ? p.rows() : 0));
}
std::int64_t tile_bytes(const problem& p) {
  const std::int64_t t = std::max(p.Br, p.Bc);
  return 4 * cpu::max_threads() * (4 * t * p.d + t * t + p.d * p.d + p.d + 4 * t + p.Nkv);
}
std::int64_t score_bytes(const problem& p) { return 2 * 4 * p.B * p.H * p.Nq * p.Nkv; }  // S, P

variant cpu_row(std::string name, attention_math math, std::string summary, bool lse,
                std::function<support(const problem&)> extra,
                std::function<double(const problem&)> flops,
                std::function<double(const problem&)> flops_executed,
                std::function<double(const problem&)> bytes,
                std::function<std::int64_t(const problem&)> workspace, cpu_make make) {
  variant v;
  v.name = std::move(name);
  v.backend = backend_kind::cpu;
  v.math = math;
  v.summary = std::move(summary);
  v.writes_lse = lse;
  v.supports = [extra](const problem& p) {
    if (support s = fp32_only(p); !s.ok) return s;
    return extra ? extra(p) : support::yes();
  };
  v.flops = std::move(flops);
  v.flops_executed = std::move(flops_executed);
  v.bytes = std::move(bytes);
  v.memory_bytes = [lse, workspace](const problem& p) {
    return io_bytes(p, lse) + tile_bytes(p) + (workspace ? workspace(p) : 0);
  };
  v.make_runner = [make](const problem& p) { return make(p); };
  return v;
}

}  // namespace

void add_cpu_variants(std::vector<variant>& rows) {
  rows.push_back(cpu_row(
      "naive", attention_math::softmax,
      "S = QK^T and P = softmax(S) materialised in memory, then O = PV", false, nullptr,
      model_flops_softmax, model_flops_executed_naive, model_bytes_naive, score_bytes,
      cpu::make_naive_runner));

  rows.push_back(cpu_row(
      "naive_gqa_expand", attention_math::softmax,
      "copies K/V to H heads (GQA baseline), then naive", false,
      [](const problem& p) {
        if (p.Hkv < p.H) return support::yes();
        return support::no(fmt::format(
            "naive_gqa_expand needs Hkv < H (got H = Hkv = {}); naive covers it", p.H));
      },
      model_flops_softmax, model_flops_executed_naive, model_bytes_naive_gqa_expand,
      [](const problem& p) { return score_bytes(p) + 2 * 4 * p.B * p.H * p.Nkv * p.d; },
      cpu::make_naive_gqa_expand_runner));

  rows.push_back(cpu_row(
      "flash1", attention_math::softmax,
      "FlashAttention-1: KV-outer loop, O/l/m read and written per block", false, nullptr,
      model_flops_softmax, model_flops_executed_flash1, model_bytes_flash1,
      [](const problem& p) { return 2 * 4 * p.rows(); },  // l, m
      cpu::make_flash1_runner));

  rows.push_back(cpu_row(
      "flash2", attention_math::softmax,
      "FlashAttention-2: Q-outer loop, online softmax, one write of O and lse, native GQA",
      true, nullptr, model_flops_softmax, model_flops_executed_flash2, model_bytes_flash2,
      nullptr, cpu::make_flash2_runner));

  rows.push_back(cpu_row(
      "sparse", attention_math::softmax,
      "flash2 visiting only key tiles under the local window or global tokens", true,
      [](const problem& p) {
        if (p.mask.kind == mask_kind::local || p.mask.global > 0) return support::yes();
        return support::no(fmt::format(
            "mask {} has no local/global sparsity; flash2 covers it", to_string(p.mask)));
      },
      model_flops_softmax, model_flops_executed_sparse, model_bytes_sparse, nullptr,
      cpu::make_sparse_runner));

  rows.push_back(cpu_row(
      "linear", attention_math::linear,
      "linear attention, elu+1 features: K^T V state (non-causal), chunked prefix (causal)",
      false,
      [](const problem& p) {
        if (p.mask.global == 0 &&
            (p.mask.kind == mask_kind::none || p.mask.kind == mask_kind::causal))
          return support::yes();
        return support::no(fmt::format(
            "linear attention supports masks none and causal only, not {}", to_string(p.mask)));
      },
      model_flops_linear, model_flops_executed_linear, model_bytes_linear,
      [](const problem& p) {
        return 4 * (p.d * p.d + p.d) * p.B * p.Hkv *
               (p.mask.kind == mask_kind::causal ? num_kv_tiles(p) : 1);
      },
      cpu::make_linear_runner));
}

}  // namespace attnbench

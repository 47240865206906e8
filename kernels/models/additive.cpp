// Bahdanau additive attention (docs/models.md, docs/approximations.md): the projection
// pass and the flash2-style loop of kernels/cpu/additive.cpp.
// Sums run in 64-bit integers and are converted to double once, so they stay exact.
#include "kernels/models/model_terms.hpp"
#include "kernels/models/models.hpp"
#include "kernels/reference/approx_params.hpp"

namespace attnbench {

using namespace model_terms;

double model_additive_projection_bytes(const problem& p) {
  // Per query head Q read, Q' written; per KV head K read, K' written; W^T or U^T read once each.
  const std::int64_t a = additive_width(p), d = p.d;
  const std::int64_t q = p.B * p.H * (f32 * d * a + p.Nq * (es(p) * d + f32 * a));
  const std::int64_t k = p.B * p.Hkv * (f32 * d * a + p.Nkv * (es(p) * d + f32 * a));
  return static_cast<double>(q + k);
}

model_figures model_additive(const problem& p) {
  const std::int64_t a = additive_width(p), d = p.d;
  const double projections = 2.0 * d * a * static_cast<double>(p.B * p.H * p.Nq + p.B * p.Hkv * p.Nkv);
  // Per computed score: q' + k' (a), v . tanh (2a), and its share of P V (2d).
  const double per_score = 3.0 * a + 2.0 * d;
  const double computed = model_flops_executed_flash2(p) / (4.0 * d), visible = model_flops_softmax(p) / (4.0 * d);
  // Per (batch, head) and query tile: v and the Q' rows read, K' and V of the causal bound's
  // tiles read, O and lse written.
  std::int64_t attn = 0;
  for (std::int64_t qt = 0; qt < num_q_tiles(p); ++qt) {
    const std::int64_t rows = q_tile_rows(p, qt), keys = keys_in_tiles(p, causal_bounded_kv_tiles(p, qt));
    attn += f32 * (a + rows * a + keys * a + rows) + es(p) * keys * d + eo(p) * rows * d;
  }
  const double bytes = model_additive_projection_bytes(p) + static_cast<double>(p.B * p.H * attn);
  // Every computed score: a tanh (one exp each) beside flash2's softmax exps.
  return {projections + per_score * visible, projections + per_score * computed, bytes,
          model_exps_flash2(p) + static_cast<double>(a) * computed};
}

model_figures model_additive_cuda(const problem& p) {
  model_figures f = model_additive(p);
  const double computed = model_flops_executed_flash2(p) / (4.0 * p.d);
  f.exps = model_exps_flash2(p) + 2.0 * static_cast<double>(additive_width(p)) * computed;
  return f;
}

}  // namespace attnbench

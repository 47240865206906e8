// Linformer (docs/models.md, docs/approximations.md): the projection pass K-bar = E^T K,
// V-bar = F^T V per (batch, KV head), then flash2 over the k projected keys.
// Sums run in 64-bit integers and are converted to double once, so they stay exact.
#include "kernels/models/models.hpp"

#include "kernels/models/model_terms.hpp"
#include "kernels/reference/approx_params.hpp"

namespace attnbench {

using namespace model_terms;

problem linformer_reduced_problem(const problem& p) {
  problem r = p;
  r.Nkv = linformer_k(p);
  r.mask = {};
  return r;
}

double model_linformer_projection_bytes(const problem& p) {
  // Per (batch, KV head): E and F (fp32, [Nkv x k]) and K and V read once, K-bar and
  // V-bar (fp32, [k x d]) written once.
  const std::int64_t k = linformer_k(p);
  return static_cast<double>(p.B * p.Hkv * (2 * p.Nkv * k * f32 + 2 * p.Nkv * p.d * es(p) + 2 * k * p.d * f32));
}

model_figures model_linformer(const problem& p) {
  const problem r = linformer_reduced_problem(p);
  const std::int64_t k = r.Nkv, heads = p.B * p.Hkv;
  // Two products of 2 Nkv k d FLOPs per (batch, KV head).
  const double proj_flops = 4.0 * static_cast<double>(heads * p.Nkv * k * p.d);
  const double attn_flops = model_flops_executed_flash2(r);
  return {proj_flops + model_flops_softmax(r), proj_flops + attn_flops,
          model_linformer_projection_bytes(p) + model_bytes_flash2(r), model_exps_flash2(r)};
}

model_figures model_linformer_cuda(const problem& p) {
  const problem r = linformer_reduced_problem(p);
  const double proj_flops = 4.0 * static_cast<double>(p.B * p.Hkv * p.Nkv * r.Nkv * p.d);
  return {proj_flops + model_flops_softmax(r), proj_flops + model_flops_executed_naive(r),
          model_linformer_projection_bytes(p) + model_bytes_cublas_unfused(r), model_exps_unfused_cuda(r)};
}

std::int64_t memory_bytes_linformer_cuda(const problem& p) {
  // Q, K, V, O, lse; E and F; K-bar and V-bar; S and P (fp32) over the k keys.
  const problem r = linformer_reduced_problem(p);
  return io_bytes(p) + f32 * (p.rows() + 2 * p.Nkv * r.Nkv + 2 * r.kv_elems() + 2 * p.rows() * r.Nkv);
}

}  // namespace attnbench

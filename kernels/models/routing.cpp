// The Routing Transformer (docs/models.md, docs/approximations.md): the routing and the
// attention phases of kernels/cpu/routing.cpp, modeled apart.
// Sums run in 64-bit integers and are converted to double once, so they stay exact.
#include "kernels/models/model_terms.hpp"
#include "kernels/models/models.hpp"
#include "kernels/reference/approx_params.hpp"

namespace attnbench {

using namespace model_terms;

namespace {

model_figures sum_of_phases(const std::vector<model_phase>& phases) {
  model_figures sum;
  for (const model_phase& ph : phases) {
    sum.flops += ph.figures.flops;
    sum.flops_executed += ph.figures.flops_executed;
    sum.bytes += ph.figures.bytes;
    sum.exps += ph.figures.exps;
  }
  return sum;
}

}  // namespace

std::vector<model_phase> model_routing_phases(const problem& p) {
  const routing_shape rs = routing_shape_of(p);
  const std::int64_t c = rs.clusters, d = p.d, kv_heads = p.B * p.Hkv, heads = p.B * p.H;
  const std::int64_t routed = kv_heads * p.Nkv + heads * p.Nq;
  const double route_flops = static_cast<double>(2 * d * c * routed);
  const std::int64_t route_elems = kv_heads * (p.Nkv * d + c * d + c * rs.wk) + heads * (p.Nq * d + c * d + c * rs.wq);
  const double attn_flops = static_cast<double>(4 * d * rs.wq * rs.wk * c * heads);
  const std::int64_t attn_elems = heads * (c * (rs.wq + rs.wk + d * (rs.wq + 2 * rs.wk)) + p.Nq * d);
  return {{"routing", {route_flops, route_flops, static_cast<double>(f32 * route_elems), 0.0}},
          {"attention",
           {attn_flops, attn_flops, static_cast<double>(f32 * attn_elems),
            static_cast<double>(rs.wq * rs.wk * c * heads)}}};
}

model_figures model_routing(const problem& p) { return sum_of_phases(model_routing_phases(p)); }

}  // namespace attnbench

namespace attnbench {

namespace {

// One side's routing on CUDA (Z heads of n tokens, top w): scores, rank count, compaction.
std::int64_t routing_side_bytes_cuda(const problem& p, std::int64_t Z, std::int64_t n, std::int64_t w, bool slots) {
  const std::int64_t c = routing_shape_of(p).clusters, d = p.d, f64 = 8;
  const std::int64_t scores = n * d * f32 + ceil_div(n, cuda_routing_score_tokens) * c * d * f32 + c * n * f64;
  const std::int64_t rank = c * (ceil_div(n, cuda_routing_threads) * n * f64 + n * f64 + n);
  const std::int64_t compact = c * (n + w * 4 + (slots ? n * 4 : 0));
  return Z * (scores + rank + compact);
}

}  // namespace

std::vector<model_phase> model_routing_cuda_phases(const problem& p) {
  const routing_shape rs = routing_shape_of(p);
  const std::int64_t c = rs.clusters, d = p.d, heads = p.B * p.H, wq = rs.wq, wk = rs.wk;
  std::vector<model_phase> ph = model_routing_phases(p);  // the CPU row's FLOPs
  ph[0].figures.bytes = static_cast<double>(routing_side_bytes_cuda(p, p.B * p.Hkv, p.Nkv, wk, false) +
                                            routing_side_bytes_cuda(p, heads, p.Nq, wq, true));
  const std::int64_t attention = c * (wq * 4 + wq * d * f32 + wq * wk * (4 + 2 * d * f32) + wq * d * f32 + wq);
  const std::int64_t mean = p.Nq * c * 4 + c * wq * (1 + d * f32) + p.Nq * d * f32;
  ph[1].figures.bytes = static_cast<double>(heads * (attention + mean));
  ph[1].figures.exps = 2.0 * static_cast<double>(wq * wk * c * heads);
  return ph;
}

model_figures model_routing_cuda(const problem& p) { return sum_of_phases(model_routing_cuda_phases(p)); }

}  // namespace attnbench

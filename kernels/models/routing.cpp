// The Routing Transformer (docs/models.md, docs/approximations.md): the routing and the
// attention phases of kernels/cpu/routing.cpp, modeled apart.
// Sums run in 64-bit integers and are converted to double once, so they stay exact.
#include "kernels/models/model_terms.hpp"
#include "kernels/models/models.hpp"
#include "kernels/reference/approx_params.hpp"

namespace attnbench {

using namespace model_terms;

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

model_figures model_routing(const problem& p) {
  model_figures sum;
  for (const model_phase& ph : model_routing_phases(p)) {
    sum.flops += ph.figures.flops;
    sum.flops_executed += ph.figures.flops_executed;
    sum.bytes += ph.figures.bytes;
    sum.exps += ph.figures.exps;
  }
  return sum;
}

}  // namespace attnbench

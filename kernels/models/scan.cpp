// Models of the scan rows (docs/alternatives.md): Mamba-1's selective scan and RWKV-4's WKV
// on the attention problem of the same width (D = H d channels, L = Nq = Nkv steps).
#include "kernels/models/model_terms.hpp"
#include "kernels/models/models.hpp"

namespace attnbench {

using model_terms::f32;

namespace {

// Channel-steps of the problem: B * D * L.
double channel_steps(const problem& p) { return double(p.B * p.H * p.d) * double(p.Nkv); }

}  // namespace

std::int64_t selective_scan_segments(const problem& p, std::int64_t h) {
  const std::int64_t width = p.H * p.d, per_group = width / p.ngroups;
  const std::int64_t c0 = h * p.d, c1 = c0 + p.d - 1;
  return c1 / per_group - c0 / per_group + 1;
}

double model_flops_selective_scan(const problem& p) { return channel_steps(p) * double(6 * p.dstate + 5); }

double model_bytes_selective_scan(const problem& p) {
  const std::int64_t N = p.dstate, L = p.Nkv, d = p.d;
  std::int64_t segments = 0;
  for (std::int64_t h = 0; h < p.H; ++h) segments += selective_scan_segments(p, h);
  // Per head: A (d x N), D and bias; u, dt, z, out (4 L d); B and C per segment (2 L N).
  const std::int64_t per_batch = f32 * (p.H * d * (N + 2) + 4 * p.H * L * d + 2 * segments * L * N);
  return double(p.B) * double(per_batch);
}

double model_exps_selective_scan(const problem& p) { return channel_steps(p) * double(p.dstate + 2); }

double model_flops_wkv(const problem& p) { return channel_steps(p) * 17.0; }

double model_bytes_wkv(const problem& p) {
  // Per head: w and u (2 d); K, V read and O written (3 L d).
  return double(p.B * p.H) * double(f32 * (2 * p.d + 3 * p.Nkv * p.d));
}

double model_exps_wkv(const problem& p) { return channel_steps(p) * 4.0; }

double model_flops_wkv6(const problem& p) {
  return double(p.B * p.H) * double(p.Nkv) * double(5 * p.d * p.d + 5 * p.d);
}

double model_bytes_wkv6(const problem& p) {
  // Per head: u (d); r, k, v, w_raw read and O written (5 L d).
  return double(p.B * p.H) * double(f32 * (p.d + 5 * p.Nkv * p.d));
}

double model_exps_wkv6(const problem& p) { return channel_steps(p) * 2.0; }

}  // namespace attnbench

// Models of the scan rows (docs/alternatives.md): Mamba-1's selective scan, Mamba-2's SSD and RWKV's WKV
// on the attention problem of the same width (D = H d channels, L = Nq = Nkv steps).
#include <algorithm>
#include <string>

#include "kernels/models/model_terms.hpp"
#include "kernels/models/models.hpp"

namespace attnbench {

using model_terms::f32;
using model_terms::io_bytes;

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

// cuda: per block (b, h, 8 channels): the tile's A, D, bias once; u, dt, z read and out
// written once in p.type; B and C (N per step) once per group the tile's channels span.
double model_bytes_selective_scan_cuda(const problem& p) {
  constexpr std::int64_t tile = 8;  // cuda_selective_scan_channels
  const std::int64_t N = p.dstate, L = p.Nkv, d = p.d, e = dtype_bytes(p.type);
  const std::int64_t per_group = p.H * d / p.ngroups;
  std::int64_t spans = 0;
  for (std::int64_t h = 0; h < p.H; ++h)
    for (std::int64_t x0 = 0; x0 < d; x0 += tile) {
      const std::int64_t c0 = h * d + x0, c1 = h * d + std::min(d, x0 + tile) - 1;
      spans += c1 / per_group - c0 / per_group + 1;
    }
  const std::int64_t per_batch = f32 * p.H * d * (N + 2) + 4 * e * p.H * L * d + f32 * 2 * spans * L * N;
  return double(p.B) * double(per_batch);
}

std::int64_t memory_bytes_selective_scan_cuda(const problem& p) {
  return io_bytes(p) + f32 * (p.H * p.d * (p.dstate + 2) + 2 * p.B * p.ngroups * p.Nkv * p.dstate);
}

double model_bytes_wkv_cuda(const problem& p) {
  // Per channel: w and u (fp32); K and V read and O written in p.type.
  return double(p.B * p.H * p.d) * double(2 * f32 + 3 * dtype_bytes(p.type) * p.Nkv);
}

std::int64_t memory_bytes_wkv_cuda(const problem& p) { return io_bytes(p) + f32 * 2 * p.H * p.d; }

double model_bytes_wkv6_cuda(const problem& p) {
  // Per head: u once (fp32); r, k, v read and O written in p.type, w_raw (fp32) read.
  return double(p.B * p.H) * double(f32 * p.d + (4 * dtype_bytes(p.type) + f32) * p.Nkv * p.d);
}

std::int64_t memory_bytes_wkv6_cuda(const problem& p) { return io_bytes(p) + f32 * (p.q_elems() + p.H * p.d); }

support scan_support(const problem& p, bool groups) {
  if (p.Nq != p.Nkv)
    return support::no("a scan runs along one sequence: needs Nq = Nkv (got Nq=" + std::to_string(p.Nq) +
                       ", Nkv=" + std::to_string(p.Nkv) + ")");
  if (groups && (p.H * p.d) % p.ngroups != 0)
    return support::no("G=" + std::to_string(p.ngroups) +
                       " does not divide the width H*d = " + std::to_string(p.H * p.d));
  return support::yes();
}

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

namespace {

// Sum over the chunks of one (b, head) of f(T, carry_on): T the chunk's steps, carry_on
// whether a later chunk reads its state.
template <class per_chunk>
double over_chunks(const problem& p, per_chunk f) {
  double total = 0;
  for (std::int64_t t0 = 0; t0 < p.Nkv; t0 += p.Bc) {
    const std::int64_t T = std::min(p.Bc, p.Nkv - t0);
    total += f(double(T), t0 + p.Bc < p.Nkv);
  }
  return double(p.B * p.H) * total;
}

double ssd_flops(const problem& p, bool executed) {
  const double N = double(p.dstate), P = double(p.d);
  return over_chunks(p, [&](double T, bool carry_on) {
    const double pairs = executed ? T * T : T * (T + 1) / 2;
    return 3 * T + 6 * T * P + 2 * T * N * P + pairs * 2 * (N + P) + T * (T + 1) +
           (carry_on ? T * P + 2 * T * N * P + 2 * N * P : 0.0);
  });
}

}  // namespace

double model_flops_ssd(const problem& p) { return ssd_flops(p, false); }
double model_flops_executed_ssd(const problem& p) { return ssd_flops(p, true); }

double model_bytes_ssd(const problem& p) {
  const std::int64_t L = p.Nkv;
  return double(p.B * p.H) * double(f32 * (3 + L + 3 * L * p.d + 2 * L * p.dstate));
}

// cuda: per (b, head): A, D, bias once; dt_raw (fp32), x, z (p.type) read and out written once;
// B and C of the head's group (fp32) once per head.
double model_bytes_ssd_cuda(const problem& p) {
  const std::int64_t L = p.Nkv;
  return double(p.B * p.H) * double(f32 * (3 + L + 2 * L * p.dstate) + 3 * dtype_bytes(p.type) * L * p.d);
}

std::int64_t memory_bytes_ssd_cuda(const problem& p) {
  return io_bytes(p) + f32 * (3 * p.H + p.B * p.H * p.Nkv + 2 * p.B * p.ngroups * p.Nkv * p.dstate);
}

support ssd_support(const problem& p) {
  if (support s = scan_support(p, false); !s.ok) return s;
  if (p.H % p.ngroups != 0)
    return support::no("G=" + std::to_string(p.ngroups) + " does not divide H=" + std::to_string(p.H) +
                       ": SSD's groups hold whole heads");
  return support::yes();
}

double model_exps_ssd(const problem& p) {
  const double P = double(p.d);
  return over_chunks(p,
                     [&](double T, bool carry_on) { return T * (T + 1) / 2 + 2 * T + T * P + (carry_on ? T : 0.0); });
}

}  // namespace attnbench

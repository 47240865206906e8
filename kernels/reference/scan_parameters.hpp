// The scan rows' parameters (docs/alternatives.md): what a scan needs beyond the three
// inputs it shares with attention (u, dt, z or k, v in Q, K, V). One definition, read by the
// kernels (set up outside the timed run) and the references alike. Deterministic in the
// problem's shape: element i of tensor t takes scan_unit(t, i), a uniform value in [0, 1)
// from splitmix64 (no generator state), so that scripts/bench_mambapy.py rebuilds the same
// values with NumPy.
#pragma once

#include <cstdint>
#include <vector>

#include "core/problem.hpp"

namespace attnbench {

// Uniform in [0, 1): the top 24 bits of splitmix64(splitmix64(scan_seed ^ t) ^ i) times 2^-24.
float scan_unit(std::uint64_t tensor, std::uint64_t i);

// Mamba-1 (selective_scan_ref's arguments), D = H * d channels, N = p.dstate, G = p.ngroups:
//   a     [D, N]     A = -(n + 1)                (S4D-real, Mamba's A_log = log(1 .. N))
//   skip  [D]        D = 0.5 + unit(2, c)
//   bias  [D]        dt_bias = dt + log(-expm1(-dt)), dt = exp(ln 1e-3 + unit(3, c) ln 100)
//                    (softplus(dt_bias) = dt: Mamba's initialisation of dt in [1e-3, 0.1])
//   b, c  [B, G, L, N]  input-dependent B and C = 2 unit(0 | 1, i) - 1; n fastest (a chunk of
//                    steps is one contiguous tile; selective_scan_ref holds them as [B, G, N, L])
// Channel ch belongs to group ch / (D / G).
struct selective_scan_parameters {
  std::vector<float> a, skip, bias, b, c;
};
selective_scan_parameters make_selective_scan_parameters(const problem& p);

// RWKV-4 (wkv_cuda.cu's w and u), per channel: the decay w = -exp(-5 + 8 unit(4, c)) in
// [-20, -0.0067] (RWKV-4's time_decay range) and the bonus u = ln 0.3 + unit(5, c) - 0.5.
struct wkv_parameters {
  std::vector<float> w, u;
};
wkv_parameters make_wkv_parameters(const problem& p);

// RWKV-6 (wkv6_cuda.cu's w and u; Q, K, V are its r, k, v): the data-dependent decay input
// w_raw [B, H, L, d] (Q's layout) = -6 + 5 unit(6, ch) + unit(7, i) - 0.5, the decay taken as
// exp(-exp(w_raw)) in (0.68, 0.999) per step by the kernel (RWKV-6's time_decay range plus a
// data-dependent part), and the bonus u [D] = unit(8, c) (time_faaaa's range).
struct wkv6_parameters {
  std::vector<float> w_raw, u;
};
wkv6_parameters make_wkv6_parameters(const problem& p);

// Mamba-2's SSD (mamba_chunk_scan_combined's arguments; x, z in Q, V), H heads of P = d
// channels, N = p.dstate, G = p.ngroups groups of H / G heads:
//   a      [H]        A = -(1 + 15 unit(9, h))     (Mamba-2's A_log uniform in log 1 .. log 16)
//   skip   [H]        D = 0.5 + unit(10, h)
//   bias   [H]        dt_bias as the selective scan's (softplus(dt_bias) in [1e-3, 0.1]), unit(11, h)
//   dt_raw [B, H, L]  the input-dependent dt before bias and softplus = unit(12, i) - 0.5
//                     (Mamba-2 projects it from the input; K is not read)
//   b, c   [B, G, L, N]  B and C = 2 unit(13 | 14, i) - 1, n fastest
// Head h belongs to group h / (H / G).
struct ssd_parameters {
  std::vector<float> a, skip, bias, dt_raw, b, c;
};
ssd_parameters make_ssd_parameters(const problem& p);

}  // namespace attnbench

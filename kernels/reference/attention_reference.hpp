// fp64 CPU reference for softmax and linear attention: plain loops over
// (query row, key), obviously right, no tiling. Computes only the requested
// rows so large problems can be spot-checked (the harness samples them).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/variant.hpp"

namespace attnbench {

struct reference_rows {
  std::vector<double> o;    // rows.size() * d
  std::vector<double> lse;  // rows.size(); -inf for rows with no visible key (softmax only)
};

// softmax(Q K^T / sqrt(d) + mask) V for the given flat rows (b * H + h) * Nq + i;
// a row with no visible key gives zeros. Multithreaded over rows.
reference_rows reference_softmax(const host_inputs& in, std::span<const std::int64_t> rows);

// Linear attention, phi = elu + 1: O_i = phi(q_i)^T S_i / (phi(q_i)^T z_i) with
// S_i = sum_j phi(k_j) v_j^T, z_i = sum_j phi(k_j) over j visible to i
// (mask none: all keys; causal: j <= i'). Other masks are rejected.
reference_rows reference_linear(const host_inputs& in, std::span<const std::int64_t> rows);

// The scans' references (kernels/reference/scan_reference.hpp).
reference_rows reference_selective_scan(const host_inputs& in, std::span<const std::int64_t> rows);
reference_rows reference_wkv(const host_inputs& in, std::span<const std::int64_t> rows);
reference_rows reference_wkv6(const host_inputs& in, std::span<const std::int64_t> rows);
reference_rows reference_ssd(const host_inputs& in, std::span<const std::int64_t> rows);

// Linformer (approx_reference.cpp): K-bar = E^T K and V-bar = F^T V in fp64 from the same
// float E and F as the kernel (approx_params.hpp), then softmax(q K-bar^T / sqrt(d)) V-bar
// over the k projected keys, with its lse. Masks other than none are rejected.
reference_rows reference_linformer(const host_inputs& in, std::span<const std::int64_t> rows);

// Performer FAVOR+ (approx_reference.cpp): positive random features of the same float
// omega as the kernel, phi(x) = exp(omega^T x~ - |x~|^2 / 2) / sqrt(m), x~ = d^-1/4 x, in
// fp64 without stabilisers (they cancel in the ratio), then
// O_i = sum_j (phi(q_i) . phi(k_j)) v_j / sum_j phi(q_i) . phi(k_j) over the keys visible
// to i (none: all; causal: j <= i'). Other masks are rejected.
reference_rows reference_performer(const host_inputs& in, std::span<const std::int64_t> rows);

// Bahdanau additive attention (approx_reference.cpp): q' = W q, k' = U k in fp64 from the
// same float W, U, v as the kernel, e_ij = v^T tanh(q'_i + k'_j) (no 1/sqrt(d)), then
// softmax over the visible keys (any interval or sparse mask) and its lse.
reference_rows reference_additive(const host_inputs& in, std::span<const std::int64_t> rows);

// The Routing Transformer (approx_reference.cpp): its own routing of the same float centroids
// (approx_params.hpp: top w_q queries and w_k keys per cluster by fp64 dot product, ties to
// the lower position), softmax(q K_c^T / sqrt(d)) V_c in fp64 over the keys of each cluster
// the row is routed to that it sees (none: all; causal on the original positions), the mean
// over those clusters; zeros when there is none. No lse. Other masks are rejected.
reference_rows reference_routing(const host_inputs& in, std::span<const std::int64_t> rows);

reference_rows reference_for(attention_math m, const host_inputs& in, std::span<const std::int64_t> rows);

}  // namespace attnbench

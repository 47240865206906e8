// fp64 references of the scan rows (docs/alternatives.md), on the attention problem of the
// same width: channel ch = h d + x of batch b at step t reads Q, K, V (and writes O) at the
// element ((b H + h) L + t) d + x, the element of query row (b, h, t), column x.
//  - selective scan: selective_scan_ref's loop, step after step in double: dt = softplus(K + bias),
//    h = exp(dt A) h + dt B u (u = Q), y = C . h + D u, out = y silu(z) (z = V);
//  - WKV: RWKV-4's explicit O(T^2) formula, per channel and step t:
//    out_t = (sum_{i<t} e^{(t-1-i) w + k_i} v_i + e^{u + k_t} v_t) / (the same sum without v),
//    each exponent taken relative to the largest so the sums stay finite;
//  - WKV6: RWKV-6's matrix state in its explicit form, per head and step t (r, k, v = Q, K, V,
//    w_m = exp(-exp(w_raw_m)) per channel):
//    out_t = (sum_j r_t,j u_j k_t,j) v_t + sum_{s<t} (sum_j r_t,j (prod_{m=s+1}^{t-1} w_m,j) k_s,j) v_s,
//    O(t d) per row (the decay products built backwards from t - 1);
//  - SSD (Mamba-2): its recurrence step after step in double, per head: dt = softplus(dt_raw +
//    bias), S = exp(dt A) S + dt B_t x_t^T (N x P), y = S^T C_t + D x_t (x = Q), out = y silu(z)
//    (z = V); tests/cpu/test_scan_rows.cpp holds it to the explicit (masked-attention) form.
#pragma once

#include <span>

#include "kernels/reference/attention_reference.hpp"
#include "kernels/reference/reference_fp32.hpp"

namespace attnbench {

reference_rows reference_selective_scan(const host_inputs& in, std::span<const std::int64_t> rows);
reference_rows reference_wkv(const host_inputs& in, std::span<const std::int64_t> rows);
reference_rows reference_wkv6(const host_inputs& in, std::span<const std::int64_t> rows);
reference_rows reference_ssd(const host_inputs& in, std::span<const std::int64_t> rows);

// Every row (the check of every output row), in double and stored as float: the selective
// scan's and SSD's loops as above; WKV's running-max recurrence and WKV6's d x d state recurrence in double
// (O(L) per channel, O(L d^2) per head: the explicit formulas judge the sampled rows).
reference_all_rows reference_scan_all_rows(attention_math m, const host_inputs& in);

}  // namespace attnbench

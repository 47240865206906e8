// fp64 CPU reference of the softmax attention backward (docs/backward.md): dQ, dK
// and dV of L = sum(O * dO) for O = softmax(Q K^T / sqrt(d) + mask) V, by plain
// loops, obviously right, no tiling. Every query row's statistics (lse, and
// D = rowsum(dO * O)) are computed in fp64 from the inputs; then only the
// requested gradient rows:
//   dQ_i = scale sum_j P_ij (dP_ij - D_i) K_j,             dP_ij = dO_i . V_j
//   dK_j = scale sum_{h in group(j)} sum_i P_ij (dP_ij - D_i) Q_i
//   dV_j = sum_{h in group(j)} sum_i P_ij dO_i
// over visible pairs (P_ij = exp(s_ij - lse_i)). GQA: dK and dV of a KV head sum
// over its H / Hkv query heads. A query row with no visible key has zero dQ and
// adds nothing to dK, dV.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/variant.hpp"

namespace attnbench {

struct reference_grads {
  std::vector<double> dq;      // q_rows.size() * d
  std::vector<double> dk, dv;  // kv_rows.size() * d
};

// q_rows: flat query rows (b * H + h) * Nq + i; kv_rows: flat key rows
// (b * Hkv + hkv) * Nkv + j. in.d_o must hold dO. Multithreaded.
reference_grads reference_softmax_backward(const host_inputs& in, std::span<const std::int64_t> q_rows,
                                           std::span<const std::int64_t> kv_rows);

}  // namespace attnbench

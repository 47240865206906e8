// Terms the model files share (kernels/models/*.cpp only).
#pragma once

#include <cstdint>

#include "core/problem.hpp"

namespace attnbench::model_terms {

// S, P, lse, l, m and linear attention's state are fp32 on every backend.
inline constexpr std::int64_t f32 = 4;
// Element size of Q, K and V (1 for e4m3).
inline std::int64_t es(const problem& p) { return dtype_bytes(p.type); }
// Element size of O: output_dtype(p.type) (bf16 for e4m3, else p.type).
inline std::int64_t eo(const problem& p) { return output_bytes(p.type); }
// Q, K, V, O as a CUDA runner allocates them.
inline std::int64_t io_bytes(const problem& p) {
  return es(p) * (p.q_elems() + 2 * p.kv_elems()) + eo(p) * p.o_elems();
}

}  // namespace attnbench::model_terms

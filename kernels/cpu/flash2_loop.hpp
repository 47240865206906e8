// flash2's Q-outer loop, shared by the `flash2` and `sparse` CPU rows: they
// differ only in which key tiles a query tile visits.
#pragma once

#include "kernels/cpu/cpu_common.hpp"

namespace attnbench::cpu {

// Key tiles query tile qt visits, as (at most) two ascending tile intervals.
using kv_tile_visit = tile_spans (*)(const problem& p, std::int64_t qt);

// O (and lse) for every query row; K/V tiles outside visit(p, qt) are
// skipped, tiles inside are masked element-wise.
void flash2_forward(const problem& p, const float* q, const float* k, const float* v, float* o,
                    float* lse, byte_counter& bytes, kv_tile_visit visit);

}  // namespace attnbench::cpu

// flash2's Q-outer loop, shared by the `flash2` and `sparse` CPU rows: they
// differ only in which key tiles a query tile visits.
#pragma once

#include "kernels/cpu/cpu_common.hpp"

namespace attnbench::cpu {

// O (and lse) for every query row; query tile qt of head h visits the key
// tiles of tiles.view() (core/tiles.hpp make_kv_tile_list: the causal bound
// for flash2, exactly the tiles with a visible pair for sparse; built by the
// runner outside run()), masked element-wise where not fully visible. Adds the bytes it
// moves to `bytes` and the exps it executes to `exps`.
void flash2_forward(const problem& p, const float* q, const float* k, const float* v, float* o, float* lse,
                    byte_counter& bytes, exp_counter& exps, const kv_tile_list& tiles);

// The runner of a row that is this loop over the key tiles `walk` lists (flash2: the causal
// bound; sparse: the visible tiles).
std::unique_ptr<runner> make_flash2_loop_runner(const problem& p, bool writes_lse, tile_walk walk);

}  // namespace attnbench::cpu

// sparse (CPU): the flash2 loop visiting only the key tiles that hold a
// visible pair (make_kv_tile_list(p, visible): the global-key prefix plus the
// tiles under the local window; for strided, random and layout masks the
// per-query-tile lists of kv_tile_visible). Changed from flash2: flash2 honours only the causal
// bound and masks everything else element-wise, so a local window of W keys
// still costs O(Nkv) per query tile; here the cost is O(W + G) per query
// tile. Only masks with a local window or global tokens benefit, so the row
// supports only those. Expected bottleneck: math, as flash2, on
// ~(W + Bc + G) keys per row instead of Nkv.
#include "kernels/cpu/flash2_loop.hpp"

namespace attnbench::cpu {

std::unique_ptr<runner> make_sparse_runner(const problem& p, bool writes_lse) {
  return make_flash2_loop_runner(p, writes_lse, tile_walk::visible);
}

}  // namespace attnbench::cpu

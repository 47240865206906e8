#include "kernels/cuda/flash2/flash2_plan.hpp"

#include <algorithm>

#include "core/cuda/launch_limits.hpp"
#include "core/tiles.hpp"
#include "kernels/models/models.hpp"

namespace attnbench::cuda {

problem decode_geometry(const problem& p) {
  problem q = p;
  q.Br = kDecodeBr;
  q.Bc = kDecodeBc;
  return q;
}

std::int64_t splitkv_max_tiles(const problem& p) {
  const problem q = decode_geometry(p);
  const int pack = static_cast<int>(p.group());
  const std::int64_t rows = packed_rows(q, pack);
  std::int64_t most = 0;
  for (std::int64_t r0 = 0; r0 < rows; r0 += q.Br) {
    const span64 qr = packed_query_range(r0, std::min(rows, r0 + q.Br), pack);
    most = std::max(most, kv_tiles_for_queries(q, qr.lo, qr.hi, tile_walk::visible).count());
  }
  return most;
}

int splitkv_num_splits(const problem& p, int sms) {
  const problem q = decode_geometry(p);
  const std::int64_t ctas = p.B * p.Hkv * row_tiles(q, static_cast<int>(p.group()), q.Br);
  // About 4 CTAs per SM: 3 fit at once (166 registers x 128 threads, 74 KB of
  // shared memory at d = 128) and the 4th evens out the tail. Each split keeps at least
  // 4 key tiles (256 keys), so its partial O (d fp32 per row, written and
  // read once) stays below 1/16 of the K/V bytes it reads at Nq = 1.
  const std::int64_t want = ceil_div(4LL * sms, ctas);
  const std::int64_t cap = std::max<std::int64_t>(1, splitkv_max_tiles(p) / 4);
  return static_cast<int>(std::clamp<std::int64_t>(std::min(want, cap), 1, kMaxSplits));
}

std::int64_t splitkv_workspace_bytes(const problem& p, int sms) {
  const int splits = splitkv_num_splits(p, sms);
  return splits > 1 ? static_cast<std::int64_t>(splits) * p.rows() * (p.d + 1) * 4 : 0;
}

const flash2_config* flash2_config_for(flash2_row row, const problem& p) {
  const int d = static_cast<int>(p.d);
  return row == flash2_row::splitkv ? find_flash2_decode_config(d, p.type) : find_flash2_config(d, p.type, p.Br, p.Bc);
}

flash2_plan plan_for(flash2_row row, const problem& p, int sms) {
  flash2_plan s;
  s.pack = (row == flash2_row::packed || row == flash2_row::splitkv) ? static_cast<int>(p.group()) : 1;
  s.walk = row == flash2_row::sparse || row == flash2_row::splitkv ? tile_walk::visible : tile_walk::causal_bound;
  s.geometry = row == flash2_row::splitkv ? decode_geometry(p) : p;
  s.splits = row == flash2_row::splitkv ? splitkv_num_splits(p, sms) : 1;
  return s;
}

model_figures model_flash2_row(flash2_row row, const problem& p) {
  return model_flash2_cuda(p, plan_for(row, p, current_device_limits().sm_count));
}

std::int64_t mask_device_bytes(const flash2_plan& plan) {
  const mask_spec& m = plan.geometry.mask;
  if (!m.has_sparse()) return 0;
  std::int64_t n = sizeof(sparse_terms);
  if (m.has_layout()) n += m.sparse->layout_heads * m.sparse->layout_rows * m.sparse->layout_cols;
  if (plan_uses_tile_list(plan)) {
    const problem& g = plan.geometry;
    n += tile_list_bytes(m.per_head() ? g.H : 1, num_q_tiles(g), num_kv_tiles(g));
  }
  return n;
}

}  // namespace attnbench::cuda

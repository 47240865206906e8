// Parameters shared by the host side (row, runner, plan, models; plain C++)
// and the device side (flash3_kernel.cuh) of the flash3 family: the problem,
// the tensor pointers, the three TMA tensor maps (encoded on the host,
// flash3_plan.cpp) and the runtime settings of the tile walk.
//
// Row tiles: a CTA owns `tile_rows` packed rows = pack * queries_per_tile
// (queries_per_tile = floor(BM / pack)), query-major: packed row r is query
// r / pack of head head0 + r % pack, as in flash2 (flash2_params.hpp). The Q
// tensor map is 4-D (d, H, Nq, B), so one TMA box (64, pack, queries_per_tile,
// 1) lands exactly these rows in shared memory. When pack does not divide BM
// (G = 3: 126 of 128 rows) the last BM - tile_rows rows of the Q tile are
// zeroed by the consumers and never stored.
#pragma once

#include <cuda.h>  // CUtensorMap (tests/emu/include has the emulator's stand-in)

#include <cstdint>

#include "core/tiles.hpp"

namespace attnbench::cuda {

// Deliberate defects for emu.flash3_faults (tests/emu/flash3): each is a
// plausible kernel bug the emulator must notice. none in every real run.
enum class flash3_fault : int {
  none = 0,
  wrong_swizzle,       // descriptors say 64B swizzle, the tensor maps wrote 128B
  missing_expect_tx,   // K full barrier armed with a plain arrive: the phase completes before the bytes land
  wrong_phase,         // consumers wait on the K full barrier with the parity flipped
  missing_wait_group,  // softmax reads S before wgmma.wait_group retired its group
  missing_fence,       // no fence.proxy.async between zeroing Q's pad rows and wgmma reading them
  // fp8 (flash3_fp8) only:
  missing_v_transpose,     // the transposer warps skip the V -> V^T copy (still arrive): P V reads a stale V^T
  unpermuted_v_transpose,  // V^T written in plain key order, not the order of P's A fragment
  wrong_descale,           // K's descale folded as Q's (scale x dq x dq): every score off by dq / dk
};

struct alignas(128) flash3_params {
  CUtensorMap tma_q, tma_k, tma_v;  // 4-D maps: Q (d, H, Nq, B), K/V (d, Nkv, Hkv, B), 128B (64B) swizzle
  problem p;                        // p.Br = tile_rows (packed rows per CTA), p.Bc = the key tile
  void* o = nullptr;                // [B, H, Nq, d] in output_dtype(p.type) (bf16 for e4m3)
  float* lse = nullptr;             // [B, H, Nq]
  int pack = 1;                     // query heads per CTA (1 or G = H / Hkv)
  int queries_per_tile = 0;         // floor(BM / pack)
  tile_walk walk = tile_walk::causal_bound;
  float scale = 0;       // 1 / sqrt(d)
  float scale_log2 = 0;  // scale * log2(e)
  // e4m3: per-tensor scales of Q, K, V (value = code x scale, core/fp8.hpp),
  // folded in the kernel: scores by descale_q * descale_k, O by descale_v.
  float descale_q = 1, descale_k = 1, descale_v = 1;
  flash3_fault fault = flash3_fault::none;
};

// ---- host interface (flash3_instances.cpp, flash3_plan.cpp) ----------------
using flash3_launch_fn = void (*)(const flash3_params&, void* stream);
struct flash3_config {
  int d;
  dtype type;
  int bm, bn;                        // CTA row tile (2 consumer warpgroups x 64 rows) and key tile
  int stages;                        // K/V ring depth
  int threads;                       // 384: producer warpgroup + 2 consumer warpgroups
  int smem;                          // dynamic shared memory bytes per CTA (incl. 1 KB alignment slack)
  int producer_regs, consumer_regs;  // setmaxnreg budgets
  flash3_launch_fn launch;
  const char* name;
};
const flash3_config* flash3_configs(int* count);
const flash3_config* find_flash3_config(int d, dtype t);

}  // namespace attnbench::cuda

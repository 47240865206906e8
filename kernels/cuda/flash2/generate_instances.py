#!/usr/bin/env python3
"""Writes the flash2 instantiation files (one kernel per translation unit) and
flash2_instances.cpp, the list the rows look configurations up in.

Run from the repository root: python3 kernels/cuda/flash2/generate_instances.py
Tile choices are explained in docs/flash2.md; each row below is
(kind, d, Br, Bc, warps over rows, warps over keys, min CTAs/SM, Q in registers).
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIGS = []
for d in (64, 128):
    CONFIGS += [("fwd", d, 64, 64, 4, 1, 2, True), ("fwd", d, 128, 64, 8, 1, 1, True),
                ("fwd", d, 128, 128, 8, 1, 1, d == 64), ("splitkv", d, 16, 64, 1, 4, 3, d == 64)]
# d = 128 only: FA2's warp layout (4 warps x 32 rows, two m16 tiles per warp),
# which halves the K/V shared-memory reads per FLOP; it fits 255 registers
# without spills only with 32-key tiles (64 keys spilled 132 bytes).
CONFIGS.append(("fwd", 128, 128, 32, 4, 1, 1, False))
# 64x128: the tile of the backward's 8-warp instantiation (flash2_bwd_params.hpp), so that
# a bwd or fwd_bwd entry at 64x128 has its forward at the same tile. At d = 128 Q is re-read
# from shared memory (in registers it spilled 12-20 bytes beside 255 registers).
CONFIGS.append(("fwd", 64, 64, 128, 4, 1, 1, True))
CONFIGS.append(("fwd", 128, 64, 128, 4, 1, 1, False))
TYPES = {"fp16": "__half", "bf16": "__nv_bfloat16"}


def name_of(kind, d, dt, bm, bn):
    return f"flash2_{kind}_hdim{d}_{dt}_br{bm}_bc{bn}"


def write_instances():
    rows, decls = [], []
    for kind, d, bm, bn, wm, wn, mc, qr in CONFIGS:
        for dt, ctype in TYPES.items():
            name = name_of(kind, d, dt, bm, bn)
            with open(os.path.join(HERE, name + ".cu"), "w") as f:
                f.write(f"""// Instantiation {name}: {wm * wn} warps ({wm} over rows x {wn} over keys),
// at least {mc} CTA(s) per SM, Q fragments {'in registers' if qr else 're-read from shared memory'}.
// Generated list: kernels/cuda/flash2/flash2_instances.cpp; resources: docs/flash2.md.
#include "kernels/cuda/flash2/flash2_kernel.cuh"

namespace attnbench::cuda {{
void launch_{name}(const flash2_params& prm, void* stream) {{
  launch_flash2_fwd<flash2_traits<{d}, {bm}, {bn}, {wm}, {wn}, {ctype}, {mc}, {'true' if qr else 'false'}>>(prm, stream);
}}
}}  // namespace attnbench::cuda
""")
            decls.append(f"void launch_{name}(const flash2_params&, void*);")
            rows.append(f'    {{{d}, dtype::{dt}, {bm}, {bn}, {wm * wn}, {"true" if kind == "splitkv" else "false"}, '
                        f'flash2_traits<{d}, {bm}, {bn}, {wm}, {wn}, void>::smem_bytes, &launch_{name}, "{name}"}},')
    return decls, rows


def write_table(decls, rows):
    nl = "\n"
    src = f'''// The list of flash2 kernel instantiations (one translation unit each,
// flash2_<fwd|splitkv>_hdim<d>_<dtype>_br<Br>_bc<Bc>.cu) and the lookups the
// rows use. Tile choices and their ptxas resources: docs/flash2.md.
//   64x64   4 warps, 2 CTAs/SM: short sequences, many CTAs; Q in registers
//   128x64  8 warps: default for d = 128 (128 rows share each K/V tile; 228
//           registers at d = 128 without spills, where 4 warps x 32 rows spilled
//           520 bytes)
//   128x128 8 warps: default for d = 64; at d = 128 Q is re-read from shared
//           memory (keeping it in registers spilled) and the 170 KB of shared
//           memory fit sm_90 only (sm_80 allows 163 KB)
//   128x32  4 warps x 32 rows (d = 128): FA2's layout, half the K/V shared-
//           memory reads per FLOP of the 8-warp tiles, Q re-read from smem
//   64x128  4 warps, the backward's 8-warp tile (forward of its bwd/fwd_bwd entries)
//   16x64   decode / split-KV: 4 warps split each key tile (16 keys each),
//           at least 3 CTAs/SM (<= 168 registers) to keep loads in flight
#include "kernels/cuda/flash2/flash2_params.hpp"
#include "kernels/cuda/flash2/flash2_traits.cuh"

namespace attnbench::cuda {{

{nl.join(decls)}

namespace {{
const flash2_config configs[] = {{
{nl.join(rows)}
}};
}}  // namespace

const flash2_config* flash2_configs(int* count) {{
  *count = static_cast<int>(sizeof(configs) / sizeof(configs[0]));
  return configs;
}}

const flash2_config* find_flash2_config(int d, dtype t, std::int64_t br, std::int64_t bc) {{
  for (const auto& c : configs)
    if (!c.decode && c.d == d && c.type == t && c.bm == br && c.bn == bc) return &c;
  return nullptr;
}}

const flash2_config* find_flash2_decode_config(int d, dtype t) {{
  for (const auto& c : configs)
    if (c.decode && c.d == d && c.type == t) return &c;
  return nullptr;
}}

}}  // namespace attnbench::cuda
'''
    with open(os.path.join(HERE, "flash2_instances.cpp"), "w") as f:
        f.write(src)


if __name__ == "__main__":
    write_table(*write_instances())

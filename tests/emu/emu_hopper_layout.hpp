// Address maps of the Hopper twins (emu_hopper.cpp), header-only so the
// layout oracle (hopper_oracle_test.cpp, against CuTe) calls exactly the code
// the twins use. Written from the PTX ISA: "Matrix Descriptor Format" and
// "Shared Memory Matrix Layout" of wgmma.mma_async (canonical layouts in
// units of 16-byte chunks, T = 128 / element bits per chunk: 8 sixteen-bit
// or 16 eight-bit elements), "Register Fragments" for m64nNk16 and (A of
// 8-bit types) m64nNk32, and the tensor-map swizzle modes of
// cp.async.bulk.tensor (16-byte chunks XOR-ed within 32/64/128-byte rows).
//
// Swizzles act on shared-window ADDRESSES (bits 4.. of the address XOR bits
// 7.., Swizzle<B,4,3>), not on offsets inside a tile: TMA writes and wgmma
// reads agree whatever the tile's start, which is what lets a kernel step
// the descriptor's start address by 32 bytes to the next k16 slice inside a
// 128-byte swizzled row. The descriptor's base offset (bits 49-51) is read as
// the ISA defines it, the row phase of the pattern's start: the swizzle row
// is ((address >> 7) - base offset); 0 for patterns starting on their repeat
// boundary (1024/512/256 bytes), which is all CuTe ever encodes.
#pragma once

#include <cstdint>

namespace attnbench::emu::hopper {

// ---- wgmma shared-memory matrix descriptor ----------------------------------
enum class desc_swizzle : int { none = 0, b128 = 1, b64 = 2, b32 = 3 };  // bits 62-63

struct smem_desc {
  std::uint32_t start;  // byte address in the shared window
  std::uint32_t lbo;    // leading-dimension byte offset
  std::uint32_t sbo;    // stride-dimension byte offset
  std::uint32_t base_offset;
  desc_swizzle swizzle;
};

inline smem_desc decode_desc(std::uint64_t d) {
  smem_desc s;
  s.start = static_cast<std::uint32_t>(d & 0x3fff) << 4;
  s.lbo = static_cast<std::uint32_t>((d >> 16) & 0x3fff) << 4;
  s.sbo = static_cast<std::uint32_t>((d >> 32) & 0x3fff) << 4;
  s.base_offset = static_cast<std::uint32_t>((d >> 49) & 0x7);
  s.swizzle = static_cast<desc_swizzle>((d >> 62) & 0x3);
  return s;
}

// Swizzle<B,4,3> bit count: 0 none, 1 for 32B, 2 for 64B, 3 for 128B.
inline int swizzle_bits(desc_swizzle s) {
  switch (s) {
    case desc_swizzle::none: return 0;
    case desc_swizzle::b32: return 1;
    case desc_swizzle::b64: return 2;
    case desc_swizzle::b128: return 3;
  }
  return 0;
}
// Width of a swizzle row in 16-byte chunks (W of the canonical layouts).
inline int swizzle_chunks(desc_swizzle s) { return 1 << swizzle_bits(s); }

// The 16-byte chunk index (address bits 4..4+B) XOR the row (bits 7..7+B),
// the row counted from the pattern's start (base_offset rows before).
inline std::uint32_t swizzle_address(std::uint32_t addr, int bits, std::uint32_t base_offset = 0) {
  if (bits == 0) return addr;
  const std::uint32_t mask = (1u << bits) - 1;
  const std::uint32_t row = ((addr >> 7) - base_offset) & mask;
  return addr ^ (row << 4);
}

// Shared address of element (mn, k) of an operand (A: mn = m < 64; B: mn =
// n < N; k < 16 for 16-bit elements, k < 32 for 8-bit ones) described by d,
// K-major or MN-major, elements of `bytes` bytes (T = 16 / bytes of them per
// 16-byte chunk). Canonical layouts (PTX ISA, in 16-byte chunks; r < 8 rows
// of a core matrix / swizzle atom, W = swizzle_chunks):
//   K-major,  none:      mn = 8g + r, k = Tc + e:  r*16 + g*SBO + c*LBO + bytes*e
//   K-major,  swizzled:  r*16W + g*SBO + c*16 + bytes*e            (LBO unused)
//   MN-major, none:      mn = 8g + e, k = 8c + r:  2e + g*SBO + r*16 + c*LBO
//   MN-major, swizzled:  mn = 8(Wg + w) + e:       2e + w*16 + g*LBO + r*16W + c*SBO
// then the swizzle of the address. MN-major is 16-bit only: the ISA's
// transpose (imm-trans-a/b) exists for .f16/.bf16 alone, so 8-bit operands
// are always K-major (the twin rejects anything else before calling this).
inline std::uint32_t operand_address(const smem_desc& d, bool k_major, int mn, int k, int bytes = 2) {
  const int W = swizzle_chunks(d.swizzle);
  std::uint32_t off;
  if (k_major) {
    const std::uint32_t T = 16 / bytes, eb = bytes;
    const std::uint32_t g = mn / 8, r = mn % 8, c = k / T, e = k % T;
    off = d.swizzle == desc_swizzle::none ? r * 16 + g * d.sbo + c * d.lbo + eb * e
                                          : r * 16 * W + g * d.sbo + c * 16 + eb * e;
  } else {
    const std::uint32_t c = k / 8, r = k % 8, e = mn % 8;
    if (d.swizzle == desc_swizzle::none) {
      off = 2 * e + (mn / 8) * d.sbo + r * 16 + c * d.lbo;
    } else {
      const std::uint32_t w = (mn / 8) % W, g = (mn / 8) / W;
      off = 2 * e + w * 16 + g * d.lbo + r * 16 * W + c * d.sbo;
    }
  }
  return swizzle_address(d.start + off, swizzle_bits(d.swizzle), d.base_offset);
}

// ---- register fragments of wgmma m64nNk16 / m64nNk32 (t = thread in the warpgroup)
struct coord {
  int row, col;
};
// Accumulator D (fp32): N/2 registers; register i of thread t.
inline coord d_fragment(int t, int i) {
  const int warp = t / 32, lane = t % 32;
  return {16 * warp + lane / 4 + 8 * ((i / 2) % 2), 8 * (i / 4) + 2 * (lane % 4) + (i % 2)};
}
// A (16-bit) in registers: 8 elements a0..a7 (register j holds a_2j low, a_2j+1 high).
inline coord a_fragment(int t, int i) {
  const int warp = t / 32, lane = t % 32;
  return {16 * warp + lane / 4 + 8 * ((i / 2) % 2), 8 * (i / 4) + 2 * (lane % 4) + (i % 2)};
}
// A (8-bit: .e4m3/.e5m2/.s8/.u8 of m64nNk32) in registers: 16 elements
// a0..a15, register j holding a_4j..a_4j+3 from its low byte up. Per warp (16
// rows): a0..a3 are 4 consecutive k of row lane/4, a4..a7 the same k 8 rows
// below, a8..a15 the same at k + 16. In bytes this is the 16-bit fragment.
inline coord a_fragment_8bit(int t, int i) {
  const int warp = t / 32, lane = t % 32;
  return {16 * warp + lane / 4 + 8 * ((i / 4) % 2), 16 * (i / 8) + 4 * (lane % 4) + (i % 4)};
}

// ---- TMA (cp.async.bulk.tensor) box swizzle ------------------------------------
// CU_TENSOR_MAP_SWIZZLE_{NONE,32B,64B,128B} = 0..3 -> Swizzle<B,4,3> bits 0..3.
inline int tma_swizzle_bits(int cu_swizzle) { return cu_swizzle >= 0 && cu_swizzle <= 3 ? cu_swizzle : -1; }
// Shared address of byte `byte_in_box` of a box (dense, innermost dimension
// first) written to dst.
inline std::uint32_t tma_box_address(std::uint32_t dst, std::uint32_t byte_in_box, int cu_swizzle) {
  return swizzle_address(dst + byte_in_box, tma_swizzle_bits(cu_swizzle));
}

}  // namespace attnbench::emu::hopper

// What the flash2 and flash3 emulator cases (tests/emu/emu_test.cpp,
// tests/emu/flash3/emu_flash3_test.cpp) share: fp16/bf16 bits of the host
// inputs and outputs, and the check of every row of O and lse against the
// fp64 reference (rows with no visible key must be exactly 0 with lse = -inf;
// a NaN anywhere counts as non-finite and never passes).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/mask.hpp"
#include "core/problem.hpp"
#include "kernels/reference/attention_reference.hpp"

namespace attnbench::emu_rows {

inline std::uint16_t to_bits(dtype t, float x) {  // x is already representable in t
  if (t == dtype::bf16) {
    std::uint32_t u;
    std::memcpy(&u, &x, 4);
    return static_cast<std::uint16_t>(u >> 16);
  }
  const _Float16 h = static_cast<_Float16>(x);
  std::uint16_t u;
  std::memcpy(&u, &h, 2);
  return u;
}

inline float from_bits(dtype t, std::uint16_t u) {
  if (t == dtype::bf16) {
    const std::uint32_t w = std::uint32_t(u) << 16;
    float f;
    std::memcpy(&f, &w, 4);
    return f;
  }
  _Float16 h;
  std::memcpy(&h, &u, 2);
  return static_cast<float>(h);
}

inline std::vector<std::uint16_t> to_bits(dtype t, const std::vector<float>& x) {
  std::vector<std::uint16_t> r(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) r[i] = to_bits(t, x[i]);
  return r;
}

struct rows_check {
  double rel_l2 = 0, worst_row_rel = 0, lse_err = 0;
  std::int64_t nonfinite = 0, masked = 0, masked_bad = 0, worst_row = -1, first_bad = -1;
};

// o: p.rows() x p.d in the kernel's output dtype (bf16 for e4m3); lse: p.rows().
inline rows_check check_rows(const problem& p, const std::vector<std::uint16_t>& o, const std::vector<float>& lse,
                             const reference_rows& ref) {
  rows_check c;
  double num = 0, den = 0;
  for (std::int64_t r = 0; r < p.rows(); ++r) {
    const bool empty = visible_keys(p, r % p.Nq) == 0;
    c.masked += empty;
    double rn = 0, rd = 0;
    bool row_bad = false;
    for (std::int64_t e = 0; e < p.d; ++e) {
      const double got = from_bits(output_dtype(p.type), o[r * p.d + e]), want = ref.o[r * p.d + e];
      if (!std::isfinite(got)) {
        ++c.nonfinite;
        row_bad = true;
        continue;
      }
      if (empty && got != 0.0) row_bad = true, ++c.masked_bad;
      rn += (got - want) * (got - want);
      rd += want * want;
    }
    num += rn, den += rd;
    const double rel = rd > 0 ? std::sqrt(rn / rd) : std::sqrt(rn);
    if (!(rel <= c.worst_row_rel)) c.worst_row_rel = rel, c.worst_row = r;
    if (empty) {
      if (!(std::isinf(lse[r]) && lse[r] < 0)) ++c.masked_bad, row_bad = true;
    } else if (!std::isfinite(lse[r])) {
      ++c.nonfinite, row_bad = true;
    } else {
      c.lse_err = std::max(c.lse_err, std::fabs(lse[r] - ref.lse[r]));
    }
    if (row_bad && c.first_bad < 0) c.first_bad = r;
  }
  c.rel_l2 = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  return c;
}

}  // namespace attnbench::emu_rows

// Host tensors: deterministic random inputs, rounding to a dtype (e4m3:
// per-tensor quantisation with recorded scales) and row sampling for validation. The error
// metric every check uses and the tolerances are in error_metrics.hpp (included here).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <span>
#include <string_view>
#include <vector>

#include "core/variant.hpp"
#include "harness/error_metrics.hpp"

namespace attnbench {

// Rounds x to the nearest value representable in t (round-to-nearest-even);
// identity for fp32; e4m3: e4m3_round(x), unscaled and saturating to +-448.
float round_to(dtype t, float x);

// Q, K, V ~ N(0, 1) in fp32 from a seed, not rounded (the "originals"; same
// seed, same values for every dtype); scales 1. The seed rule (blocks, so that inputs generate in parallel):
// element i of tensor t (q 0, k 1, v 2) is drawn in block i / input_block_elems of
// that tensor by std::normal_distribution<float> on a std::mt19937_64 seeded with
// input_block_seed(seed, t, block), restarted per block; the blocks are generated in
// parallel (OpenMP) and the values do not depend on the thread count. (Files from before this
// rule drew q, k, v from one generator in turn: other values for the same seed.)
inline constexpr std::int64_t input_block_elems = std::int64_t{1} << 16;
std::uint64_t input_block_seed(std::uint64_t seed, int tensor, std::int64_t block);
host_inputs make_original_inputs(const problem& p, std::uint64_t seed = 1234);
// dO of a backward run (docs/backward.md): [B, H, Nq, d] ~ N(0, 1), element i drawn as Q's
// are (same block rule, tensor 3), rounded to O's dtype (output_dtype(p.type)).
std::vector<float> make_grad_output(const problem& p, std::uint64_t seed = 1234);
// Rounds the originals to in.p.type in place: fp16/bf16 value by value
// (round_to); e4m3 per tensor (quantize_e4m3), recording in.scales.
void round_inputs(host_inputs& in);
// make_original_inputs, then round_inputs: what a kernel is given.
host_inputs make_inputs(const problem& p, std::uint64_t seed = 1234);

// The fp32 originals of a sweep's shapes (B, H, Hkv, Nq, Nkv, d; not dtype, mask or
// tiles), generated once and shared by every dtype of a shape: a sweep's dtype axis is
// outermost, so a shape comes back once per dtype. Given the problems in run
// order, it keeps a shape's originals while a later position still uses it and at most
// `max_kept_bytes` in all (beyond that a shape is generated again when it comes back).
class originals_store {
 public:
  originals_store(const std::vector<problem>& in_order, std::int64_t max_kept_bytes, std::uint64_t seed = 1234);
  // The sweep is at position `index`: shapes used by no position from here on are freed.
  void at(std::size_t index);
  // The originals of p's shape (p itself recorded in them): the kept copy, moved out at
  // its last use, or generated (and kept when a later position needs it and it fits).
  host_inputs originals(const problem& p);
  int generated() const { return generated_; }  // shapes generated so far (tests)
  std::int64_t kept_bytes() const { return kept_bytes_; }

 private:
  using shape_key = std::array<std::int64_t, 6>;
  static shape_key key_of(const problem& p);
  std::map<shape_key, std::vector<std::size_t>> uses_;  // positions, ascending
  std::map<shape_key, host_inputs> kept_;
  std::int64_t max_kept_bytes_ = 0, kept_bytes_ = 0;
  std::uint64_t seed_;
  std::size_t position_ = 0;
  int generated_ = 0;
};

// Per-tensor e4m3 quantisation in place: s = e4m3_scale_for(x) (amax / 448),
// x = e4m3_round(x / s) * s, so that e4m3_from_float(x / s) recovers each
// code exactly; returns s.
float quantize_e4m3(std::span<float> x);
// Values code x scale of raw e4m3 codes; input_error naming `what` and the
// element at the first NaN code (0x7F, 0xFF): codes carry no NaN input.
std::vector<float> dequantize_e4m3(std::span<const std::uint8_t> codes, float scale, std::string_view what);

// Query rows to validate, as flat indices (b * H + h) * Nq + i: all rows when
// there are at most max_rows, else max_rows rows spread over every (b, h)
// that always include the first and last row of each sampled head and every
// row i < global (those see every key).
std::vector<std::int64_t> sample_rows(const problem& p, std::int64_t max_rows, std::uint64_t seed = 7);
std::vector<std::int64_t> all_rows(const problem& p);

}  // namespace attnbench

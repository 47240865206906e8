// The attention problem: shapes, dtype, mask and tile sizes of one run.
//
// Layouts (row-major, contiguous): Q and O are [B, H, Nq, d]; K and V are
// [B, Hkv, Nkv, d]. Query head h reads KV head h / (H / Hkv).
// Masks align queries to the END of the keys (bottom-right, FlashAttention
// >= 2.1): query i sits at key position i' = i + Nkv - Nq. See docs/masks.md.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "core/errors.hpp"

// Marks small helpers usable from both host and CUDA device code.
#if defined(__CUDACC__)
#define ATTN_HD __host__ __device__
#else
#define ATTN_HD
#endif

namespace attnbench {

// e4m3: OCP FP8 E4M3 inputs (Q, K, V) with a per-tensor scale each
// (core/fp8.hpp, host_inputs::scales); O is written in bf16
// (output_dtype), the log-sum-exp in fp32 as for every dtype.
enum class dtype { fp32, fp16, bf16, e4m3 };
enum class feature_map : std::uint8_t { elu1 };  // linear attention: phi(x) = elu(x) + 1

std::string_view to_string(dtype t);
dtype parse_dtype(std::string_view s);
int dtype_bytes(dtype t);                                                                     // of Q, K, V
ATTN_HD constexpr dtype output_dtype(dtype t) { return t == dtype::e4m3 ? dtype::bf16 : t; }  // of O
int output_bytes(dtype t);  // dtype_bytes(output_dtype(t))

enum class mask_kind { none, causal, local };

// Which pass a run times (docs/backward.md): the forward (O, lse), the backward
// (dQ, dK, dV from Q, K, V, dO and the forward's O and lse) or both back to back.
enum class pass_kind : std::uint8_t { fwd, bwd, fwd_bwd };
std::string_view to_string(pass_kind p);
pass_kind parse_pass(std::string_view s);  // throws input_error

// The largest r of random:b,r (a fixed array on the device holds one query
// block's picks) and of the strided stride/band (docs/masks.md).
inline constexpr std::int64_t max_random_blocks = 16;

// The sparse terms of a mask (docs/masks.md), united with the window and the
// global terms; with kind causal they are intersected with j <= i' (and the
// window term is empty). Interned (one copy per distinct value for the
// process's life, core/problem.cpp), so mask_spec holds one pointer: the
// problem every kernel receives grows by 8 bytes only (80 more bytes cost
// linear_output_kernel 12 bytes of spills on sm_80). A CUDA runner passes a
// device copy (with `layout` pointing at device bits).
struct sparse_terms {
  // strided:L,S (Sparse Transformer, Child et al. 2019, "strided"): keys
  // i' - L <= j <= i' and keys j <= i' with (i' - j) mod S == 0. S == 0: off.
  std::int64_t stride = 0, stride_band = 0;
  // random:b,r[,seed] (BigBird): r distinct key blocks of b keys per query
  // block i / b, drawn from the seed. b == 0: off.
  std::int64_t random_block = 0, random_count = 0;
  std::uint64_t random_seed = 0;
  // layout:b:PATH: b x b blocks (query block i / b, key block j / b) visible
  // where the 0/1 array is 1; shape (rows, cols) or (heads, rows, cols).
  // layout_id indexes the process's loaded layouts (core/block_layout.hpp).
  std::int64_t layout_block = 0;
  std::int32_t layout_id = -1;
  std::int64_t layout_heads = 0, layout_rows = 0, layout_cols = 0;
  const std::uint8_t* layout = nullptr;
  bool operator==(const sparse_terms&) const = default;
};

struct mask_spec {
  mask_kind kind = mask_kind::none;
  std::int64_t left = 0;                 // local: keys j >= i' - left are visible
  std::int64_t right = 0;                // local: keys j <= i' + right are visible
  std::int64_t global = 0;               // keys j < global see every query; queries i < global see every key
  const sparse_terms* sparse = nullptr;  // strided / random / layout terms; nullptr: none

  ATTN_HD bool has_strided() const { return sparse && sparse->stride > 0; }
  ATTN_HD bool has_random() const { return sparse && sparse->random_block > 0; }
  ATTN_HD bool has_layout() const { return sparse && sparse->layout_block > 0; }
  ATTN_HD bool has_sparse() const { return sparse != nullptr; }
  ATTN_HD bool per_head() const { return has_layout() && sparse->layout_heads > 1; }
  ATTN_HD bool is_none() const { return kind == mask_kind::none && global == 0 && !has_sparse(); }
  bool operator==(const mask_spec&) const = default;  // interned: equal terms, equal pointer
};

// The interned copy of t (parse_mask's; tests).
const sparse_terms* intern_sparse_terms(const sparse_terms& t);

// "none", "causal", "local:L,R", each optionally followed by "+global:G";
// "global:G" alone means none+global:G. Sparse terms follow with '+':
// "strided:L,S", "random:b,r[,seed]", "layout:b:PATH" (last: the path is the
// rest of the string); with sparse terms the base is causal, local:L,R or
// omitted (none is refused: it would mean every key). Throws input_error.
mask_spec parse_mask(std::string_view s);
// Canonical text, the inverse of parse_mask (used in benchmark names).
std::string to_string(const mask_spec& m);

// Br = Bc of a problem that names none (the --block axis's default).
inline constexpr std::int64_t default_tile = 64;

struct problem {
  std::int64_t B = 1, H = 1, Hkv = 1, Nq = 1, Nkv = 1, d = 64;
  dtype type = dtype::fp32;
  mask_spec mask;
  std::int64_t Br = default_tile, Bc = default_tile;
  feature_map phi = feature_map::elu1;
  pass_kind pass = pass_kind::fwd;
  // Scan rows only (docs/alternatives.md): the state size N per channel (Mamba's d_state) and
  // the groups G of channels sharing B and C (Mamba's ngroups); attention rows ignore both.
  // phi and pass are one byte and these 16-bit, so all four fill the padding after phi: the
  // problem every CUDA kernel receives by value stays 120 bytes (asserted below).
  std::int16_t dstate = 16, ngroups = 1;

  ATTN_HD std::int64_t group() const { return H / Hkv; }  // query heads per KV head
  ATTN_HD std::int64_t kv_head(std::int64_t h) const { return h / group(); }
  ATTN_HD std::int64_t q_elems() const { return B * H * Nq * d; }
  ATTN_HD std::int64_t kv_elems() const { return B * Hkv * Nkv * d; }
  ATTN_HD std::int64_t o_elems() const { return q_elems(); }
  ATTN_HD std::int64_t rows() const { return B * H * Nq; }  // query rows (also log-sum-exp entries)
  bool operator==(const problem&) const = default;
};
static_assert(sizeof(void*) != 8 || sizeof(problem) == 120, "problem grew: every CUDA kernel receives it");

// The largest accepted sizes (docs/cli.md). They keep every size, count and
// byte computation of the models and kernels inside 64-bit integers: with
// them, B*H*Nq*Nkv*16 and a mask bound plus a position cannot overflow.
inline constexpr std::int64_t max_batch = std::int64_t{1} << 20;
inline constexpr std::int64_t max_heads = std::int64_t{1} << 16;
inline constexpr std::int64_t max_seq = std::int64_t{1} << 24;          // Nq and Nkv
inline constexpr std::int64_t max_mask_param = std::int64_t{1} << 40;   // L, R, G
inline constexpr std::int64_t max_score_elems = std::int64_t{1} << 52;  // B*H*Nq*Nkv
inline constexpr std::int64_t max_dstate = 256;  // N of the scan rows: mamba_ssm's kernel limit (docs/alternatives.md)
inline constexpr std::int64_t max_ngroups = 4096;  // G of the scan rows

// Throws input_error naming the first bad value (non-positive or too large
// sizes, H % Hkv, d or tile sizes out of range, mask parameters out of range,
// a block layout whose shape does not match Nq, Nkv, b and H).
void validate(const problem& p);

// "<variant>/<backend>/<dtype>/B:1/H:8/Hkv:2/Nq:1024/Nkv:1024/d:64/mask:causal/Br:64/Bc:64",
// then "/pass:bwd" or "/pass:fwd_bwd" (forward names carry no suffix, as before the axis).
std::string benchmark_name(std::string_view variant, std::string_view backend, const problem& p);

// Builds and validates a problem (tests, tools); throws input_error.
problem make_problem(std::int64_t B, std::int64_t H, std::int64_t Hkv, std::int64_t Nq, std::int64_t Nkv,
                     std::int64_t d, dtype t, std::string_view mask, std::int64_t Br = default_tile,
                     std::int64_t Bc = default_tile);

// Parses a positive integer for option/axis `what`; throws input_error.
std::int64_t parse_positive(std::string_view s, std::string_view what);

}  // namespace attnbench

#include "core/problem.hpp"

#include <charconv>
#include <fmt/format.h>

namespace attnbench {

std::string_view to_string(dtype t) {
  switch (t) {
    case dtype::fp32: return "fp32";
    case dtype::fp16: return "fp16";
    case dtype::bf16: return "bf16";
  }
  return "?";
}

dtype parse_dtype(std::string_view s) {
  if (s == "fp32") return dtype::fp32;
  if (s == "fp16") return dtype::fp16;
  if (s == "bf16") return dtype::bf16;
  throw input_error(fmt::format("unknown dtype '{}' (expected fp32, fp16 or bf16)", s));
}

int dtype_bytes(dtype t) { return t == dtype::fp32 ? 4 : 2; }

static std::int64_t parse_int(std::string_view s, std::string_view what, std::string_view whole) {
  std::int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size())
    throw input_error(fmt::format("bad {} '{}' in '{}'", what, s, whole));
  return v;
}

std::int64_t parse_positive(std::string_view s, std::string_view what) {
  const std::int64_t v = parse_int(s, what, s);
  if (v <= 0) throw input_error(fmt::format("{} must be positive, got '{}'", what, s));
  return v;
}

// Any L, R or G >= Nq + Nkv has the effect of an unbounded one; the bound keeps
// window arithmetic (i + Nkv - Nq + R + 1) far from int64 overflow.
static void check_mask_param(std::int64_t v, std::string_view what, std::string_view whole) {
  if (v > max_mask_param)
    throw input_error(fmt::format("bad mask '{}': {} {} exceeds the largest accepted {} (any value "
                                  ">= Nq + Nkv has the same effect)",
                                  whole, what, v, max_mask_param));
}

mask_spec parse_mask(std::string_view s) {
  mask_spec m;
  std::string_view base = s, glob;
  if (auto plus = s.find('+'); plus != std::string_view::npos) {
    base = s.substr(0, plus);
    glob = s.substr(plus + 1);
  } else if (s.starts_with("global:")) {
    base = "none";
    glob = s;
  }
  if (base == "none") {
    m.kind = mask_kind::none;
  } else if (base == "causal") {
    m.kind = mask_kind::causal;
  } else if (base.starts_with("local:")) {
    const std::string_view lr = base.substr(6);
    const auto comma = lr.find(',');
    if (comma == std::string_view::npos)
      throw input_error(fmt::format("bad mask '{}' (expected local:L,R)", s));
    m.kind = mask_kind::local;
    m.left = parse_int(lr.substr(0, comma), "local window L", s);
    m.right = parse_int(lr.substr(comma + 1), "local window R", s);
    if (m.left < 0 || m.right < 0)
      throw input_error(fmt::format("bad mask '{}': window sizes must be >= 0", s));
    check_mask_param(m.left, "local window L", s);
    check_mask_param(m.right, "local window R", s);
  } else {
    throw input_error(fmt::format(
        "unknown mask '{}' (expected none, causal, local:L,R, optionally +global:G)", s));
  }
  if (!glob.empty()) {
    if (!glob.starts_with("global:"))
      throw input_error(fmt::format("bad mask '{}' (expected ...+global:G)", s));
    m.global = parse_int(glob.substr(7), "global token count", s);
    if (m.global <= 0) throw input_error(fmt::format("bad mask '{}': global:G needs G > 0", s));
    check_mask_param(m.global, "global token count", s);
  }
  return m;
}

std::string to_string(const mask_spec& m) {
  std::string out;
  switch (m.kind) {
    case mask_kind::none: out = "none"; break;
    case mask_kind::causal: out = "causal"; break;
    case mask_kind::local: out = fmt::format("local:{},{}", m.left, m.right); break;
  }
  if (m.global > 0) out += fmt::format("+global:{}", m.global);
  return out;
}

void validate(const problem& p) {
  auto positive = [](std::int64_t v, const char* what) {
    if (v <= 0) throw input_error(fmt::format("{} must be positive, got {}", what, v));
  };
  positive(p.B, "B (batch)");
  positive(p.H, "H (query heads)");
  positive(p.Hkv, "Hkv (KV heads)");
  positive(p.Nq, "Nq (query length)");
  positive(p.Nkv, "Nkv (key length)");
  positive(p.d, "d (head dim)");
  positive(p.Br, "Br (query tile)");
  positive(p.Bc, "Bc (key tile)");
  auto at_most = [](std::int64_t v, std::int64_t limit, const char* what) {
    if (v > limit)
      throw input_error(fmt::format("{} = {} exceeds the largest accepted {}", what, v, limit));
  };
  at_most(p.B, max_batch, "B (batch)");
  at_most(p.H, max_heads, "H (query heads)");
  at_most(p.Nq, max_seq, "Nq (query length)");
  at_most(p.Nkv, max_seq, "Nkv (key length)");
  // Within the limits above the product is below 2^84: exact in 128 bits.
  const __int128 scores = static_cast<__int128>(p.B) * p.H * p.Nq * p.Nkv;
  if (scores > max_score_elems)
    throw input_error(fmt::format("B*H*Nq*Nkv = {}*{}*{}*{} exceeds the largest accepted {} scores",
                                  p.B, p.H, p.Nq, p.Nkv, max_score_elems));
  if (p.H % p.Hkv != 0)
    throw input_error(fmt::format("H={} is not divisible by Hkv={}", p.H, p.Hkv));
  if (p.d > 256 || p.d % 8 != 0)
    throw input_error(fmt::format("head dim d={} out of range (multiple of 8, at most 256)", p.d));
  for (auto [v, what] : {std::pair{p.Br, "Br"}, std::pair{p.Bc, "Bc"}})
    if (v < 16 || v > 256 || (v & (v - 1)) != 0)
      throw input_error(
          fmt::format("tile size {}={} out of range (power of two from 16 to 256)", what, v));
  if (p.mask.left < 0 || p.mask.right < 0 || p.mask.global < 0)
    throw input_error(fmt::format("bad mask '{}'", to_string(p.mask)));
  for (auto [v, what] : {std::pair{p.mask.left, "local window L"}, std::pair{p.mask.right, "local window R"},
                         std::pair{p.mask.global, "global token count"}})
    check_mask_param(v, what, to_string(p.mask));
}

problem make_problem(std::int64_t B, std::int64_t H, std::int64_t Hkv, std::int64_t Nq,
                     std::int64_t Nkv, std::int64_t d, dtype t, std::string_view mask, std::int64_t Br,
                     std::int64_t Bc) {
  problem p;
  p.B = B;
  p.H = H;
  p.Hkv = Hkv;
  p.Nq = Nq;
  p.Nkv = Nkv;
  p.d = d;
  p.type = t;
  p.mask = parse_mask(mask);
  p.Br = Br;
  p.Bc = Bc;
  validate(p);
  return p;
}

std::string benchmark_name(std::string_view variant, std::string_view backend, const problem& p) {
  return fmt::format("{}/{}/{}/B:{}/H:{}/Hkv:{}/Nq:{}/Nkv:{}/d:{}/mask:{}/Br:{}/Bc:{}", variant,
                     backend, to_string(p.type), p.B, p.H, p.Hkv, p.Nq, p.Nkv, p.d,
                     to_string(p.mask), p.Br, p.Bc);
}

}  // namespace attnbench

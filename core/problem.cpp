#include "core/problem.hpp"

#include "core/block_layout.hpp"

#include <charconv>
#include <fmt/format.h>
#include <deque>
#include <mutex>
#include <vector>

namespace attnbench {

std::string_view to_string(dtype t) {
  switch (t) {
    case dtype::fp32: return "fp32";
    case dtype::fp16: return "fp16";
    case dtype::bf16: return "bf16";
    case dtype::e4m3: return "e4m3";
  }
  return "?";
}

dtype parse_dtype(std::string_view s) {
  if (s == "fp32") return dtype::fp32;
  if (s == "fp16") return dtype::fp16;
  if (s == "bf16") return dtype::bf16;
  if (s == "e4m3") return dtype::e4m3;
  throw input_error(fmt::format("unknown dtype '{}' (expected fp32, fp16, bf16 or e4m3)", s));
}

std::string_view to_string(pass_kind p) {
  switch (p) {
    case pass_kind::fwd: return "fwd";
    case pass_kind::bwd: return "bwd";
    case pass_kind::fwd_bwd: return "fwd_bwd";
  }
  return "?";
}

pass_kind parse_pass(std::string_view s) {
  if (s == "fwd") return pass_kind::fwd;
  if (s == "bwd") return pass_kind::bwd;
  if (s == "fwd_bwd") return pass_kind::fwd_bwd;
  throw input_error(fmt::format("unknown pass '{}' (expected fwd, bwd or fwd_bwd)", s));
}

int dtype_bytes(dtype t) {
  switch (t) {
    case dtype::fp32: return 4;
    case dtype::fp16:
    case dtype::bf16: return 2;
    case dtype::e4m3: return 1;
  }
  return 4;
}

int output_bytes(dtype t) { return dtype_bytes(output_dtype(t)); }

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
    throw input_error(
        fmt::format("bad mask '{}': {} {} exceeds the largest accepted {} (any value "
                    ">= Nq + Nkv has the same effect)",
                    whole, what, v, max_mask_param));
}

namespace {

std::vector<std::string_view> split_list(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (std::size_t at = 0;;) {
    const auto next = s.find(sep, at);
    out.push_back(s.substr(at, next == std::string_view::npos ? s.size() - at : next - at));
    if (next == std::string_view::npos) return out;
    at = next + 1;
  }
}

constexpr const char* mask_grammar =
    "expected [none|causal|local:L,R][+global:G][+strided:L,S][+random:b,r[,seed]][+layout:b:PATH]";

}  // namespace

const sparse_terms* intern_sparse_terms(const sparse_terms& t) {
  static std::mutex mutex;
  static std::deque<sparse_terms> table;  // deque: pointers stay valid as it grows
  std::lock_guard lock(mutex);
  for (const sparse_terms& e : table)
    if (e == t) return &e;
  table.push_back(t);
  return &table.back();
}

mask_spec parse_mask(std::string_view s) {
  mask_spec m;
  sparse_terms st;
  // Terms split at '+', except that layout:b:PATH takes the rest of the string.
  std::vector<std::string_view> terms;
  for (std::string_view rest = s;;) {
    if (rest.starts_with("layout:")) {
      terms.push_back(rest);
      break;
    }
    const auto plus = rest.find('+');
    terms.push_back(rest.substr(0, plus));
    if (plus == std::string_view::npos) break;
    rest = rest.substr(plus + 1);
  }
  bool explicit_none = false, seen_global = false;
  std::size_t first_term = 0;
  const std::string_view base = terms[0];
  if (base == "none") {
    explicit_none = true;
    first_term = 1;
  } else if (base == "causal") {
    m.kind = mask_kind::causal;
    first_term = 1;
  } else if (base.starts_with("local:")) {
    const std::string_view lr = base.substr(6);
    const auto comma = lr.find(',');
    if (comma == std::string_view::npos) throw input_error(fmt::format("bad mask '{}' (expected local:L,R)", s));
    m.kind = mask_kind::local;
    m.left = parse_int(lr.substr(0, comma), "local window L", s);
    m.right = parse_int(lr.substr(comma + 1), "local window R", s);
    if (m.left < 0 || m.right < 0) throw input_error(fmt::format("bad mask '{}': window sizes must be >= 0", s));
    check_mask_param(m.left, "local window L", s);
    check_mask_param(m.right, "local window R", s);
    first_term = 1;
  }
  for (std::size_t t = first_term; t < terms.size(); ++t) {
    const std::string_view term = terms[t];
    auto once = [&](bool seen, const char* name) {
      if (seen) throw input_error(fmt::format("bad mask '{}': term {} given twice", s, name));
    };
    if (term.starts_with("global:")) {
      once(seen_global, "global");
      seen_global = true;
      m.global = parse_int(term.substr(7), "global token count", s);
      if (m.global <= 0) throw input_error(fmt::format("bad mask '{}': global:G needs G > 0", s));
      check_mask_param(m.global, "global token count", s);
    } else if (term.starts_with("strided:")) {
      once(st.stride > 0, "strided");
      const auto v = split_list(term.substr(8), ',');
      if (v.size() != 2) throw input_error(fmt::format("bad mask term '{}' in '{}' (expected strided:L,S)", term, s));
      st.stride_band = parse_int(v[0], "strided band L", s);
      st.stride = parse_int(v[1], "strided stride S", s);
      if (st.stride_band < 0 || st.stride <= 0)
        throw input_error(fmt::format("bad mask term '{}' in '{}': strided:L,S needs L >= 0 and S > 0", term, s));
      check_mask_param(st.stride_band, "strided band L", s);
      check_mask_param(st.stride, "strided stride S", s);
    } else if (term.starts_with("random:")) {
      once(st.random_block > 0, "random");
      const auto v = split_list(term.substr(7), ',');
      if (v.size() != 2 && v.size() != 3)
        throw input_error(fmt::format("bad mask term '{}' in '{}' (expected random:b,r or random:b,r,seed)", term, s));
      st.random_block = parse_int(v[0], "random block size b", s);
      st.random_count = parse_int(v[1], "random block count r", s);
      if (st.random_block <= 0 || st.random_count <= 0 || st.random_count > max_random_blocks)
        throw input_error(fmt::format("bad mask term '{}' in '{}': random:b,r needs b > 0 and 0 < r <= {}", term, s,
                                      max_random_blocks));
      check_mask_param(st.random_block, "random block size b", s);
      if (v.size() == 3) {
        const std::int64_t seed = parse_int(v[2], "random seed", s);
        if (seed < 0) throw input_error(fmt::format("bad mask '{}': random seed must be >= 0", s));
        st.random_seed = static_cast<std::uint64_t>(seed);
      }
    } else if (term.starts_with("layout:")) {
      const std::string_view rest = term.substr(7);
      const auto colon = rest.find(':');
      if (colon == std::string_view::npos || colon + 1 == rest.size())
        throw input_error(fmt::format("bad mask term '{}' in '{}' (expected layout:b:PATH)", term, s));
      st.layout_block = parse_int(rest.substr(0, colon), "layout block size b", s);
      if (st.layout_block <= 0) throw input_error(fmt::format("bad mask '{}': layout block size b must be > 0", s));
      check_mask_param(st.layout_block, "layout block size b", s);
      st.layout_id = load_block_layout(std::string(rest.substr(colon + 1)));
      const block_layout& l = block_layout_by_id(st.layout_id);
      st.layout_heads = l.heads;
      st.layout_rows = l.rows;
      st.layout_cols = l.cols;
      st.layout = l.bits.data();
    } else if (t == 0) {
      throw input_error(fmt::format("unknown mask '{}' ({})", s, mask_grammar));
    } else {
      throw input_error(fmt::format("bad mask term '{}' in '{}' ({})", term, s, mask_grammar));
    }
  }
  if (st.stride > 0 || st.random_block > 0 || st.layout_block > 0) m.sparse = intern_sparse_terms(st);
  if (explicit_none && m.has_sparse())
    throw input_error(
        fmt::format("bad mask '{}': 'none' means every key; with strided, random or layout "
                    "terms drop it (or use causal or local:L,R)",
                    s));
  if (m.has_random() && m.has_layout() && st.random_block != st.layout_block)
    throw input_error(fmt::format("bad mask '{}': random block size {} differs from layout block size {}", s,
                                  st.random_block, st.layout_block));
  return m;
}

std::string to_string(const mask_spec& m) {
  std::string out;
  switch (m.kind) {
    case mask_kind::none: out = m.has_sparse() ? "" : "none"; break;
    case mask_kind::causal: out = "causal"; break;
    case mask_kind::local: out = fmt::format("local:{},{}", m.left, m.right); break;
  }
  auto add = [&](const std::string& term) { out += (out.empty() ? "" : "+") + term; };
  if (m.global > 0) add(fmt::format("global:{}", m.global));
  if (m.has_strided()) add(fmt::format("strided:{},{}", m.sparse->stride_band, m.sparse->stride));
  if (m.has_random())
    add(m.sparse->random_seed
            ? fmt::format("random:{},{},{}", m.sparse->random_block, m.sparse->random_count, m.sparse->random_seed)
            : fmt::format("random:{},{}", m.sparse->random_block, m.sparse->random_count));
  if (m.has_layout())
    add(fmt::format("layout:{}:{}", m.sparse->layout_block, block_layout_by_id(m.sparse->layout_id).path));
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
    if (v > limit) throw input_error(fmt::format("{} = {} exceeds the largest accepted {}", what, v, limit));
  };
  at_most(p.B, max_batch, "B (batch)");
  at_most(p.H, max_heads, "H (query heads)");
  at_most(p.Nq, max_seq, "Nq (query length)");
  at_most(p.Nkv, max_seq, "Nkv (key length)");
  // Within the limits above the product is below 2^84: exact in 128 bits.
  const __int128 scores = static_cast<__int128>(p.B) * p.H * p.Nq * p.Nkv;
  if (scores > max_score_elems)
    throw input_error(fmt::format("B*H*Nq*Nkv = {}*{}*{}*{} exceeds the largest accepted {} scores", p.B, p.H, p.Nq,
                                  p.Nkv, max_score_elems));
  if (p.H % p.Hkv != 0) throw input_error(fmt::format("H={} is not divisible by Hkv={}", p.H, p.Hkv));
  if (p.dstate < 1 || p.dstate > max_dstate)
    throw input_error(fmt::format("state size N={} out of range (1 to {})", p.dstate, max_dstate));
  if (p.ngroups < 1 || p.ngroups > max_ngroups)
    throw input_error(fmt::format("groups G={} out of range (1 to {})", p.ngroups, max_ngroups));
  if (p.d > 256 || p.d % 8 != 0)
    throw input_error(fmt::format("head dim d={} out of range (multiple of 8, at most 256)", p.d));
  for (auto [v, what] : {std::pair{p.Br, "Br"}, std::pair{p.Bc, "Bc"}})
    if (v < 16 || v > 256 || (v & (v - 1)) != 0)
      throw input_error(fmt::format("tile size {}={} out of range (power of two from 16 to 256)", what, v));
  if (p.mask.left < 0 || p.mask.right < 0 || p.mask.global < 0)
    throw input_error(fmt::format("bad mask '{}'", to_string(p.mask)));
  for (auto [v, what] : {std::pair{p.mask.left, "local window L"}, std::pair{p.mask.right, "local window R"},
                         std::pair{p.mask.global, "global token count"}})
    check_mask_param(v, what, to_string(p.mask));
  const mask_spec& m = p.mask;
  if (m.has_layout()) {
    const std::int64_t b = m.sparse->layout_block, rows = (p.Nq + b - 1) / b, cols = (p.Nkv + b - 1) / b;
    const std::string path = block_layout_by_id(m.sparse->layout_id).path;
    if (m.sparse->layout_rows != rows || m.sparse->layout_cols != cols)
      throw input_error(
          fmt::format("layout file '{}' has {} x {} blocks; b={} with Nq={}, Nkv={} needs (ceil(Nq/b), ceil(Nkv/b)) = "
                      "({}, {})",
                      path, m.sparse->layout_rows, m.sparse->layout_cols, b, p.Nq, p.Nkv, rows, cols));
    if (m.sparse->layout_heads != 1 && m.sparse->layout_heads != p.H)
      throw input_error(
          fmt::format("layout file '{}' has {} heads; H={} needs 1 or {}", path, m.sparse->layout_heads, p.H, p.H));
  }
}

problem make_problem(std::int64_t B, std::int64_t H, std::int64_t Hkv, std::int64_t Nq, std::int64_t Nkv,
                     std::int64_t d, dtype t, std::string_view mask, std::int64_t Br, std::int64_t Bc) {
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
  return fmt::format("{}/{}/{}/B:{}/H:{}/Hkv:{}/Nq:{}/Nkv:{}/d:{}/mask:{}/Br:{}/Bc:{}", variant, backend,
                     to_string(p.type), p.B, p.H, p.Hkv, p.Nq, p.Nkv, p.d, to_string(p.mask), p.Br, p.Bc) +
         (p.pass == pass_kind::fwd ? std::string() : fmt::format("/pass:{}", to_string(p.pass)));
}

}  // namespace attnbench

// The axis table. Its order is the expansion order (dtype outermost, variant
// innermost) and the order of a group's keys in to_json.
#include "harness/sweep_axes.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <memory>
#include <optional>
#include <tuple>

#include "harness/run_defaults.hpp"
#include "harness/typed_axis.hpp"
#include "harness/variant_select.hpp"

namespace attnbench {

namespace {

using ojson = nlohmann::ordered_json;
using i64 = std::int64_t;

constexpr i64 default_seq = 1024;

i64 positive(std::string_view s, std::string_view axis) { return parse_positive(s, axis); }
ojson number(const i64& v) { return v; }

// Lengths: seq pairs Nq = Nkv; once nq or nkv is given they make a product and
// seq only supplies the missing side, so the axis that does not iterate keeps
// the point as it is.
std::vector<i64> seq_or_default(const sweep_axes& a) { return a.seq.empty() ? std::vector<i64>{default_seq} : a.seq; }
bool lengths_paired(const sweep_axes& a) { return a.nq.empty() && a.nkv.empty(); }
std::vector<point_setter> unchanged() {
  return {[](sweep_point&) {}};
}

// `cpu:NAME` / `cuda:NAME`: the row NAME of that backend, nothing on the
// other. A CPU run does not load the CUDA rows, so the name is checked only on
// its own backend: a preset can name a CUDA row (the fp8 groups' flash3_fp8)
// and still expand on the CPU.
struct backend_item {
  backend_kind backend;
  std::string name;
};
std::optional<backend_item> backend_qualified(std::string_view item) {
  for (backend_kind b : {backend_kind::cpu, backend_kind::cuda}) {
    const std::string prefix = std::string(to_string(b)) + ":";
    if (item.starts_with(prefix)) return backend_item{b, std::string(item.substr(prefix.size()))};
  }
  return std::nullopt;
}

std::string parse_variant_axis_item(std::string_view s) {
  if (const auto q = backend_qualified(s); q && q->name.empty())
    throw input_error(fmt::format("variant '{}' names no row after the backend", s));
  return parse_variant_item(s);
}

template <class T>
std::unique_ptr<sweep_axis> axis(axis_decl<T> d) {
  return std::make_unique<typed_axis<T>>(std::move(d));
}

std::vector<std::unique_ptr<sweep_axis>> make_table() {
  std::vector<std::unique_ptr<sweep_axis>> t;
  t.push_back(axis<dtype>({
      .name = "dtype",
      .help = "fp32|fp16|bf16|e4m3",
      .field = &sweep_axes::type,
      .parse = [](std::string_view s, std::string_view) { return parse_dtype(s); },
      .print = [](const dtype& v) { return ojson(std::string(to_string(v))); },
      .backend_defaults = [](backend_kind b) { return defaults_for(b).dtypes; },
      .apply = [](sweep_point& p, const dtype& v) { p.type = v; },
  }));
  t.push_back(axis<i64>({
      .name = "batch",
      .help = "B",
      .field = &sweep_axes::batch,
      .parse = positive,
      .print = number,
      .defaults = {1},
      .apply = [](sweep_point& p, const i64& v) { p.B = v; },
  }));
  t.push_back(axis<i64>({
      .name = "heads",
      .help = "H",
      .field = &sweep_axes::heads,
      .parse = positive,
      .print = number,
      .defaults = {8},
      .apply = [](sweep_point& p, const i64& v) { p.H = v; },
  }));
  t.push_back(axis<kv_heads_value>({
      .name = "kv-heads",
      .help = "N|H|H/k",
      .field = &sweep_axes::kv_heads,
      .parse = [](std::string_view s, std::string_view) { return parse_kv_heads(s); },
      .print = [](const kv_heads_value& v) { return v.value > 0 ? ojson(v.value) : ojson(v.text()); },
      .defaults = {{0, 1}},
      .apply = [](sweep_point& p, const kv_heads_value& v) { p.kv = v; },
  }));
  t.push_back(axis<i64>({
      .name = "head-dim",
      .help = "d",
      .field = &sweep_axes::head_dim,
      .parse = positive,
      .print = number,
      .defaults = {64},
      .apply = [](sweep_point& p, const i64& v) { p.d = v; },
  }));
  t.push_back(axis<i64>({
      .name = "seq",
      .help = "N (Nq = Nkv)",
      .field = &sweep_axes::seq,
      .parse = positive,
      .print = number,
      .points =
          [](const sweep_axes& a, const expand_context&) {
            if (!lengths_paired(a)) return unchanged();
            return each_value(seq_or_default(a), [](sweep_point& p, i64 n) { p.Nq = p.Nkv = n; });
          },
      .clears = {"nq", "nkv"},
  }));
  t.push_back(axis<i64>({
      .name = "nq",
      .help = "Nq",
      .field = &sweep_axes::nq,
      .parse = positive,
      .print = number,
      .points =
          [](const sweep_axes& a, const expand_context&) {
            if (lengths_paired(a)) return unchanged();
            return each_value(a.nq.empty() ? seq_or_default(a) : a.nq, [](sweep_point& p, i64 n) { p.Nq = n; });
          },
  }));
  t.push_back(axis<i64>({
      .name = "nkv",
      .help = "Nkv",
      .field = &sweep_axes::nkv,
      .parse = positive,
      .print = number,
      .points =
          [](const sweep_axes& a, const expand_context&) {
            if (lengths_paired(a)) return unchanged();
            return each_value(a.nkv.empty() ? seq_or_default(a) : a.nkv, [](sweep_point& p, i64 n) { p.Nkv = n; });
          },
  }));
  t.push_back(axis<mask_spec>({
      .name = "mask",
      .help = "none|causal|local:L,R[+global:G]",
      .field = &sweep_axes::mask,
      .parse = [](std::string_view s, std::string_view) { return parse_mask(s); },
      .print = [](const mask_spec& v) { return ojson(to_string(v)); },
      .defaults = {mask_spec{}},
      .apply = [](sweep_point& p, const mask_spec& v) { p.mask = v; },
      .split = split_mask_list,
  }));
  t.push_back(axis<tile_shape>({
      .name = "block",
      .help = "BrxBc",
      .field = &sweep_axes::block,
      .parse = [](std::string_view s, std::string_view) { return parse_block(s); },
      .print = [](const tile_shape& v) { return ojson(v.text()); },
      .defaults = {tile_shape{}},
      .apply = [](sweep_point& p, const tile_shape& v) { p.block = v; },
  }));
  // The scan rows' shape (docs/alternatives.md): state size N and groups G sharing B and C.
  // Their chunk length is the block axis's Bc, as linear attention's chunk is; attention rows
  // ignore both axes (their names do not carry them, so a sweep over N runs them once).
  t.push_back(axis<i64>({
      .name = "state",
      .help = "N (scan state size)",
      .field = &sweep_axes::state,
      .parse = positive,
      .print = number,
      .defaults = {16},
      .apply = [](sweep_point& p, const i64& v) { p.dstate = v; },
  }));
  t.push_back(axis<i64>({
      .name = "groups",
      .help = "G (scan groups)",
      .field = &sweep_axes::groups,
      .parse = positive,
      .print = number,
      .defaults = {1},
      .apply = [](sweep_point& p, const i64& v) { p.ngroups = v; },
  }));
  // Inside the problem axes, so a problem's fwd, bwd and fwd_bwd runs are adjacent and
  // share its inputs and references (validation.hpp).
  t.push_back(axis<pass_kind>({
      .name = "pass",
      .help = "fwd|bwd|fwd_bwd",
      .field = &sweep_axes::pass,
      .parse = [](std::string_view s, std::string_view) { return parse_pass(s); },
      .print = [](const pass_kind& v) { return ojson(std::string(to_string(v))); },
      .defaults = {pass_kind::fwd},
      .apply = [](sweep_point& p, const pass_kind& v) { p.pass = v; },
  }));
  t.push_back(axis<std::string>({
      .name = "variant",
      .help = "NAME|tag:TAG|cpu:NAME|cuda:NAME",
      .field = &sweep_axes::variant,
      .parse = [](std::string_view s, std::string_view) { return parse_variant_axis_item(s); },
      .print = [](const std::string& v) { return ojson(v); },
      .points =
          [](const sweep_axes& a, const expand_context& c) {
            std::vector<std::string> items;
            for (const std::string& item : a.variant) {
              const auto q = backend_qualified(item);
              if (!q || q->backend == c.backend) items.push_back(q ? q->name : item);
            }
            std::vector<point_setter> out;
            if (items.empty() && !a.variant.empty()) return out;  // only the other backend's rows
            for (const variant* r : select_variants(items, c.rows, c.backend))
              out.push_back([r](sweep_point& p) { p.row = r; });
            return out;
          },
  }));
  return t;
}

}  // namespace

const std::vector<const sweep_axis*>& sweep_axis_table() {
  static const std::vector<std::unique_ptr<sweep_axis>> owned = make_table();
  static const std::vector<const sweep_axis*> table = [] {
    std::vector<const sweep_axis*> v;
    for (const auto& a : owned) v.push_back(a.get());
    return v;
  }();
  return table;
}

const sweep_axis* find_axis(std::string_view name) {
  for (const sweep_axis* a : sweep_axis_table())
    if (a->name() == name) return a;
  return nullptr;
}

const sweep_axis* find_axis_by_flag(std::string_view flag) {
  for (const sweep_axis* a : sweep_axis_table())
    if (a->flag() == flag) return a;
  return nullptr;
}

bool sweep_axes::empty() const {
  return std::ranges::all_of(sweep_axis_table(), [&](const sweep_axis* a) { return a->size(*this) == 0; });
}

problem point_problem(const sweep_point& p) {
  problem out =
      make_problem(p.B, p.H, p.kv.resolve(p.H), p.Nq, p.Nkv, p.d, p.type, to_string(p.mask), p.block.br, p.block.bc);
  // Range-checked before narrowing to the problem's 16-bit fields.
  for (auto [v, what, limit] : {std::tuple{p.dstate, "state size N", max_dstate}, {p.ngroups, "groups G", max_ngroups}})
    if (v > limit) throw input_error(fmt::format("{}={} out of range (1 to {})", what, v, limit));
  out.dstate = static_cast<std::int16_t>(p.dstate);
  out.ngroups = static_cast<std::int16_t>(p.ngroups);
  out.pass = p.pass;
  return out;
}

}  // namespace attnbench

// The sweep axes as one table (nvbench style): each axis object knows its name
// (sweep files, JSON), its CLI flag, how to parse an item, how to print a
// value, its default and what it sets in an expansion point. The CLI, sweep
// files, to_json, overrides and expand all walk the table; adding an axis is
// a field in sweep_axes and in sweep_point, an entry in sweep_axes.cpp and,
// when it reaches the problem, a word in point_problem.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/variant.hpp"
#include "harness/axis_values.hpp"

namespace attnbench {

// A group's axes; empty means "use the default". seq sets Nq = Nkv (paired);
// nq / nkv, when either is given, make a product (the missing side from seq).
struct sweep_axes {
  std::vector<std::string> variant;  // names and tag:<tag> (variant_select.hpp)
  std::vector<std::int64_t> seq, nq, nkv, batch, heads, head_dim;
  std::vector<kv_heads_value> kv_heads;
  std::vector<tile_shape> block;
  std::vector<mask_spec> mask;
  std::vector<dtype> type;
  std::vector<std::int64_t> state, groups;  // the scan rows' N and G (docs/alternatives.md)
  std::vector<pass_kind> pass;              // fwd | bwd | fwd_bwd (docs/backward.md)
  bool empty() const;
  bool operator==(const sweep_axes&) const = default;
};

// What the axes set at one point of the expansion; make_problem builds the
// problem from it (point_problem).
struct sweep_point {
  dtype type = dtype::fp32;
  std::int64_t B = 0, H = 0, Nq = 0, Nkv = 0, d = 0;
  kv_heads_value kv;
  mask_spec mask;
  tile_shape block;
  pass_kind pass = pass_kind::fwd;
  const variant* row = nullptr;
  std::int64_t dstate = 16, ngroups = 1;
};
problem point_problem(const sweep_point& p);  // throws input_error

// What expansion knows besides the axes.
struct expand_context {
  const std::vector<variant>& rows;
  backend_kind backend;
};

using point_setter = std::function<void(sweep_point&)>;

class sweep_axis {
 public:
  virtual ~sweep_axis() = default;
  virtual std::string_view name() const = 0;  // "head-dim"
  std::string flag() const { return "--" + std::string(name()); }
  virtual std::string_view help() const = 0;                // the form of an item, for the usage text
  virtual std::size_t size(const sweep_axes& a) const = 0;  // 0: not given
  // A CLI comma list into items.
  virtual std::vector<std::string> split(std::string_view list) const = 0;
  // Parses the items (input_error names a bad one) and replaces the axis in `a`.
  virtual void set(sweep_axes& a, const std::vector<std::string>& items) const = 0;
  virtual nlohmann::ordered_json to_json(const sweep_axes& a) const = 0;  // an array
  virtual void copy(sweep_axes& to, const sweep_axes& from) const = 0;
  virtual void clear(sweep_axes& a) const = 0;
  // Axes that an override of this one clears (--seq clears nq and nkv).
  virtual std::vector<std::string_view> clears() const = 0;
  // One setter per value this axis iterates in a group (defaults included).
  virtual std::vector<point_setter> points(const sweep_axes& a, const expand_context& c) const = 0;
};

// In expansion order, outermost first; variant is the innermost axis.
const std::vector<const sweep_axis*>& sweep_axis_table();
const sweep_axis* find_axis(std::string_view name);  // nullptr when there is none
const sweep_axis* find_axis_by_flag(std::string_view flag);

}  // namespace attnbench

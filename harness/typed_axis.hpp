// The sweep_axis for values of one type T, built from a declaration: the
// field of sweep_axes it fills, parse / print, the default and what a value
// sets in the point. `points` replaces the rule "each value (else each
// default) applied in turn" for axes whose expansion depends on others.
#pragma once

#include <utility>

#include "harness/sweep_axes.hpp"

namespace attnbench {

template <class T>
struct axis_decl {
  std::string_view name, help;
  std::vector<T> sweep_axes::*field = nullptr;
  T (*parse)(std::string_view item, std::string_view axis) = nullptr;
  nlohmann::ordered_json (*print)(const T& value) = nullptr;
  std::vector<T> defaults = {};
  std::vector<T> (*backend_defaults)(backend_kind) = nullptr;  // instead of `defaults`
  void (*apply)(sweep_point& p, const T& value) = nullptr;
  std::vector<point_setter> (*points)(const sweep_axes&, const expand_context&) = nullptr;
  std::vector<std::string> (*split)(std::string_view list, std::string_view axis) = split_list;
  std::vector<std::string_view> clears = {};
};

template <class T, class F>
std::vector<point_setter> each_value(const std::vector<T>& values, F apply) {
  std::vector<point_setter> out;
  for (const T& v : values) out.push_back([apply, v](sweep_point& p) { apply(p, v); });
  return out;
}

template <class T>
class typed_axis final : public sweep_axis {
 public:
  explicit typed_axis(axis_decl<T> d) : d_(std::move(d)) {}
  std::string_view name() const override { return d_.name; }
  std::string_view help() const override { return d_.help; }
  std::size_t size(const sweep_axes& a) const override { return (a.*d_.field).size(); }
  std::vector<std::string> split(std::string_view list) const override { return d_.split(list, d_.name); }
  void set(sweep_axes& a, const std::vector<std::string>& items) const override {
    std::vector<T> v;
    for (const auto& s : items) v.push_back(d_.parse(s, d_.name));
    a.*d_.field = std::move(v);
  }
  nlohmann::ordered_json to_json(const sweep_axes& a) const override {
    auto out = nlohmann::ordered_json::array();
    for (const T& v : a.*d_.field) out.push_back(d_.print(v));
    return out;
  }
  void copy(sweep_axes& to, const sweep_axes& from) const override { to.*d_.field = from.*d_.field; }
  void clear(sweep_axes& a) const override { (a.*d_.field).clear(); }
  std::vector<std::string_view> clears() const override { return d_.clears; }
  std::vector<point_setter> points(const sweep_axes& a, const expand_context& c) const override {
    if (d_.points) return d_.points(a, c);
    const auto& given = a.*d_.field;
    if (!given.empty()) return each_value(given, d_.apply);
    return each_value(d_.backend_defaults ? d_.backend_defaults(c.backend) : d_.defaults, d_.apply);
  }

 private:
  axis_decl<T> d_;
};

}  // namespace attnbench

#include "harness/cli/args.hpp"

#include <cmath>
#include <cstdlib>
#include <fmt/format.h>

namespace attnbench {

backend_choice parse_backend_choice(std::string_view s) {
  if (s == "auto") return backend_choice::auto_;
  if (s == "cpu") return backend_choice::cpu;
  if (s == "cuda") return backend_choice::cuda;
  throw input_error(fmt::format("unknown backend '{}' (expected auto, cpu or cuda)", s));
}

namespace cli {

arg_walker::arg_walker(const std::vector<std::string>& args, std::string command)
    : args_(args), command_(std::move(command)) {}

bool arg_walker::next() {
  if (i_ >= args_.size()) return false;
  const std::string& a = args_[i_++];
  value_.reset();
  if (!a.starts_with("--")) {
    name_.clear();
    positional_ = a;
    return true;
  }
  positional_.clear();
  const auto eq = a.find('=');
  name_ = a.substr(0, eq);
  if (eq != std::string::npos) value_ = a.substr(eq + 1);
  // Given twice, the second value would silently replace the first (`--seq 512 ... --seq 4096`).
  if (!seen_.insert(name_).second)
    throw input_error(fmt::format("option '{}' is given twice for 'attnbench {}'", name_, command_));
  return true;
}

std::string arg_walker::value() {
  if (!value_) {
    if (i_ >= args_.size() || (args_[i_].starts_with("--") && args_[i_].size() > 2))
      throw input_error(fmt::format("option '{}' needs a value", name_));
    value_ = args_[i_++];
  }
  if (value_->empty()) throw input_error(fmt::format("option '{}' has an empty value", name_));
  return *value_;
}

void arg_walker::no_value() const {
  if (value_) throw input_error(fmt::format("option '{}' takes no value", name_));
}

void arg_walker::unknown() const {
  if (name_.empty())
    throw input_error(fmt::format("unexpected argument '{}' for 'attnbench {}'", positional_, command_));
  throw input_error(fmt::format("unknown option '{}' for 'attnbench {}'", name_, command_));
}

int parse_count(const std::string& s, const char* what) {
  const auto v = parse_positive(s, what);
  if (v > 1000000) throw input_error(fmt::format("{} '{}' is too large", what, s));
  return static_cast<int>(v);
}

double parse_seconds(const std::string& s, const char* what) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || !(v > 0) || !std::isfinite(v))
    throw input_error(fmt::format("bad {} '{}' (expected a positive number of seconds)", what, s));
  return v;
}

input_scales parse_scales(const std::string& s) {
  std::vector<std::string> parts;
  for (std::size_t at = 0;;) {
    const auto comma = s.find(',', at);
    parts.push_back(s.substr(at, comma - at));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  if (parts.size() != 3)
    throw input_error(fmt::format("--scales '{}': expected three scales q,k,v, got {}", s, parts.size()));
  float out[3];
  const char* names[] = {"q", "k", "v"};
  for (int i = 0; i < 3; ++i) {
    const std::string& t = parts[i];
    char* end = nullptr;
    const double v = t.empty() ? NAN : std::strtod(t.c_str(), &end);
    out[i] = static_cast<float>(v);  // the kernel's scales are float32: 1e-50 or 1e39 do not survive
    if (t.empty() || *end != '\0' || !(out[i] > 0) || !std::isfinite(out[i]))
      throw input_error(fmt::format("--scales: {} scale '{}' is not a positive finite float32 number", names[i], t));
  }
  return {out[0], out[1], out[2]};
}

backend_choice parse_only_backend(const std::vector<std::string>& args, const char* command) {
  backend_choice b = backend_choice::auto_;
  arg_walker w(args, command);
  while (w.next()) {
    if (w.name() == "--backend")
      b = parse_backend_choice(w.value());
    else
      w.unknown();
  }
  return b;
}

}  // namespace cli
}  // namespace attnbench

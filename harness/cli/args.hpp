// What every command's parser shares: the argument walker and the parsers of
// counts, durations and e4m3 scales; `attnbench run`'s options.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/cli.hpp"

namespace attnbench::cli {

// Walks "--name value" / "--name=value" / "--flag" / positional arguments. An option given
// twice or with an empty value is an input_error naming it.
class arg_walker {
 public:
  arg_walker(const std::vector<std::string>& args, std::string command);
  bool next();
  const std::string& name() const { return name_; }  // empty for a positional argument
  const std::string& positional() const { return positional_; }
  const std::string& raw() const { return args_[i_ - 1]; }
  std::string value();    // the option's value; throws when it has none
  void no_value() const;  // throws when a flag was given a value
  [[noreturn]] void unknown() const;

 private:
  const std::vector<std::string>& args_;
  std::string command_;
  std::size_t i_ = 0;
  std::string name_, positional_;
  std::optional<std::string> value_;
  std::set<std::string> seen_;
};

int parse_count(const std::string& s, const char* what);       // 1 .. 1e6
double parse_seconds(const std::string& s, const char* what);  // > 0, finite
// "--scales q,k,v": three positive finite float32 scales; input_error naming the bad one.
input_scales parse_scales(const std::string& s);

// `attnbench run`'s options: run_cli (harness/cli.hpp) and --scales, which only
// --dtype e4m3 takes (scales of uint8 e4m3 code inputs).
struct run_options {
  run_cli cli;
  std::optional<input_scales> scales;
};
run_options parse_run_options(const std::vector<std::string>& args);

// Commands whose only option is --backend.
backend_choice parse_only_backend(const std::vector<std::string>& args, const char* command);

}  // namespace attnbench::cli

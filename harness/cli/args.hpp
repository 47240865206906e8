// What every command's parser shares: the argument walker and the parsers of
// counts and durations.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/cli.hpp"

namespace attnbench::cli {

// Walks "--name value" / "--name=value" / "--flag" / positional arguments.
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
};

int parse_count(const std::string& s, const char* what);       // 1 .. 1e6
double parse_seconds(const std::string& s, const char* what);  // > 0, finite
// Commands whose only option is --backend.
backend_choice parse_only_backend(const std::vector<std::string>& args, const char* command);

}  // namespace attnbench::cli

// `attnbench merge`: joins sharded result files.
#include <fmt/format.h>

#include "harness/cli/args.hpp"
#include "harness/cli/commands.hpp"
#include "harness/json_output.hpp"
#include "harness/safe_write.hpp"

namespace attnbench {

merge_cli parse_merge_cli(const std::vector<std::string>& args) {
  merge_cli c;
  cli::arg_walker w(args, "merge");
  while (w.next()) {
    if (w.name().empty())
      c.inputs.push_back(w.positional());
    else if (w.name() == "--out")
      c.out = w.value();
    else
      w.unknown();
  }
  if (c.out.empty()) throw input_error("'attnbench merge' needs --out");
  if (c.inputs.empty()) throw input_error("'attnbench merge' needs at least one input file");
  return c;
}

int cli::cmd_merge(const std::vector<std::string>& args) {
  const merge_cli c = parse_merge_cli(args);
  check_writable(c.out, "--out");
  const nlohmann::json merged = merge_results(c.inputs);
  write_json_file(c.out, merged);
  fmt::print(stderr, "attnbench: merged {} files, {} entries into {}\n", c.inputs.size(), merged["benchmarks"].size(),
             c.out);
  return exit_ok;
}

}  // namespace attnbench

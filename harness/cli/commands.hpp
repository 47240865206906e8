// The commands of `attnbench`, one file each; cli_main.cpp dispatches to them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "harness/backend.hpp"
#include "harness/cli.hpp"

namespace attnbench::cli {

int cmd_list(const std::vector<std::string>& args);
int cmd_sweep(const std::vector<std::string>& args, const std::string& command_line);
int cmd_run(const std::vector<std::string>& args);
int cmd_merge(const std::vector<std::string>& args);
int cmd_ceilings(const std::vector<std::string>& args);
int cmd_backend(const std::vector<std::string>& args);
int cmd_mask(const std::vector<std::string>& args);

// auto: cuda when built and usable (else cpu, saying why on stderr).
std::unique_ptr<backend> open_backend(backend_choice choice);

}  // namespace attnbench::cli

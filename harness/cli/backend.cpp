// Opening a backend, and the two commands that only report on one.
#include <fmt/format.h>

#include "harness/cli/args.hpp"
#include "harness/cli/commands.hpp"
#include "harness/context.hpp"
#include "harness/cuda_module.hpp"
#include "harness/exp_ceiling.hpp"
#include "kernels/registry.hpp"

namespace attnbench::cli {

using nlohmann::json;

std::unique_ptr<backend> open_backend(backend_choice choice) {
  if (choice == backend_choice::auto_) {
    std::string why;
    choice = best_available_backend(&why) == backend_kind::cuda ? backend_choice::cuda : backend_choice::cpu;
    if (choice == backend_choice::cpu && !why.empty())
      fmt::print(stderr, "attnbench: using the cpu backend ({})\n", why);
  }
  if (choice == backend_choice::cpu) return make_cpu_backend();
  std::string why;
  if (!load_cuda_module(&why)) throw input_error(fmt::format("{}: use --backend cpu", why));
  try {
    return open_cuda_backend();
  } catch (const backend_error& e) {
    throw input_error(fmt::format("the cuda backend is not usable: {}", e.what()));
  }
}

int cmd_ceilings(const std::vector<std::string>& args) {
  std::unique_ptr<backend> be = open_backend(parse_only_backend(args, "ceilings"));
  json c = be->context(true);
  add_exp_ceilings(c, be->kind(), true);  // the exp rate beside bandwidth and GEMM peaks
  json out = {{"backend", std::string(to_string(be->kind()))}};
  for (const char* k : {"device", "ceilings"})
    if (c.contains(k)) out[k] = c[k];
  fmt::print("{}\n", out.dump(2));
  return exit_ok;
}

int cmd_backend(const std::vector<std::string>& args) {
  std::unique_ptr<backend> be = open_backend(parse_only_backend(args, "backend"));
  const json c = be->context(false);
  fmt::print("{} {}\n", to_string(be->kind()), slug(c.value("device", "unknown")));
  return exit_ok;
}

}  // namespace attnbench::cli

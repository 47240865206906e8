// The entry point: usage, Google Benchmark's flags, dispatch to the commands
// and the error contract (input_error -> exit 2, anything else -> exit 1).
#include <algorithm>
#include <benchmark/benchmark.h>
#include <cstdio>
#include <unistd.h>
#include <fmt/format.h>

#include "harness/cli/commands.hpp"
#include "harness/context.hpp"

namespace attnbench {

namespace {

const char* usage_head = R"(usage: attnbench <command> [options]

commands:
  list      [--backend cpu|cuda|all]        registry rows: name, backend, what each supports, model
  sweep     [--preset quick|full|decode | --sweep-file F.json] [axis overrides] [options]
  run       --variant NAME --q q.npy --k k.npy --v v.npy --out o.npy [--mask M] [--block BrxBc]
            [--dtype T] [--backend cpu|cuda|auto] [--repeat N] [--lse lse.npy] [--hot]
            [--state N] [--groups G]
            [--pass bwd|fwd_bwd --do do.npy --dq dq.npy --dk dk.npy --dv dv.npy] (--out optional)
  merge     --out all.json a.json b.json ...    join sharded result files
  ceilings  [--backend auto|cpu|cuda]         measured (and theoretical) ceilings
  backend   [--backend auto|cpu|cuda]         prints "<backend> <device-slug>"
  mask      --mask M --nq N --nkv N [--heads H] --out vis.npy   the mask's visibility, uint8 [heads, Nq, Nkv]

)";

const char* usage_tail =
    R"(sweep options: --filter REGEX --shard i/n --backend auto|cpu|cuda --out F.json --resume --append
  --reps N --rep-time SECONDS --max-configurations N --hot --profile --no-ceilings --dry-run --dump-sweep
  --wait-timeout SECONDS --quarantine-from LOG[,LOG] --ceilings-from F.json --benchmark_*
See docs/cli.md.
)";

// The axis lines come from the axis table, in its (expansion) order.
std::string usage_text() {
  std::vector<std::string> lines{"sweep axes (comma lists, outermost first):"};
  for (const sweep_axis* a : sweep_axis_table()) {
    const std::string item = fmt::format(" {} {}", a->flag(), a->help());
    if (lines.back().size() + item.size() > 100) lines.emplace_back(" ");
    lines.back().append(item);
  }
  return fmt::format("{}{}\n{}", usage_head, fmt::join(lines, "\n"), usage_tail);
}

// benchmark::Initialize with its stderr captured: a bad --benchmark_* value is
// then reported in our one error line (its first line), not in a second one.
std::string initialize_benchmark(int* argc, char** argv) {
  std::fflush(stderr);
  FILE* tmp = std::tmpfile();
  const int saved = tmp ? ::dup(STDERR_FILENO) : -1;
  if (saved >= 0) ::dup2(::fileno(tmp), STDERR_FILENO);
  benchmark::Initialize(argc, argv);
  std::string said;
  if (saved >= 0) {
    std::fflush(stderr);
    ::dup2(saved, STDERR_FILENO);
    ::close(saved);
    std::rewind(tmp);
    char buf[512];
    if (std::fgets(buf, sizeof buf, tmp)) said = buf;
    while (!said.empty() && (said.back() == '\n' || said.back() == '\r')) said.pop_back();
  }
  if (tmp) std::fclose(tmp);
  return said;
}

}  // namespace

int cli_main(int argc, char** argv) {
  // Google Benchmark sees only the program name and its own --benchmark_* flags.
  std::vector<char*> gb_argv{argv[0]};
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.starts_with("--benchmark_") && a.find("--benchmark_out") != 0)
      gb_argv.push_back(argv[i]);
    else
      args.push_back(a);
  }
  try {
    int gb_argc = static_cast<int>(gb_argv.size());
    gb_argv.push_back(nullptr);
    const std::string gb_said = initialize_benchmark(&gb_argc, gb_argv.data());
    if (gb_argc > 1)
      throw input_error(gb_said.empty() ? fmt::format("unknown option '{}'", gb_argv[1])
                                        : fmt::format("bad option '{}': {}", gb_argv[1], gb_said));
    if (args.empty())
      throw input_error(
          "no command (expected list, sweep, run, merge, ceilings, backend or mask; see attnbench --help)");
    if (args[0] == "help" || args[0] == "--help" || args[0] == "-h") {
      fmt::print("{}", usage_text());
      return exit_ok;
    }
    const std::string cmd = args[0];
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    if (std::find(rest.begin(), rest.end(), "--help") != rest.end()) {
      fmt::print("{}", usage_text());
      return exit_ok;
    }
    if (cmd == "list") return cli::cmd_list(rest);
    if (cmd == "sweep") return cli::cmd_sweep(rest, join_command_line(argc, argv));
    if (cmd == "run") return cli::cmd_run(rest);
    if (cmd == "merge") return cli::cmd_merge(rest);
    if (cmd == "ceilings") return cli::cmd_ceilings(rest);
    if (cmd == "backend") return cli::cmd_backend(rest);
    if (cmd == "mask") return cli::cmd_mask(rest);
    throw input_error(
        fmt::format("unknown command '{}' (expected list, sweep, run, merge, ceilings, backend, mask)", cmd));
  } catch (const input_error& e) {
    fmt::print(stderr, "attnbench: error: {}\n", e.what());
    return exit_bad_input;
  } catch (const std::exception& e) {
    fmt::print(stderr, "attnbench: error: {}\n", e.what());
    return exit_runtime_error;
  }
}

}  // namespace attnbench

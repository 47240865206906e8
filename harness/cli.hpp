// The `attnbench` command line (docs/cli.md): list, sweep, run, merge,
// ceilings, backend, one file each in harness/cli/; the sweep axis flags come
// from the axis table (sweep_axes.hpp). Parsing is separate from running so
// tests can check it; every bad input throws input_error (one line naming the
// value), which cli_main prints as `attnbench: error: ...` and turns into
// exit status 2.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kernels/registry.hpp"
#include "harness/sweep.hpp"

namespace attnbench {

inline constexpr int exit_ok = 0;
inline constexpr int exit_runtime_error = 1;
inline constexpr int exit_bad_input = 2;
inline constexpr int exit_sticky = 3;  // a sticky device error ended the sweep: rerun with --resume

enum class backend_choice { auto_, cpu, cuda };
backend_choice parse_backend_choice(std::string_view s);

struct sweep_cli {
  std::string preset;  // empty: see resolve_sweep
  std::string sweep_file;
  sweep_axes overrides;
  std::string filter;
  shard_spec shard;
  bool sharded = false;
  backend_choice backend = backend_choice::auto_;
  std::string out;
  bool resume = false;
  bool append = false;  // --append: --resume that also accepts a log of another sweep
  int reps = 0;         // 0: backend default (cuda 5, cpu 3)
  std::int64_t max_configurations = default_max_configurations;
  double rep_time_s = 0;
  bool hot = false, profile = false, no_ceilings = false, dry_run = false, dump_sweep = false;
  std::vector<std::string> gbench_flags;  // --benchmark_* passed through
  // Crash isolation (docs/gpu.md): the floor of every device wait's deadline (0: $ATTNBENCH_WAIT_TIMEOUT_S
  // or 10 s), results files whose crashed/hung rows this sweep skips, ceilings measured before.
  double wait_timeout_s = 0;
  std::vector<std::string> quarantine_from;
  std::string ceilings_from;
};

struct run_cli {
  std::string variant;
  backend_choice backend = backend_choice::cpu;
  std::string q, k, v, out, lse_out;
  mask_spec mask;
  tile_shape block;
  dtype type = dtype::fp32;
  int repeat = 0;
  bool hot = false;
  std::int64_t dstate = 16, ngroups = 1;  // --state, --groups: the scan rows' N and G
  // --pass bwd / fwd_bwd (docs/backward.md): dO in, dQ, dK, dV out.
  pass_kind pass = pass_kind::fwd;
  std::string d_o, dq_out, dk_out, dv_out;
};

struct merge_cli {
  std::string out;
  std::vector<std::string> inputs;
};

// args exclude the program name and the command word.
sweep_cli parse_sweep_cli(const std::vector<std::string>& args);
run_cli parse_run_cli(const std::vector<std::string>& args);
merge_cli parse_merge_cli(const std::vector<std::string>& args);

// The sweep a sweep_cli describes: --sweep-file, else --preset, else (when any
// axis is given) one group "custom" of the overrides, else quick.
sweep_spec resolve_sweep(const sweep_cli& c);

int cli_main(int argc, char** argv);

}  // namespace attnbench

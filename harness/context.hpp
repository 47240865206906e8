// The JSON "context" of a run (docs/json_schema.md): Google Benchmark's own
// keys, then host, build, git, sweep and timing facts, then whatever the
// backend contributes (device, device_info, ceilings, kernel_resources).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "harness/backend.hpp"

namespace attnbench {

inline constexpr const char* attnbench_version = "0.1.0";

struct run_facts {
  std::string preset;        // preset or sweep file name
  std::string command_line;  // as typed (shell-quoted)
  int repetitions = 0;
  // backend::cache_flush: "per launch" (cuda, cold), "llc eviction per run (N MiB buffer)"
  // (cpu, cold), "none (--hot)"; "none" when the backend flushes nothing.
  std::string l2_flush = "none";
  std::string shard;  // "i/n" when sharded, else empty
};

// Google Benchmark's context keys, as its JSON reporter writes them.
nlohmann::json gbench_context();
// Commit of ATTNBENCH_SOURCE_DIR at run time ("unknown" when git fails); $ATTNBENCH_GIT_COMMIT
// (40 hex digits) when set: the commit prebuilt binaries were built at (docs/gpu.md).
std::string git_commit();
bool git_dirty();
std::string host_name();
std::string compiler_text();
// Lower-case, [a-z0-9-] only: "NVIDIA H200" -> "nvidia-h200".
std::string slug(std::string_view text);
// Shell-quotes argv into one line.
std::string join_command_line(int argc, char** argv);

// Every registry row as context.variants (docs/json_schema.md).
nlohmann::json variant_rows_json();

nlohmann::json make_context(backend& be, bool measure_ceilings, const run_facts& facts);

}  // namespace attnbench

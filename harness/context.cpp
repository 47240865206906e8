#include "harness/context.hpp"

#include "harness/exp_ceiling.hpp"
#include "kernels/cpu/tile_gemm.hpp"
#include "kernels/registry.hpp"

#include <array>
#include <benchmark/benchmark.h>
#include <cstdio>
#include <cstdlib>
#include <fmt/format.h>
#include <sstream>
#include <string_view>
#include <unistd.h>

namespace attnbench {

using nlohmann::json;

json gbench_context() {
  if (benchmark::BenchmarkReporter::Context::executable_name == nullptr)
    benchmark::BenchmarkReporter::Context::executable_name = "attnbench";
  std::ostringstream out, err;
  benchmark::JSONReporter r;
  r.SetOutputStream(&out);
  r.SetErrorStream(&err);
  benchmark::BenchmarkReporter::Context ctx;
  r.ReportContext(ctx);
  r.Finalize();
  json j = json::parse(out.str(), nullptr, false);
  if (j.is_discarded() || !j.contains("context")) return json::object();
  return j["context"];
}

static std::string run_command(const std::string& cmd, int* status) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) {
    *status = -1;
    return out;
  }
  std::array<char, 256> buf{};
  while (std::fgets(buf.data(), buf.size(), p)) out += buf.data();
  *status = ::pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

static std::string source_dir() {
#ifdef ATTNBENCH_SOURCE_DIR
  return ATTNBENCH_SOURCE_DIR;
#else
  return ".";
#endif
}

std::string git_commit() {
  // Binaries built elsewhere and carried (scripts/gpu_prebuild.sh) run where their source
  // folder is not: scripts/gpu_check.sh passes the commit they were built at.
  if (const char* c = std::getenv("ATTNBENCH_GIT_COMMIT"); c && std::string_view(c).size() == 40) return c;
  int st = 0;
  const std::string out = run_command(fmt::format("git -C '{}' rev-parse HEAD 2>/dev/null", source_dir()), &st);
  return st == 0 && out.size() == 40 ? out : "unknown";
}

bool git_dirty() {
  int st = 0;
  const std::string out =
      run_command(fmt::format("git -C '{}' status --porcelain --untracked-files=no 2>/dev/null", source_dir()), &st);
  return st == 0 && !out.empty();
}

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

std::string compiler_text() {
  std::string s =
#ifdef ATTNBENCH_CXX_COMPILER
      ATTNBENCH_CXX_COMPILER;
#else
      "unknown";
#endif
#ifdef ATTNBENCH_CUDA_COMPILER
  s += std::string(", ") + ATTNBENCH_CUDA_COMPILER;
#endif
  return s;
}

std::string slug(std::string_view text) {
  std::string out;
  for (char c : text) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (alnum)
      out += c;
    else if (c >= 'A' && c <= 'Z')
      out += static_cast<char>(c - 'A' + 'a');
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "unknown" : out;
}

std::string join_command_line(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    const bool plain =
        !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=./:,+@%") ==
                          std::string::npos;
    if (i) s += ' ';
    if (plain) {
      s += a;
    } else {
      s += '\'';
      for (char c : a) s += c == '\'' ? std::string("'\\''") : std::string(1, c);
      s += '\'';
    }
  }
  return s;
}

// The masks of the row's backward: null when it runs none, else its bwd_masks or its masks.
static json bwd_masks_json(const capabilities& c) {
  if (!(c.passes & (pass_bwd | pass_fwd_bwd))) return nullptr;
  json out = json::array();
  for (auto m : mask_feature_names(c.bwd_masks ? c.bwd_masks : c.masks)) out.push_back(std::string(m));
  return out;
}

json variant_rows_json() {
  json rows = json::array();
  for (const variant& v : registry()) {
    json tags = json::array(), types = json::array(), masks = json::array(), passes = json::array();
    for (tag t : v.tags) tags.push_back(std::string(to_string(t)));
    for (dtype t : v.caps.dtypes) types.push_back(std::string(to_string(t)));
    for (auto m : mask_feature_names(v.caps.masks)) masks.push_back(std::string(m));
    for (auto p : pass_feature_names(v.caps.passes)) passes.push_back(std::string(p));
    rows.push_back({{"name", v.name},
                    {"backend", std::string(to_string(v.backend))},
                    {"math", std::string(to_string(v.math))},
                    {"summary", v.summary},
                    {"writes_lse", v.writes_lse},
                    {"tags", tags},
                    {"capabilities",
                     {{"dtypes", types},
                      {"masks", masks},
                      {"bwd_masks", bwd_masks_json(v.caps)},
                      {"head_dims", v.caps.head_dims},
                      {"gqa", v.caps.gqa},
                      {"gqa_only", v.caps.gqa_only},
                      {"max_nq", v.caps.max_nq > 0 ? json(v.caps.max_nq) : json(nullptr)},
                      {"passes", passes}}}});
  }
  return rows;
}

json make_context(backend& be, bool measure_ceilings, const run_facts& facts) {
  json c = gbench_context();
  c["attnbench_version"] = attnbench_version;
  c["backend"] = std::string(to_string(be.kind()));
  c["host"] = host_name();
  c["git_commit"] = git_commit();
  c["git_dirty"] = git_dirty();
  c["compiler"] = compiler_text();
#ifdef ATTNBENCH_BUILD_TYPE
  c["build_type"] = ATTNBENCH_BUILD_TYPE;
#else
  c["build_type"] = "unknown";
#endif
  c["preset"] = facts.preset;
  c["command_line"] = facts.command_line;
  if (!facts.shard.empty()) c["shard"] = facts.shard;
  c["timing"] = {{"repetitions", facts.repetitions},
                 {"aggregate", "median"},
                 {"l2_flush", facts.l2_flush},
                 {"clock", be.kind() == backend_kind::cuda ? "cuda_events" : "steady_clock"}};
  c["variants"] = variant_rows_json();
  c["cpu_tile_products"] = cpu::tile_products_description();  // CPU kernels' GEMM path
  json b = be.context(measure_ceilings);
  if (b.is_object()) {
    add_exp_ceilings(b, be.kind(), measure_ceilings);  // theoretical (GPUs); measured unless the backend did
    c.update(b);
  }
  if (!c.contains("device")) c["device"] = "unknown";
  return c;
}

}  // namespace attnbench

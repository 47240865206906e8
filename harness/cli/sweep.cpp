// `attnbench sweep`: the sweep a command line describes, then its run.
#include <cstdlib>
#include <filesystem>
#include <set>
#include <fmt/format.h>

#include "harness/axis_values.hpp"
#include "harness/bench_loop.hpp"
#include "harness/cli/args.hpp"
#include "harness/cli/commands.hpp"
#include "harness/context.hpp"
#include "harness/exp_ceiling.hpp"
#include "harness/cuda_module.hpp"
#include "harness/host_info.hpp"
#include "harness/json_output.hpp"
#include "harness/json_read.hpp"
#include "harness/results_log.hpp"
#include "harness/row_quarantine.hpp"
#include "harness/run_defaults.hpp"
#include "harness/safe_write.hpp"

namespace attnbench {

using nlohmann::json;

sweep_cli parse_sweep_cli(const std::vector<std::string>& args) {
  sweep_cli c;
  cli::arg_walker w(args, "sweep");
  while (w.next()) {
    const std::string& n = w.name();
    if (n.starts_with("--benchmark_")) {
      if (n == "--benchmark_out" || n == "--benchmark_out_format")
        throw input_error(fmt::format("option '{}' is not supported: attnbench writes its JSON to --out", n));
      c.gbench_flags.push_back(w.raw());
    } else if (const sweep_axis* axis = find_axis_by_flag(n))
      axis->set(c.overrides, axis->split(w.value()));
    else if (n == "--preset")
      c.preset = w.value();
    else if (n == "--sweep-file")
      c.sweep_file = w.value();
    else if (n == "--filter")
      c.filter = w.value();
    else if (n == "--shard") {
      c.shard = parse_shard(w.value());
      c.sharded = true;
    } else if (n == "--backend")
      c.backend = parse_backend_choice(w.value());
    else if (n == "--out")
      c.out = w.value();
    else if (n == "--reps")
      c.reps = cli::parse_count(w.value(), "--reps");
    else if (n == "--max-configurations") {
      c.max_configurations = parse_positive(w.value(), "--max-configurations");
      if (c.max_configurations > (std::int64_t{1} << 40))
        throw input_error(fmt::format("--max-configurations {} exceeds the largest accepted 2^40", w.value()));
    } else if (n == "--rep-time")
      c.rep_time_s = cli::parse_seconds(w.value(), "--rep-time");
    else if (n == "--wait-timeout")
      c.wait_timeout_s = cli::parse_seconds(w.value(), "--wait-timeout");
    else if (n == "--quarantine-from") {
      for (std::string& f : split_list(w.value(), "--quarantine-from")) c.quarantine_from.push_back(std::move(f));
    } else if (n == "--ceilings-from")
      c.ceilings_from = w.value();
    else if (n == "--resume") {
      w.no_value();
      c.resume = true;
    } else if (n == "--append") {
      w.no_value();
      c.append = c.resume = true;
    } else if (n == "--hot") {
      w.no_value();
      c.hot = true;
    } else if (n == "--profile") {
      w.no_value();
      c.profile = true;
    } else if (n == "--no-ceilings") {
      w.no_value();
      c.no_ceilings = true;
    } else if (n == "--dry-run") {
      w.no_value();
      c.dry_run = true;
    } else if (n == "--dump-sweep") {
      w.no_value();
      c.dump_sweep = true;
    } else
      w.unknown();
  }
  if (!c.preset.empty() && !c.sweep_file.empty()) throw input_error("give --preset or --sweep-file, not both");
  if (!c.preset.empty()) make_preset(c.preset);  // validates the name
  if (!c.ceilings_from.empty() && c.no_ceilings) throw input_error("give --ceilings-from or --no-ceilings, not both");
  return c;
}

sweep_spec resolve_sweep(const sweep_cli& c) {
  sweep_spec s;
  if (!c.sweep_file.empty()) {
    s = load_sweep_file(c.sweep_file);
  } else if (!c.preset.empty()) {
    s = make_preset(c.preset);
  } else if (!c.overrides.empty()) {
    s = {"custom", {{"custom", {}}}};
  } else {
    s = make_preset("quick");
  }
  apply_overrides(s, c.overrides);
  return s;
}

namespace cli {

namespace {

std::string short_commit() {
  const std::string c = git_commit();
  return c == "unknown" ? c : c.substr(0, 7);
}

// The measured ceilings of --ceilings-from FILE: the output of `attnbench ceilings`
// ({"device", "ceilings": {"measured"}}) or a result JSON (its context). null when no file
// is given; input_error naming the file when it holds none or another device's.
json ceilings_from_file(const std::string& path, const std::string& device, std::string* from) {
  if (path.empty()) return nullptr;
  const json doc = read_json_file(path, "ceilings file");
  const json& holder = doc.is_object() && doc.contains("context") && doc["context"].is_object() ? doc["context"] : doc;
  if (!holder.is_object() || !holder.contains("ceilings") || !holder["ceilings"].is_object() ||
      !holder["ceilings"].contains("measured") || !holder["ceilings"]["measured"].is_object())
    throw input_error(
        fmt::format("--ceilings-from '{}' holds no ceilings.measured (expected the output of "
                    "`attnbench ceilings` or a result JSON)",
                    path));
  const std::string theirs = holder.value("device", "");
  if (theirs != device)
    throw input_error(fmt::format("--ceilings-from '{}' was measured on '{}', this is '{}'", path, theirs, device));
  *from = fmt::format("file {}", path);
  return holder["ceilings"]["measured"];
}

// On --resume: the measured ceilings an earlier run of this sweep wrote into the log's
// header, when it ran on this device. null otherwise.
json ceilings_from_log(const std::string& log_path, const std::string& device, std::string* from) {
  try {
    const log_contents c = read_results_log(log_path);
    const json& h = c.header_context;
    if (!h.is_object() || h.value("device", "") != device || !h.contains("ceilings") || !h["ceilings"].is_object() ||
        !h["ceilings"].contains("measured") || !h["ceilings"]["measured"].is_object())
      return nullptr;
    *from = fmt::format("the header of {} (an earlier run of this sweep)", log_path);
    return h["ceilings"]["measured"];
  } catch (const std::exception&) {
    return nullptr;  // the log itself is checked (and any problem reported) when it is opened
  }
}

}  // namespace

int cmd_sweep(const std::vector<std::string>& args, const std::string& command_line) {
  const sweep_cli c = parse_sweep_cli(args);
  const sweep_spec spec = resolve_sweep(c);
  // Before the ceilings and the sweep: an output that cannot be written is bad input (exit 2).
  if (!c.out.empty() && !c.dump_sweep && !c.dry_run) check_writable(c.out, "--out");
  if (c.dump_sweep) {
    fmt::print("{}\n", to_json(spec).dump(2));
    return exit_ok;
  }
  // A dry run only lists configurations: an explicit --backend cuda needs no device for it.
  std::unique_ptr<backend> be;
  backend_kind kind = backend_kind::cpu;
  if (c.dry_run && c.backend != backend_choice::auto_) {
    kind = c.backend == backend_choice::cuda ? backend_kind::cuda : backend_kind::cpu;
    if (std::string why; kind == backend_kind::cuda && !load_cuda_module(&why))
      throw input_error(fmt::format("{}: use --backend cpu", why));
  } else {
    be = open_backend(c.backend);
    kind = be->kind();
  }
  const std::vector<configuration> configs =
      select(expand(spec, registry(), kind, c.max_configurations), c.filter, c.shard);
  if (c.dry_run) {
    int run = 0;
    for (const auto& cfg : configs) {
      fmt::print("{} {} {}\n", cfg.name, cfg.group, cfg.sup.ok ? "run" : "skip: " + cfg.sup.reason);
      run += cfg.sup.ok;
    }
    fmt::print(stderr, "attnbench: {} configurations ({} to run, {} unsupported)\n", configs.size(), run,
               configs.size() - run);
    return exit_ok;
  }
  if (configs.empty()) throw input_error("the sweep selects no configuration (check --filter, --variant)");

  sweep_options opt;
  opt.repetitions = c.reps > 0 ? c.reps : defaults_for(be->kind()).repetitions;
  opt.hot = c.hot;
  opt.profile = c.profile;
  opt.rep_time_s = c.rep_time_s;
  if (const char* f = std::getenv("ATTNBENCH_FAULT")) opt.faults = parse_planted_faults(f);  // test hook
  opt.wait_floor_s = c.wait_timeout_s > 0 ? c.wait_timeout_s : wait_floor_from_env();
  for (const std::string& f : c.quarantine_from) collect_row_faults(entries_of_results_file(f), f, opt.quarantine);
  if (c.profile) {
    const sweep_totals t = run_sweep(*be, configs, nullptr, opt);
    fmt::print(stderr, "attnbench: profiled {}, skipped {}, failed {}\n", t.profiled, t.skipped, t.failed);
    return t.sticky_error ? exit_sticky : exit_ok;
  }

  run_facts facts;
  facts.preset = spec.name;
  facts.command_line = command_line;
  facts.repetitions = opt.repetitions;
  facts.l2_flush = be->cache_flush(c.hot);
  if (c.sharded) facts.shard = fmt::format("{}/{}", c.shard.index, c.shard.count);
  json context = make_context(*be, false, facts);  // ceilings below: measured, read, or reused
  opt.peaks = context.contains("ceilings") ? context["ceilings"].value("theoretical", json()) : json();

  std::string out = c.out;
  if (out.empty()) {
    out = fmt::format("results/{}/{}-{}", slug(context.value("device", "unknown")), slug(spec.name), short_commit());
    if (c.sharded) out += fmt::format("-shard{}of{}", c.shard.index, c.shard.count);
    out += ".json";
  }
  check_writable(out, "the results file");
  const std::string log_path = log_path_for(out);
  const bool had_log = std::filesystem::exists(log_path);
  std::vector<std::string> names;
  for (const auto& cfg : configs) names.push_back(cfg.name);
  const std::set<std::string> known(names.begin(), names.end());
  const std::string device = context.value("device", "unknown");
  if (!c.no_ceilings) {
    std::string from;
    json measured = ceilings_from_file(c.ceilings_from, device, &from);
    if (measured.is_null() && c.resume) measured = ceilings_from_log(log_path, device, &from);
    if (measured.is_null()) {  // measure (the costly part: 1 GiB copies and 8192^3 GEMMs on a GPU)
      json m = be->context(true);
      add_exp_ceilings(m, be->kind(), true);  // the exp rate beside bandwidth and GEMM (kept where measured)
      if (m.contains("ceilings") && m["ceilings"].contains("measured")) measured = m["ceilings"]["measured"];
      from = "measured by this run";
    }
    if (!measured.is_null()) {
      context["ceilings"]["measured"] = measured;
      context["ceilings_from"] = from;
    }
  }
  log_options lo;
  lo.resume = c.resume;
  lo.append = c.append;
  lo.identity = sweep_identity(names, git_commit());
  lo.known_names = &known;
  // The device and its ceilings ride in the log's header: a resumed sweep reuses them.
  lo.header_context = {{"device", device}};
  if (context.contains("ceilings") && context["ceilings"].contains("measured"))
    lo.header_context["ceilings"] = context["ceilings"];
  results_log log(log_path, lo);  // fails first (lock, another sweep): its error is the only line
  if (!c.resume && had_log)
    fmt::print(stderr, "attnbench: started a fresh log {} (use --resume to continue one)\n", log_path);
  if (log.existing().torn_lines)
    fmt::print(stderr, "attnbench: ignored {} torn line(s) in {}\n", log.existing().torn_lines, log_path);
  if (log.existing().invalid_lines)
    fmt::print(stderr,
               "attnbench: warning: {} invalid line(s) in {} are not finished results and run again "
               "(first: {})\n",
               log.existing().invalid_lines, log_path, log.existing().first_invalid);

  opt.keep_originals_bytes = host_available_bytes() / 4;  // originals shared across dtypes (tensors.hpp)
  opt.write_partial = [&] { write_json_file(out, assemble_results(context, log.entries())); };
  const sweep_totals t = run_sweep(*be, configs, &log, opt);
  write_json_file(out, assemble_results(context, log.entries()));
  log.close();  // a normal end: the lock file goes too
  fmt::print(stderr, "attnbench: {} ok ({} above tolerance), {} skipped, {} failed, {} from the log\n", t.ok,
             t.above_tolerance, t.skipped, t.failed, t.resumed);
  fmt::print(stderr, "attnbench: wrote {} ({} entries)\n", out, log.entries().size());
  if (t.quarantined > 0)
    fmt::print(stderr, "attnbench: {} configuration(s) of {} row(s) skipped because the row crashed or hung\n",
               t.quarantined, t.quarantined_rows.size());
  if (t.sticky_error) {
    fmt::print(stderr, "attnbench: error: sticky device error ({}); rerun with --resume to continue\n",
               t.sticky_message);
    return exit_sticky;
  }
  return exit_ok;
}

}  // namespace cli
}  // namespace attnbench

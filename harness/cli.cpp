#include "harness/cli.hpp"

#include "harness/run_defaults.hpp"

#include <algorithm>
#include <benchmark/benchmark.h>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <set>

#include "harness/backend.hpp"
#include "harness/bench_loop.hpp"
#include "harness/context.hpp"
#include "harness/json_output.hpp"
#include "harness/npy.hpp"
#include "harness/results_log.hpp"
#include "harness/tensors.hpp"

namespace attnbench {

using nlohmann::json;

backend_choice parse_backend_choice(std::string_view s) {
  if (s == "auto") return backend_choice::auto_;
  if (s == "cpu") return backend_choice::cpu;
  if (s == "cuda") return backend_choice::cuda;
  throw input_error(fmt::format("unknown backend '{}' (expected auto, cpu or cuda)", s));
}

namespace {

const char* usage_text = R"(usage: attnbench <command> [options]

commands:
  list      [--backend cpu|cuda|all]        registry rows: name, backend, what each supports, model
  sweep     [--preset quick|full|decode | --sweep-file F.json] [axis overrides] [options]
  run       --variant NAME --q q.npy --k k.npy --v v.npy --out o.npy [--mask M] [--block BrxBc]
            [--dtype T] [--backend cpu|cuda|auto] [--repeat N] [--lse lse.npy] [--hot]
  merge     --out all.json a.json b.json ...    join sharded result files
  ceilings  [--backend auto|cpu|cuda]         measured (and theoretical) ceilings
  backend   [--backend auto|cpu|cuda]         prints "<backend> <device-slug>"

sweep axes (comma lists): --seq --nq --nkv --batch --heads --kv-heads (N, H or H/k) --head-dim
  --block BrxBc --mask none,causal,local:L,R[+global:G] --dtype fp32,fp16,bf16 --variant NAMES
sweep options: --filter REGEX --shard i/n --backend auto|cpu|cuda --out F.json --resume
  --reps N --rep-time SECONDS --hot --profile --no-ceilings --dry-run --dump-sweep --benchmark_*
See docs/cli.md.
)";

// Walks "--name value" / "--name=value" / "--flag" arguments.
class arg_walker {
 public:
  arg_walker(const std::vector<std::string>& args, std::string command)
      : args_(args), command_(std::move(command)) {}
  bool next() {
    if (i_ >= args_.size()) return false;
    const std::string& a = args_[i_++];
    value_.reset();
    if (!a.starts_with("--")) {
      name_.clear();
      positional_ = a;
      return true;
    }
    positional_.clear();
    const auto eq = a.find('=');
    name_ = a.substr(0, eq);
    if (eq != std::string::npos) value_ = a.substr(eq + 1);
    return true;
  }
  const std::string& name() const { return name_; }
  const std::string& positional() const { return positional_; }
  const std::string& raw() const { return args_[i_ - 1]; }
  std::string value() {
    if (value_) return *value_;
    if (i_ >= args_.size() || (args_[i_].starts_with("--") && args_[i_].size() > 2))
      throw input_error(fmt::format("option '{}' needs a value", name_));
    value_ = args_[i_++];
    return *value_;
  }
  void no_value() const {
    if (value_) throw input_error(fmt::format("option '{}' takes no value", name_));
  }
  [[noreturn]] void unknown() const {
    if (name_.empty())
      throw input_error(fmt::format("unexpected argument '{}' for 'attnbench {}'", positional_, command_));
    throw input_error(fmt::format("unknown option '{}' for 'attnbench {}'", name_, command_));
  }

 private:
  const std::vector<std::string>& args_;
  std::string command_;
  std::size_t i_ = 0;
  std::string name_, positional_;
  std::optional<std::string> value_;
};

int parse_count(const std::string& s, const char* what) {
  const auto v = parse_positive(s, what);
  if (v > 1000000) throw input_error(fmt::format("{} '{}' is too large", what, s));
  return static_cast<int>(v);
}

double parse_seconds(const std::string& s, const char* what) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || !(v > 0) || !std::isfinite(v))
    throw input_error(fmt::format("bad {} '{}' (expected a positive number of seconds)", what, s));
  return v;
}

}  // namespace

sweep_cli parse_sweep_cli(const std::vector<std::string>& args) {
  sweep_cli c;
  arg_walker w(args, "sweep");
  while (w.next()) {
    const std::string& n = w.name();
    auto& o = c.overrides;
    if (n.starts_with("--benchmark_")) {
      if (n == "--benchmark_out" || n == "--benchmark_out_format")
        throw input_error(fmt::format("option '{}' is not supported: attnbench writes its JSON to --out", n));
      c.gbench_flags.push_back(w.raw());
    } else if (n == "--preset") c.preset = w.value();
    else if (n == "--sweep-file") c.sweep_file = w.value();
    else if (n == "--seq") o.seq = parse_int_list(w.value(), "seq");
    else if (n == "--nq") o.nq = parse_int_list(w.value(), "nq");
    else if (n == "--nkv") o.nkv = parse_int_list(w.value(), "nkv");
    else if (n == "--batch") o.batch = parse_int_list(w.value(), "batch");
    else if (n == "--heads") o.heads = parse_int_list(w.value(), "heads");
    else if (n == "--kv-heads") o.kv_heads = parse_kv_heads_list(w.value());
    else if (n == "--head-dim") o.head_dim = parse_int_list(w.value(), "head-dim");
    else if (n == "--block") o.block = parse_block_list(w.value());
    else if (n == "--mask") o.mask = parse_mask_list(w.value());
    else if (n == "--dtype") o.type = parse_dtype_list(w.value());
    else if (n == "--variant") o.variant = split_list(w.value(), "variant");
    else if (n == "--filter") c.filter = w.value();
    else if (n == "--shard") { c.shard = parse_shard(w.value()); c.sharded = true; }
    else if (n == "--backend") c.backend = parse_backend_choice(w.value());
    else if (n == "--out") c.out = w.value();
    else if (n == "--reps") c.reps = parse_count(w.value(), "--reps");
    else if (n == "--rep-time") c.rep_time_s = parse_seconds(w.value(), "--rep-time");
    else if (n == "--resume") { w.no_value(); c.resume = true; }
    else if (n == "--hot") { w.no_value(); c.hot = true; }
    else if (n == "--profile") { w.no_value(); c.profile = true; }
    else if (n == "--no-ceilings") { w.no_value(); c.no_ceilings = true; }
    else if (n == "--dry-run") { w.no_value(); c.dry_run = true; }
    else if (n == "--dump-sweep") { w.no_value(); c.dump_sweep = true; }
    else w.unknown();
  }
  if (!c.preset.empty() && !c.sweep_file.empty())
    throw input_error("give --preset or --sweep-file, not both");
  if (!c.preset.empty()) make_preset(c.preset);  // validates the name
  return c;
}

run_cli parse_run_cli(const std::vector<std::string>& args) {
  run_cli c;
  arg_walker w(args, "run");
  while (w.next()) {
    const std::string& n = w.name();
    if (n == "--variant") c.variant = w.value();
    else if (n == "--backend") c.backend = parse_backend_choice(w.value());
    else if (n == "--q") c.q = w.value();
    else if (n == "--k") c.k = w.value();
    else if (n == "--v") c.v = w.value();
    else if (n == "--out") c.out = w.value();
    else if (n == "--lse") c.lse_out = w.value();
    else if (n == "--mask") c.mask = parse_mask(w.value());
    else if (n == "--block") c.block = parse_block(w.value());
    else if (n == "--dtype") c.type = parse_dtype(w.value());
    else if (n == "--repeat") c.repeat = parse_count(w.value(), "--repeat");
    else if (n == "--hot") { w.no_value(); c.hot = true; }
    else w.unknown();
  }
  for (auto [v, what] : {std::pair{&c.variant, "--variant"}, {&c.q, "--q"}, {&c.k, "--k"},
                         {&c.v, "--v"}, {&c.out, "--out"}})
    if (v->empty()) throw input_error(fmt::format("'attnbench run' needs {}", what));
  return c;
}

merge_cli parse_merge_cli(const std::vector<std::string>& args) {
  merge_cli c;
  arg_walker w(args, "merge");
  while (w.next()) {
    if (w.name().empty()) c.inputs.push_back(w.positional());
    else if (w.name() == "--out") c.out = w.value();
    else w.unknown();
  }
  if (c.out.empty()) throw input_error("'attnbench merge' needs --out");
  if (c.inputs.empty()) throw input_error("'attnbench merge' needs at least one input file");
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

// ---- commands ---------------------------------------------------------------------

namespace {

std::unique_ptr<backend> open_backend(backend_choice choice) {
  if (choice == backend_choice::auto_) {
    std::string why;
    choice = best_available_backend(&why) == backend_kind::cuda ? backend_choice::cuda : backend_choice::cpu;
    if (choice == backend_choice::cpu && !why.empty())
      fmt::print(stderr, "attnbench: using the cpu backend ({})\n", why);
  }
  if (choice == backend_choice::cpu) return make_cpu_backend();
#ifdef ATTNBENCH_WITH_CUDA
  try {
    return make_cuda_backend();
  } catch (const backend_error& e) {
    throw input_error(fmt::format("the cuda backend is not usable: {}", e.what()));
  }
#else
  throw input_error("this attnbench was built without CUDA: use --backend cpu");
#endif
}

// What the row declares (its capabilities and tags), not a probe.
std::string supports_summary(const variant& v) {
  std::vector<std::string> types, masks, tags, dims;
  for (dtype t : v.caps.dtypes) types.emplace_back(to_string(t));
  for (auto m : mask_feature_names(v.caps.masks)) masks.emplace_back(m);
  for (tag t : v.tags) tags.emplace_back(to_string(t));
  for (auto d : v.caps.head_dims) dims.push_back(std::to_string(d));
  auto list = [](const std::vector<std::string>& l, const char* sep) {
    return l.empty() ? std::string("-") : fmt::format("{}", fmt::join(l, sep));
  };
  return fmt::format("dtypes {}; masks {}; d {}; gqa {}; Nq {}; tags {}", list(types, ","),
                     list(masks, ","), dims.empty() ? "any" : list(dims, ","),
                     v.caps.gqa_only ? "only" : v.caps.gqa ? "yes" : "no",
                     v.caps.max_nq > 0 ? fmt::format("<= {}", v.caps.max_nq) : "any", list(tags, ","));
}

int cmd_list(const std::vector<std::string>& args) {
  std::string which = "all";
  arg_walker w(args, "list");
  while (w.next()) {
    if (w.name() == "--backend") {
      which = w.value();
      if (which != "all") parse_backend_choice(which);
    } else {
      w.unknown();
    }
  }
  int n = 0;
  for (const auto& v : registry()) {
    if (which != "all" && which != "auto" && to_string(v.backend) != which) continue;
    fmt::print("{:<20} {:<5} {:<8} {}\n", v.name, to_string(v.backend),
               v.math == attention_math::softmax ? "softmax" : "linear", supports_summary(v));
    if (!v.summary.empty()) fmt::print("{:<20} model: {}\n", "", v.summary);
    ++n;
  }
  if (n == 0) fmt::print(stderr, "attnbench: no variants registered for backend '{}'\n", which);
  return exit_ok;
}

std::string short_commit() {
  const std::string c = git_commit();
  return c == "unknown" ? c : c.substr(0, 7);
}

int cmd_sweep(const std::vector<std::string>& args, const std::string& command_line) {
  const sweep_cli c = parse_sweep_cli(args);
  const sweep_spec spec = resolve_sweep(c);
  if (c.dump_sweep) {
    fmt::print("{}\n", to_json(spec).dump(2));
    return exit_ok;
  }
  // A dry run only lists configurations: an explicit --backend cuda needs no device for it.
  std::unique_ptr<backend> be;
  backend_kind kind = backend_kind::cpu;
  if (c.dry_run && c.backend != backend_choice::auto_) {
    kind = c.backend == backend_choice::cuda ? backend_kind::cuda : backend_kind::cpu;
    if (kind == backend_kind::cuda && !cuda_backend_built())
      throw input_error("this attnbench was built without CUDA: use --backend cpu");
  } else {
    be = open_backend(c.backend);
    kind = be->kind();
  }
  for (const auto& name : c.overrides.variant)
    if (!find_variant(name, kind)) {
      std::set<std::string> known;
      for (const auto& r : registry())
        if (r.backend == kind) known.insert(r.name);
      throw input_error(fmt::format("unknown variant '{}' for backend {} (known: {})", name,
                                    to_string(kind), fmt::join(known, ", ")));
    }
  const std::vector<configuration> configs = select(expand(spec, registry(), kind), c.filter, c.shard);
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
  if (const char* f = std::getenv("ATTNBENCH_FAULT")) {  // test hook: sticky:<name part> / failed:<...>
    const std::string s = f;
    opt.fault_sticky = s.starts_with("sticky:");
    opt.fault_name = s.substr(s.find(':') + 1);
  }
  if (c.profile) {
    const sweep_totals t = run_sweep(*be, configs, nullptr, opt);
    fmt::print(stderr, "attnbench: profiled {}, skipped {}, failed {}\n", t.profiled, t.skipped, t.failed);
    return t.sticky_error ? exit_sticky : exit_ok;
  }

  run_facts facts;
  facts.preset = spec.name;
  facts.command_line = command_line;
  facts.repetitions = opt.repetitions;
  facts.l2_flush = be->kind() == backend_kind::cuda && !c.hot;
  if (c.sharded) facts.shard = fmt::format("{}/{}", c.shard.index, c.shard.count);
  const json context = make_context(*be, !c.no_ceilings, facts);

  std::string out = c.out;
  if (out.empty()) {
    out = fmt::format("results/{}/{}-{}", slug(context.value("device", "unknown")), slug(spec.name),
                      short_commit());
    if (c.sharded) out += fmt::format("-shard{}of{}", c.shard.index, c.shard.count);
    out += ".json";
  }
  const std::string log_path = log_path_for(out);
  if (!c.resume && std::filesystem::exists(log_path))
    fmt::print(stderr, "attnbench: starting a fresh log {} (use --resume to continue it)\n", log_path);
  results_log log(log_path, c.resume);
  if (log.existing().torn_lines)
    fmt::print(stderr, "attnbench: ignored {} torn line(s) in {}\n", log.existing().torn_lines, log_path);

  const sweep_totals t = run_sweep(*be, configs, &log, opt);
  const log_contents all = read_results_log(log_path);
  write_json_file(out, assemble_results(context, all.entries));
  fmt::print(stderr, "attnbench: {} ok ({} above tolerance), {} skipped, {} failed, {} from the log\n", t.ok,
             t.above_tolerance, t.skipped, t.failed, t.resumed);
  fmt::print(stderr, "attnbench: wrote {} ({} entries)\n", out, all.entries.size());
  if (t.sticky_error) {
    fmt::print(stderr, "attnbench: error: sticky device error ({}); rerun with --resume to continue\n",
               t.sticky_message);
    return exit_sticky;
  }
  return exit_ok;
}

int cmd_run(const std::vector<std::string>& args) {
  const run_cli c = parse_run_cli(args);
  npy_array q = read_npy(c.q), k = read_npy(c.k), v = read_npy(c.v);
  if (q.shape.size() != 4)
    throw input_error(fmt::format("{}: Q must be [B, H, Nq, d], got shape {}", c.q, shape_string(q.shape)));
  if (k.shape.size() != 4)
    throw input_error(fmt::format("{}: K must be [B, Hkv, Nkv, d], got shape {}", c.k, shape_string(k.shape)));
  if (v.shape != k.shape)
    throw input_error(fmt::format("{}: V shape {} differs from K shape {}", c.v, shape_string(v.shape),
                                  shape_string(k.shape)));
  if (k.shape[0] != q.shape[0] || k.shape[3] != q.shape[3])
    throw input_error(fmt::format("{}: K shape {} does not match Q shape {} (B and d must agree)", c.k,
                                  shape_string(k.shape), shape_string(q.shape)));
  problem p;
  p.B = q.shape[0];
  p.H = q.shape[1];
  p.Nq = q.shape[2];
  p.d = q.shape[3];
  p.Hkv = k.shape[1];
  p.Nkv = k.shape[2];
  p.type = c.type;
  p.mask = c.mask;
  p.Br = c.block.br;
  p.Bc = c.block.bc;
  validate(p);
  std::unique_ptr<backend> be = open_backend(c.backend);
  const variant* row = find_variant(c.variant, be->kind());
  if (!row) {
    std::set<std::string> known;
    for (const auto& r : registry())
      if (r.backend == be->kind()) known.insert(r.name);
    throw input_error(fmt::format("unknown variant '{}' for backend {} (known: {})", c.variant,
                                  to_string(be->kind()), fmt::join(known, ", ")));
  }
  if (const support s = row->supports(p); !s.ok)
    throw input_error(fmt::format("{} does not support this problem: {}", c.variant, s.reason));
  host_inputs in{p, std::move(q.data), std::move(k.data), std::move(v.data)};
  for (auto* t : {&in.q, &in.k, &in.v})
    for (float& x : *t) x = round_to(p.type, x);
  std::unique_ptr<runner> r = row->make(p);
  r->set_inputs(in);
  r->poison_outputs();
  r->run();
  be->synchronize();
  host_outputs o = r->get_outputs();
  write_npy(c.out, {p.B, p.H, p.Nq, p.d}, o.o);
  if (!c.lse_out.empty()) {
    if (o.lse.empty()) throw input_error(fmt::format("{} writes no log-sum-exp (--lse)", c.variant));
    write_npy(c.lse_out, {p.B, p.H, p.Nq}, o.lse);
  }
  if (c.repeat > 0) {
    std::vector<double> ms;
    for (int i = 0; i < c.repeat; ++i) ms.push_back(be->timed_sample(*r, 1, {c.hot}) * 1e3);
    be->synchronize();
    fmt::print("median_ms={:.6f}\n", stats_of(ms).median);
  }
  return exit_ok;
}

int cmd_merge(const std::vector<std::string>& args) {
  const merge_cli c = parse_merge_cli(args);
  const json merged = merge_results(c.inputs);
  write_json_file(c.out, merged);
  fmt::print(stderr, "attnbench: merged {} files, {} entries into {}\n", c.inputs.size(),
             merged["benchmarks"].size(), c.out);
  return exit_ok;
}

backend_choice parse_only_backend(const std::vector<std::string>& args, const char* command) {
  backend_choice b = backend_choice::auto_;
  arg_walker w(args, command);
  while (w.next()) {
    if (w.name() == "--backend") b = parse_backend_choice(w.value());
    else w.unknown();
  }
  return b;
}

int cmd_ceilings(const std::vector<std::string>& args) {
  std::unique_ptr<backend> be = open_backend(parse_only_backend(args, "ceilings"));
  const json c = be->context(true);
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

}  // namespace

int cli_main(int argc, char** argv) {
  // Google Benchmark sees only the program name and its own --benchmark_* flags.
  std::vector<char*> gb_argv{argv[0]};
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.starts_with("--benchmark_") && a.find("--benchmark_out") != 0) gb_argv.push_back(argv[i]);
    else args.push_back(a);
  }
  try {
    int gb_argc = static_cast<int>(gb_argv.size());
    gb_argv.push_back(nullptr);
    benchmark::Initialize(&gb_argc, gb_argv.data());
    if (gb_argc > 1) throw input_error(fmt::format("unknown option '{}'", gb_argv[1]));
    if (args.empty())
      throw input_error("no command (expected list, sweep, run, merge, ceilings or backend; see attnbench --help)");
    if (args[0] == "help" || args[0] == "--help" || args[0] == "-h") {
      fmt::print("{}", usage_text);
      return exit_ok;
    }
    const std::string cmd = args[0];
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    if (std::find(rest.begin(), rest.end(), "--help") != rest.end()) {
      fmt::print("{}", usage_text);
      return exit_ok;
    }
    if (cmd == "list") return cmd_list(rest);
    if (cmd == "sweep") return cmd_sweep(rest, join_command_line(argc, argv));
    if (cmd == "run") return cmd_run(rest);
    if (cmd == "merge") return cmd_merge(rest);
    if (cmd == "ceilings") return cmd_ceilings(rest);
    if (cmd == "backend") return cmd_backend(rest);
    throw input_error(fmt::format("unknown command '{}' (expected list, sweep, run, merge, ceilings, backend)", cmd));
  } catch (const input_error& e) {
    fmt::print(stderr, "attnbench: error: {}\n", e.what());
    return exit_bad_input;
  } catch (const std::exception& e) {
    fmt::print(stderr, "attnbench: error: {}\n", e.what());
    return exit_runtime_error;
  }
}

}  // namespace attnbench

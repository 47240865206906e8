// `attnbench run`: one variant on .npy tensors (float32 or float16 values;
// with --dtype e4m3 also uint8 e4m3 codes with --scales).
#include <fmt/format.h>

#include "harness/cli/args.hpp"
#include "harness/cli/commands.hpp"
#include "harness/json_output.hpp"
#include "harness/npy.hpp"
#include "harness/safe_write.hpp"
#include "harness/tensors.hpp"
#include "harness/variant_select.hpp"

namespace attnbench {

run_cli parse_run_cli(const std::vector<std::string>& args) { return cli::parse_run_options(args).cli; }

namespace cli {

run_options parse_run_options(const std::vector<std::string>& args) {
  run_options o;
  run_cli& c = o.cli;
  arg_walker w(args, "run");
  while (w.next()) {
    const std::string& n = w.name();
    if (n == "--variant")
      c.variant = w.value();
    else if (n == "--backend")
      c.backend = parse_backend_choice(w.value());
    else if (n == "--q")
      c.q = w.value();
    else if (n == "--k")
      c.k = w.value();
    else if (n == "--v")
      c.v = w.value();
    else if (n == "--out")
      c.out = w.value();
    else if (n == "--lse")
      c.lse_out = w.value();
    else if (n == "--mask")
      c.mask = parse_mask(w.value());
    else if (n == "--block")
      c.block = parse_block(w.value());
    else if (n == "--dtype")
      c.type = parse_dtype(w.value());
    else if (n == "--scales")
      o.scales = parse_scales(w.value());
    else if (n == "--repeat")
      c.repeat = parse_count(w.value(), "--repeat");
    else if (n == "--hot") {
      w.no_value();
      c.hot = true;
    } else if (n == "--state")
      c.dstate = parse_positive(w.value(), "--state");
    else if (n == "--groups")
      c.ngroups = parse_positive(w.value(), "--groups");
    else if (n == "--pass")
      c.pass = parse_pass(w.value());
    else if (n == "--do")
      c.d_o = w.value();
    else if (n == "--dq")
      c.dq_out = w.value();
    else if (n == "--dk")
      c.dk_out = w.value();
    else if (n == "--dv")
      c.dv_out = w.value();
    else
      w.unknown();
  }
  for (auto [v, what] : {std::pair{&c.variant, "--variant"}, {&c.q, "--q"}, {&c.k, "--k"}, {&c.v, "--v"}})
    if (v->empty()) throw input_error(fmt::format("'attnbench run' needs {}", what));
  // The backward (docs/backward.md): dO in and the three gradients out; O (--out) optional.
  const std::pair<const std::string*, const char*> grads[] = {
      {&c.d_o, "--do"}, {&c.dq_out, "--dq"}, {&c.dk_out, "--dk"}, {&c.dv_out, "--dv"}};
  if (c.pass == pass_kind::fwd) {
    if (c.out.empty()) throw input_error("'attnbench run' needs --out");
    for (auto [v, what] : grads)
      if (!v->empty()) throw input_error(fmt::format("{} is for --pass bwd or fwd_bwd, not fwd", what));
  } else {
    for (auto [v, what] : grads)
      if (v->empty()) throw input_error(fmt::format("'attnbench run --pass {}' needs {}", to_string(c.pass), what));
  }
  if (o.scales && c.type != dtype::e4m3)
    throw input_error(
        fmt::format("--scales is for e4m3 code inputs, not --dtype {} (add --dtype e4m3)", to_string(c.type)));
  return o;
}

namespace {

// The one row --variant names on this backend (names checked by select_variants).
const variant& the_row(const std::string& name, backend_kind kind) {
  const auto rows = select_variants({parse_variant_item(name)}, registry(), kind);
  if (rows.size() == 1) return *rows.front();
  if (rows.empty()) throw input_error(fmt::format("variant '{}' has no {} row", name, to_string(kind)));
  throw input_error(fmt::format("--variant '{}' selects {} rows; 'attnbench run' takes one", name, rows.size()));
}

// The host inputs of the run: float32/float16 values rounded to p.type (e4m3:
// quantised per tensor, scale amax/448), or, with --dtype e4m3, uint8 e4m3
// codes times --scales. Every bad input is an input_error naming it.
host_inputs run_inputs(const problem& p, const run_options& o, npy_array q, npy_array k, npy_array v) {
  const run_cli& c = o.cli;
  const std::pair<const npy_array*, const std::string*> files[] = {{&q, &c.q}, {&k, &c.k}, {&v, &c.v}};
  const npy_array* codes = nullptr;
  const npy_array* values = nullptr;
  const std::string *codes_file = nullptr, *values_file = nullptr;
  for (auto [a, file] : files) {
    if (a->type == npy_dtype::uint8 && !codes) codes = a, codes_file = file;
    if (a->type != npy_dtype::uint8 && !values) values = a, values_file = file;
  }
  host_inputs in{p, {}, {}, {}};
  if (codes) {
    if (p.type != dtype::e4m3)
      throw input_error(
          fmt::format("{}: uint8 arrays are e4m3 codes, which need --dtype e4m3 and --scales q,k,v "
                      "(got --dtype {})",
                      *codes_file, to_string(p.type)));
    if (values)
      throw input_error(
          fmt::format("{}: {} while {} holds uint8 e4m3 codes (give all three as codes or all as "
                      "float32/float16)",
                      *values_file, to_string(values->type), *codes_file));
    if (!o.scales)
      throw input_error(
          fmt::format("{}: uint8 e4m3 codes need --scales q,k,v (the three per-tensor scales)", *codes_file));
    in.q = dequantize_e4m3(q.bytes, o.scales->q, c.q);
    in.k = dequantize_e4m3(k.bytes, o.scales->k, c.k);
    in.v = dequantize_e4m3(v.bytes, o.scales->v, c.v);
    in.scales = *o.scales;
    return in;
  }
  if (o.scales)
    throw input_error(
        fmt::format("--scales is for uint8 e4m3 codes; {} is {}, which attnbench quantises itself "
                    "(scale amax/448 per tensor)",
                    c.q, to_string(q.type)));
  in.q = std::move(q.data);
  in.k = std::move(k.data);
  in.v = std::move(v.data);
  round_inputs(in);
  return in;
}

}  // namespace

int cmd_run(const std::vector<std::string>& args) {
  const run_options opts = parse_run_options(args);
  const run_cli& c = opts.cli;
  if (!c.out.empty()) check_writable(c.out, "--out");
  if (!c.lse_out.empty()) check_writable(c.lse_out, "--lse");
  for (auto [file, what] : {std::pair{&c.dq_out, "--dq"}, {&c.dk_out, "--dk"}, {&c.dv_out, "--dv"}})
    if (!file->empty()) check_writable(*file, what);
  npy_array q = read_npy(c.q), k = read_npy(c.k), v = read_npy(c.v);
  if (q.shape.size() != 4)
    throw input_error(fmt::format("{}: Q must be [B, H, Nq, d], got shape {}", c.q, shape_string(q.shape)));
  if (k.shape.size() != 4)
    throw input_error(fmt::format("{}: K must be [B, Hkv, Nkv, d], got shape {}", c.k, shape_string(k.shape)));
  if (v.shape != k.shape)
    throw input_error(
        fmt::format("{}: V shape {} differs from K shape {}", c.v, shape_string(v.shape), shape_string(k.shape)));
  if (k.shape[0] != q.shape[0] || k.shape[3] != q.shape[3])
    throw input_error(fmt::format("{}: K shape {} does not match Q shape {} (B and d must agree)", c.k,
                                  shape_string(k.shape), shape_string(q.shape)));
  const problem p = [&] {
    try {
      problem made = make_problem(q.shape[0], q.shape[1], k.shape[1], q.shape[2], k.shape[2], q.shape[3], c.type,
                                  to_string(c.mask), c.block.br, c.block.bc);
      // The scan rows' state size and groups (docs/alternatives.md), range-checked before narrowing.
      made.dstate = static_cast<std::int16_t>(std::min<std::int64_t>(c.dstate, max_dstate + 1));
      made.ngroups = static_cast<std::int16_t>(std::min<std::int64_t>(c.ngroups, max_ngroups + 1));
      made.pass = c.pass;
      validate(made);
      return made;
    } catch (const input_error& e) {  // e.g. a zero-length axis: name the files it came from
      throw input_error(fmt::format("{} (inputs --q {}, --k {})", e.what(), c.q, c.k));
    }
  }();
  const bool codes_given = q.type == npy_dtype::uint8;
  const npy_dtype given = q.type;
  std::vector<std::int64_t> q_shape = q.shape;
  host_inputs in = run_inputs(p, opts, std::move(q), std::move(k), std::move(v));  // before the row: bad input first
  if (p.pass != pass_kind::fwd) {
    npy_array d_o = read_npy(c.d_o);
    if (d_o.shape != q_shape)
      throw input_error(
          fmt::format("{}: dO must have Q's shape {}, got {}", c.d_o, shape_string(q_shape), shape_string(d_o.shape)));
    if (d_o.type == npy_dtype::uint8)
      throw input_error(fmt::format("{}: dO must be float32 or float16, not uint8", c.d_o));
    for (float& x : d_o.data) x = round_to(output_dtype(p.type), x);
    in.d_o = std::move(d_o.data);
  }
  std::unique_ptr<backend> be = open_backend(c.backend);
  const variant& row = the_row(c.variant, be->kind());
  if (!c.lse_out.empty() && !row.writes_lse)  // before anything is written
    throw input_error(fmt::format("--lse {}: {} writes no log-sum-exp", c.lse_out, c.variant));
  if (const support s = row.supports(p); !s.ok)
    throw input_error(fmt::format("{} does not support this problem: {}", c.variant, s.reason));
  if (p.type == dtype::e4m3)  // the one-line summary: the scales the kernel's inputs carry, to 9 digits (exact)
    fmt::print("e4m3 scales q={:.9g} k={:.9g} v={:.9g} ({})\n", in.scales.q, in.scales.k, in.scales.v,
               codes_given ? "given: --scales"
                           : fmt::format("quantised from {} by attnbench: amax/448 per tensor", to_string(given)));
  std::unique_ptr<runner> r = row.make(p);
  r->set_inputs(in);
  r->poison_outputs();
  r->run();
  be->synchronize();
  host_outputs o = r->get_outputs();
  if (!c.out.empty()) write_npy(c.out, {p.B, p.H, p.Nq, p.d}, o.o);
  if (p.pass != pass_kind::fwd) {
    write_npy(c.dq_out, {p.B, p.H, p.Nq, p.d}, o.dq);
    write_npy(c.dk_out, {p.B, p.Hkv, p.Nkv, p.d}, o.dk);
    write_npy(c.dv_out, {p.B, p.Hkv, p.Nkv, p.d}, o.dv);
  }
  if (!c.lse_out.empty()) {
    if (o.lse.empty()) throw std::runtime_error(fmt::format("{} returned no log-sum-exp (--lse)", c.variant));
    write_npy(c.lse_out, {p.B, p.H, p.Nq}, o.lse);
  }
  if (c.repeat > 0) {
    timing_options timing;
    timing.hot = c.hot;
    std::vector<double> ms;
    for (int i = 0; i < c.repeat; ++i) ms.push_back(be->timed_sample(*r, 1, timing) * 1e3);
    be->synchronize();
    fmt::print("median_ms={:.6f}\n", stats_of(ms).median);
  }
  return exit_ok;
}

}  // namespace cli
}  // namespace attnbench

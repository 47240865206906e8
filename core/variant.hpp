// A variant is one declarative row: (algorithm, backend), what it can run
// (capabilities, checked uniformly by supports()), what else it needs
// (`check`: tile instantiations, launch limits), its analytical model and how
// to make a runner. Rows are aggregates written with designated initializers
// in their kernel family's folder; kernels/registry.cpp collects them. Tests,
// benchmarks, `attnbench list`, the presets and (through context.variants in
// the JSON) the charts read these rows; no other list of variants exists.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/problem.hpp"

namespace attnbench {

enum class backend_kind { cpu, cuda };
std::string_view to_string(backend_kind b);

// What a variant computes, and so which reference checks it. The scans (docs/alternatives.md)
// replace attention by a recurrence over the sequence: Mamba-1's selective scan, Mamba-2's chunked
// SSD, RWKV-4's WKV and RWKV-6's matrix-state WKV, on the attention problem of the same width. The
// approximations of softmax attention (linformer, performer, routing) are checked against the fp64
// evaluation of the same approximation (same seeded projections or features); their distance to
// exact softmax attention is measured beside it, as information. additive: Bahdanau's score
// v^T tanh(W q + U k) under a softmax, exact, checked against its own fp64 reference.
enum class attention_math { softmax, linear, selective_scan, wkv, wkv6, linformer, performer, additive, ssd, routing };
std::string_view to_string(attention_math m);
inline constexpr int attention_math_count = 10;
constexpr bool is_scan(attention_math m) {
  return m == attention_math::selective_scan || m == attention_math::wkv || m == attention_math::wkv6 ||
         m == attention_math::ssd;
}
// The scans that read the state axes (N = dstate, G = ngroups): their names and entries carry them.
constexpr bool reads_state_axes(attention_math m) {
  return m == attention_math::selective_scan || m == attention_math::ssd;
}
// Whether m approximates softmax attention (its entries carry approx_err_vs_exact).
bool approximates_softmax(attention_math m);

struct support {
  bool ok = true;
  std::string reason;  // why not, when !ok (one line)
  static support yes() { return {}; }
  static support no(std::string why) { return {false, std::move(why)}; }
};

// Per-tensor scales of e4m3 inputs: each value in q, k, v is an e4m3 code
// times its tensor's scale (core/fp8.hpp), so a backend recovers the codes
// exactly as e4m3_from_float(x / scale); 1 for every other dtype.
struct input_scales {
  float q = 1, k = 1, v = 1;
  bool operator==(const input_scales&) const = default;
};

// Inputs on the host, float32, already rounded to p.type (e4m3: code x
// scale) so every backend sees the same values. Layouts as in problem.hpp.
struct host_inputs {
  problem p;
  std::vector<float> q, k, v;
  input_scales scales;
  std::vector<float> d_o;  // dO, [B, H, Nq, d], rounded as q; empty for a forward-only run
};

struct host_outputs {
  std::vector<float> o;    // [B, H, Nq, d]
  std::vector<float> lse;  // [B, H, Nq] natural-log sum of exp of scaled scores; -inf for
                           // rows with no visible key. Empty when the variant writes none.
  // Gradients of a bwd / fwd_bwd run (docs/backward.md); empty for fwd.
  std::vector<float> dq;      // [B, H, Nq, d]
  std::vector<float> dk, dv;  // [B, Hkv, Nkv, d], summed over each KV head's query group
};

// One prepared run of one variant on one problem. Everything but run() is
// outside the timed region.
// One phase of a run (runner::phase_times).
struct phase_time {
  std::string name;
  double seconds = 0;
};

class runner {
 public:
  virtual ~runner() = default;
  // A backward runner (p.pass bwd) also runs its own forward here, once, untimed:
  // the O and lse its backward reads.
  virtual void set_inputs(const host_inputs& in) = 0;
  // Fills O (and lse) with NaN so unwritten elements show; p.pass bwd: the
  // gradients instead (O and lse stay the forward's).
  virtual void poison_outputs() = 0;
  // The timed work: one pass of p.pass (fwd: forward; bwd: the whole backward;
  // fwd_bwd: both back to back). CUDA runners enqueue on cuda::stream()
  // and do not synchronise.
  virtual void run() = 0;
  virtual host_outputs get_outputs() = 0;
  // Global-memory bytes moved by the last run() as counted by the kernel itself
  // (CPU backend); -1 when the backend does not count.
  virtual std::int64_t counted_bytes() const { return -1; }
  // Exponentials (exp, exp2) the last run() executed, as counted by the kernel
  // itself (CPU backend); -1 when the backend does not count.
  virtual std::int64_t counted_exps() const { return -1; }
  // Rows whose run() has phases users weigh apart (routing: routing, then attention): each
  // phase's seconds summed over every run() since construction, timed runs included, so
  // the entry splits the median time by their shares without a second timing loop.
  virtual std::vector<phase_time> phase_times() const { return {}; }
};

// The analytical model of one run (docs/models.md): computed in one walk.
struct model_figures {
  double flops = 0;           // useful FLOPs: 4 d per visible pair (softmax)
  double flops_executed = 0;  // FLOPs the algorithm performs, masked work included
  double bytes = 0;           // modeled global-memory traffic at the row's tile sizes
  // Exponentials (exp, exp2: the multi-function units' work on a GPU) the algorithm
  // executes: softmax one per computed score plus the per-row rescales of a tiled
  // kernel, linear attention's elu + 1 one per feature element (docs/models.md,
  // "Exponentials"). The third roof: exps / exp rate bounds the time from below.
  double exps = 0;
};

struct model_phase {
  std::string name;
  model_figures figures;
};

// Roles a row plays in sweeps and charts.
enum class tag {
  baseline,    // the speedup baseline of its backend (one row per backend)
  unfused,     // S and P materialised in memory
  fused,       // one pass, S and P never leave the chip
  tiled,       // Br x Bc change what runs (tile sweeps and charts)
  library,     // calls a vendor library
  decode,      // specialised for few queries against long keys
  gqa,         // specialised for grouped KV heads
  scan,        // a recurrence in place of attention (docs/alternatives.md): runs only where a group
               // names it (tag:scan or its name), not among "every row"
  comparison,  // not exact dot-product attention (the approximations, additive scoring): the
               // report sets it beside the exact rows; sweeps run it only where they name it
};
inline constexpr tag all_tags[] = {tag::baseline, tag::unfused, tag::fused, tag::tiled,     tag::library,
                                   tag::decode,   tag::gqa,     tag::scan,  tag::comparison};
std::string_view to_string(tag t);

// Mask features a row accepts (docs/masks.md): a problem's mask needs the
// features of its kind plus `global` when it has global tokens.
enum mask_feature : unsigned {
  mask_none = 1u << 0,
  mask_causal = 1u << 1,
  mask_local = 1u << 2,
  mask_global = 1u << 3,
  mask_all = mask_none | mask_causal | mask_local | mask_global,  // the interval masks
  // Sparse terms: claimed explicitly, never by default.
  mask_strided = 1u << 4,
  mask_random = 1u << 5,
  mask_layout = 1u << 6,
  mask_layout_heads = 1u << 7,  // a per-head layout: the row passes the query head
  mask_sparse_terms = mask_strided | mask_random | mask_layout | mask_layout_heads,
};
unsigned mask_features_of(const mask_spec& m);
std::vector<std::string_view> mask_feature_names(unsigned features);

// Passes a row runs (docs/backward.md).
enum pass_feature : unsigned {
  pass_fwd = 1u << 0,
  pass_bwd = 1u << 1,
  pass_fwd_bwd = 1u << 2,
  pass_all = pass_fwd | pass_bwd | pass_fwd_bwd,
};
unsigned pass_feature_of(pass_kind p);
std::vector<std::string_view> pass_feature_names(unsigned features);

// What a row declares it can run; supports() refuses the rest with the reason.
struct capabilities {
  std::vector<dtype> dtypes;
  unsigned masks = mask_all;
  std::vector<std::int64_t> head_dims;  // empty: any
  bool gqa = true;                      // Hkv < H accepted
  bool gqa_only = false;                // only Hkv < H (rows that exist for GQA)
  std::int64_t max_nq = 0;              // 0: no limit
  unsigned passes = pass_fwd;           // pass_feature bits
  unsigned bwd_masks = 0;               // the masks of its bwd and fwd_bwd when fewer; 0: `masks`
};

struct variant {
  std::string name;  // "flash2"; with the backend, the first two fields of benchmark names
  backend_kind backend = backend_kind::cpu;
  attention_math math = attention_math::softmax;
  std::string summary;  // one line for `attnbench list`
  bool writes_lse = false;
  capabilities caps;
  std::vector<tag> tags;
  // Beyond the capabilities: instantiated tiles, launch and memory limits.
  std::function<support(const problem&)> check;
  std::function<model_figures(const problem&)> model;
  // Rows with runner::phase_times: the model of each phase, in the same order; they sum to model.
  std::function<std::vector<model_phase>(const problem&)> model_phases;
  // Memory the run allocates on its backend (inputs, outputs, workspace), so
  // configurations that would not fit are skipped before allocating.
  std::function<std::int64_t(const problem&)> memory_bytes;
  // The runner; writes_lse is the row's (stated once, here).
  std::function<std::unique_ptr<runner>(const problem&, bool writes_lse)> make_runner;
  // The problem the runner really runs: rows with fixed tiles (split-KV decode)
  // rewrite Br/Bc so names say what ran; rows that take no tiles use untiled_problem
  // (below). Identity when unset.
  std::function<problem(const problem&)> resolve;

  support supports(const problem& p) const;  // capabilities, then check
  problem resolved(const problem& p) const { return resolve ? resolve(p) : p; }
  std::unique_ptr<runner> make(const problem& p) const { return make_runner(p, writes_lse); }
  bool has(tag t) const;
  std::string benchmark_name(const problem& p) const;
};

// `resolve` of the rows whose kernels take no Br x Bc (the unfused CUDA kernels, cuBLAS,
// cuDNN): named at default_tile x default_tile whatever --block lists, so a sweep over tiles
// runs them once instead of once per tile.
problem untiled_problem(const problem& p);

}  // namespace attnbench

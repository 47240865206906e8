// Row cudnn_sdpa of the cuda backend: cuDNN's fused scaled-dot-product
// attention forward, built through cudnn-frontend's header-only graph API.
//
// Idea: what a user gets from the vendor library instead of writing a kernel.
// One graph per problem (Q, K, V in p.type, fp32 softmax and accumulation,
// scale 1/sqrt(d), Stats = the natural-log log-sum-exp of the scaled scores,
// which is attnbench's lse as is); masks as the diagonal band, bottom-right
// aligned where Nq != Nkv, top-left where Nq = Nkv (the same pairs as cuDNN's
// plain causal: cudnn_band.hpp); GQA through K/V tensors of Hkv heads (cuDNN maps
// query head h to KV head h / (H / Hkv), as attnbench does). The graph is
// validated, lowered, planned (heuristics mode A) and built once per problem
// and process, the first time supports(), memory_bytes() or the runner asks,
// so graph build and plan compilation stay outside the timed region; run() is
// one cudnnBackendExecute on attnbench's stream. Predecessor: none of ours —
// the library baseline beside flash2 (and cublas_unfused, the unfused one).
// Expected bottleneck: tensor-core math for long sequences, K/V bandwidth for
// decode; the kernel is closed, so only the minimal-IO byte model is given.
// Backward (docs/backward.md): cudnn-frontend's sdpa_backward graph on Q, K, V,
// O, dO and Stats (the forward's, run by the same runner), writing dQ, dK, dV in p.type
// (GQA: dK and dV of Hkv heads, the group's sum reduced inside cuDNN); the
// cudnn_sdpa_deterministic row sets set_deterministic_algorithm (no atomic dQ accumulation)
// so the table shows what determinism costs. Both graphs are built outside the timed
// region; the runner's one workspace holds the larger of the two.
// Not covered: fp8 (attnbench has no fp8 dtype; cuDNN's sdpa_fp8 needs
// per-tensor scales the problem does not define), global tokens and sparse
// terms (strided, random, layout: no band).
//
// Built alone into libattnbench_cudnn.so (cudnn.cmake), the one object that needs
// libcudnn.so.9 and libnvrtc; the row itself (cudnn_rows.cpp, in the CUDA module) loads
// it on first use through attnbench_cudnn_sdpa_api() (cudnn_module_api.hpp), so a cuDNN
// that fails to load disables this row alone (docs/cudnn.md "Loading").
#include "kernels/cuda/cudnn/cudnn_module_api.hpp"

#include <cudnn_frontend.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_map>

#include "core/cuda/cuda_check.cuh"
#include "kernels/cuda/common/device_backward_runner.cuh"
#include "kernels/cuda/common/device_runner.cuh"
#include "kernels/cuda/cudnn/cudnn_band.hpp"

namespace attnbench {

namespace cuda {
namespace {

namespace fe = cudnn_frontend;

enum tensor_uid : fe::graph::Tensor_attributes::uid_t {
  uid_q = 1,
  uid_k,
  uid_v,
  uid_o,
  uid_stats,
  uid_d_o,
  uid_dq,
  uid_dk,
  uid_dv
};

// One handle for the process (creation initialises cuDNN: tens of ms); never
// destroyed, so no static destruction order issue at exit.
cudnnHandle_t cudnn_handle() {
  static cudnnHandle_t h = [] {
    cudnnHandle_t created = nullptr;
    if (const cudnnStatus_t s = cudnnCreate(&created); s != CUDNN_STATUS_SUCCESS)
      throw backend_error(fmt::format("cudnnCreate: {}", cudnnGetErrorString(s)));
    return created;
  }();
  return h;
}

// A built graph, or why cuDNN refused the problem.
struct built_graph {
  std::shared_ptr<fe::graph::Graph> graph;
  std::int64_t workspace_bytes = 0;
  std::string refusal;  // empty when built
};

// Which graph: the forward, or the backward with or without the deterministic algorithm.
enum class graph_kind { forward, backward, backward_deterministic };

// Everything a graph depends on (Br, Bc and the pass do not matter to cuDNN).
using graph_key = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t, int,
                             int, std::int64_t, std::int64_t, int>;
graph_key key_of(const problem& p, graph_kind kind) {
  return {p.B,
          p.H,
          p.Hkv,
          p.Nq,
          p.Nkv,
          p.d,
          static_cast<int>(p.type),
          static_cast<int>(p.mask.kind),
          p.mask.left,
          p.mask.right,
          static_cast<int>(kind)};
}

// The row's graph for p, described (no handle needed yet). Deviceless: the
// target's sm version and count, set before any node copies the context.
// An empty graph in the problem's io dtype with fp32 intermediates and compute. Deviceless
// when sm_version > 0 (else the target is asked of the device).
std::shared_ptr<fe::graph::Graph> new_graph(const problem& p, int sm_version, int sm_count) {
  auto g = std::make_shared<fe::graph::Graph>();
  if (sm_version > 0) g->set_sm_version(sm_version).set_sm_count(sm_count);
  g->set_io_data_type(p.type == dtype::bf16 ? fe::DataType_t::BFLOAT16 : fe::DataType_t::HALF)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  return g;
}

// A [B, heads, seq, d] input of g, packed.
std::shared_ptr<fe::graph::Tensor_attributes> packed_input(fe::graph::Graph& g, const problem& p, const char* name,
                                                           fe::graph::Tensor_attributes::uid_t uid, std::int64_t heads,
                                                           std::int64_t seq) {
  return g.tensor(fe::graph::Tensor_attributes()
                      .set_name(name)
                      .set_uid(uid)
                      .set_dim({p.B, heads, seq, p.d})
                      .set_stride({heads * seq * p.d, seq * p.d, p.d, 1}));
}

std::shared_ptr<fe::graph::Graph> describe_graph(const problem& p, int sm_version = 0, int sm_count = 0) {
  const cudnn_band band = cudnn_band_for(p);
  auto g = new_graph(p, sm_version, sm_count);
  auto q = packed_input(*g, p, "Q", uid_q, p.H, p.Nq);
  auto k = packed_input(*g, p, "K", uid_k, p.Hkv, p.Nkv);
  auto v = packed_input(*g, p, "V", uid_v, p.Hkv, p.Nkv);
  auto opts = fe::graph::SDPA_attributes()
                  .set_name("attnbench_sdpa")
                  .set_generate_stats(true)
                  .set_attn_scale(1.f / std::sqrt(static_cast<float>(p.d)));
  opts.set_diagonal_alignment(band.bottom_right ? fe::DiagonalAlignment_t::BOTTOM_RIGHT
                                                : fe::DiagonalAlignment_t::TOP_LEFT);
  // The bounds fit in int: cudnn_band_for sets them only below Nkv <= 2^24.
  if (band.right) opts.set_diagonal_band_right_bound(static_cast<int>(*band.right));
  if (band.left) opts.set_diagonal_band_left_bound(static_cast<int>(*band.left));
  auto [o, stats] = g->sdpa(q, k, v, opts);
  o->set_output(true).set_uid(uid_o).set_dim({p.B, p.H, p.Nq, p.d}).set_stride({p.H * p.Nq * p.d, p.Nq * p.d, p.d, 1});
  stats->set_output(true)
      .set_uid(uid_stats)
      .set_data_type(fe::DataType_t::FLOAT)
      .set_dim({p.B, p.H, p.Nq, 1})
      .set_stride({p.H * p.Nq, p.Nq, 1, 1});
  return g;
}

// The backward's graph for p: dQ, dK, dV from Q, K, V, O, dO and the forward's Stats.
std::shared_ptr<fe::graph::Graph> describe_backward_graph(const problem& p, bool deterministic, int sm_version = 0,
                                                          int sm_count = 0) {
  const cudnn_band band = cudnn_band_for(p);
  auto g = new_graph(p, sm_version, sm_count);
  auto q = packed_input(*g, p, "Q", uid_q, p.H, p.Nq);
  auto k = packed_input(*g, p, "K", uid_k, p.Hkv, p.Nkv);
  auto v = packed_input(*g, p, "V", uid_v, p.Hkv, p.Nkv);
  auto o = packed_input(*g, p, "O", uid_o, p.H, p.Nq);
  auto d_o = packed_input(*g, p, "dO", uid_d_o, p.H, p.Nq);
  auto stats = g->tensor(fe::graph::Tensor_attributes()
                             .set_name("Stats")
                             .set_uid(uid_stats)
                             .set_data_type(fe::DataType_t::FLOAT)
                             .set_dim({p.B, p.H, p.Nq, 1})
                             .set_stride({p.H * p.Nq, p.Nq, 1, 1}));
  auto opts = fe::graph::SDPA_backward_attributes()
                  .set_name("attnbench_sdpa_backward")
                  .set_attn_scale(1.f / std::sqrt(static_cast<float>(p.d)))
                  .set_deterministic_algorithm(deterministic);
  opts.set_diagonal_alignment(band.bottom_right ? fe::DiagonalAlignment_t::BOTTOM_RIGHT
                                                : fe::DiagonalAlignment_t::TOP_LEFT);
  if (band.right) opts.set_diagonal_band_right_bound(static_cast<int>(*band.right));
  if (band.left) opts.set_diagonal_band_left_bound(static_cast<int>(*band.left));
  auto [dq, dk, dv] = g->sdpa_backward(q, k, v, o, d_o, stats, opts);
  dq->set_output(true)
      .set_uid(uid_dq)
      .set_dim({p.B, p.H, p.Nq, p.d})
      .set_stride({p.H * p.Nq * p.d, p.Nq * p.d, p.d, 1});
  for (auto& [t, uid] : {std::pair{dk, uid_dk}, std::pair{dv, uid_dv}})
    t->set_output(true)
        .set_uid(uid)
        .set_dim({p.B, p.Hkv, p.Nkv, p.d})
        .set_stride({p.Hkv * p.Nkv * p.d, p.Nkv * p.d, p.d, 1});
  return g;
}

built_graph build_graph(const problem& p, graph_kind kind) {
  std::shared_ptr<fe::graph::Graph> g = kind == graph_kind::forward
                                            ? describe_graph(p)
                                            : describe_backward_graph(p, kind == graph_kind::backward_deterministic);
  cudnnHandle_t h = cudnn_handle();
  built_graph b;
  const auto refused = [&](const char* stage, fe::error_t e) {
    b.refusal = fmt::format("cuDNN {} {}: {}", cudnnGetVersion(), stage, e.get_message());
    return b;
  };
  if (auto e = g->validate(); e.is_bad()) return refused("validate", e);
  if (auto e = g->build_operation_graph(h); e.is_bad()) return refused("build_operation_graph", e);
  if (auto e = g->create_execution_plans({fe::HeurMode_t::A}); e.is_bad()) return refused("create_execution_plans", e);
  if (auto e = g->check_support(h); e.is_bad()) return refused("check_support", e);
  if (auto e = g->build_plans(h); e.is_bad()) return refused("build_plans", e);
  if (auto e = g->get_workspace_size(b.workspace_bytes); e.is_bad()) return refused("get_workspace_size", e);
  b.graph = std::move(g);
  return b;
}

// Graphs built in this process, per problem; kept for the process's life
// (a plan is host state plus its loaded kernels: small beside a sweep's data)
// and never destroyed, so no cuDNN descriptor is freed after CUDA's teardown at exit.
// Never throws: supports() and memory_bytes() run outside the harness's
// per-configuration error handling, so a failure (cudnnCreate, a CUDA error
// inside the build) becomes the problem's refusal, and the runner throws it.
std::shared_ptr<const built_graph> graph_for(const problem& p, graph_kind kind = graph_kind::forward) {
  static std::mutex mu;
  static auto* cache = new std::map<graph_key, std::shared_ptr<const built_graph>>;
  const std::lock_guard<std::mutex> lock(mu);
  auto [it, inserted] = cache->try_emplace(key_of(p, kind));
  if (inserted) {
    built_graph b;
    try {
      b = build_graph(p, kind);
    } catch (const std::exception& e) {
      b = built_graph{.refusal = std::string("cuDNN SDPA graph build failed: ") + e.what()};
    }
    it->second = std::make_shared<const built_graph>(std::move(b));
  }
  return it->second;
}

bool device_usable() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

// What cuDNN's band cannot express, decided without a device.
support static_support(const problem& p) {
  if (p.mask.global > 0)
    return support::no(fmt::format(
        "global tokens (global:{}) are no diagonal band: cuDNN's SDPA mask cannot express them", p.mask.global));
  if (p.mask.has_sparse())
    return support::no(fmt::format("sparse terms ({}) are no diagonal band: cuDNN's SDPA mask cannot express them",
                                   to_string(p.mask)));
  if (p.d % 8 != 0 || p.d > 256)
    return support::no(fmt::format("head dim d={}: cuDNN's SDPA needs a multiple of 8, at most 256", p.d));
  const cudnn_band band = cudnn_band_for(p);
  if (p.Nq > p.Nkv && (band.left || band.right))
    return support::no(fmt::format("Nq={} > Nkv={} with mask {}: cuDNN's bottom-right band needs Nq <= Nkv", p.Nq,
                                   p.Nkv, to_string(p.mask)));
  return support::yes();
}

graph_kind backward_kind(bool deterministic) {
  return deterministic ? graph_kind::backward_deterministic : graph_kind::backward;
}

// Static rules, then (with a device) cuDNN's own verdict on the built graphs of p.pass.
support cudnn_sdpa_support(const problem& p, bool deterministic) {
  if (support s = static_support(p); !s.ok) return s;
  if (!device_usable()) return support::yes();
  for (graph_kind kind : {graph_kind::forward, backward_kind(deterministic)}) {
    if (kind != graph_kind::forward && p.pass == pass_kind::fwd) break;
    const auto g = graph_for(p, kind);
    if (!g->refusal.empty()) return support::no(g->refusal);
  }
  return support::yes();
}

// The runner's one workspace: the forward's, or the larger of the forward's and the backward's.
std::int64_t workspace_bytes(const problem& p, bool deterministic) {
  if (!static_support(p).ok || !device_usable()) return 0;
  std::int64_t w = graph_for(p)->workspace_bytes;
  if (p.pass != pass_kind::fwd) w = std::max(w, graph_for(p, backward_kind(deterministic))->workspace_bytes);
  return w;
}

// The graph a runner executes: never one for a problem the band cannot express
// (the graph key holds no global or sparse terms).
std::shared_ptr<const built_graph> checked_graph_for(const problem& p, graph_kind kind = graph_kind::forward) {
  if (const support s = static_support(p); !s.ok) throw backend_error("cudnn_sdpa: " + s.reason);
  std::shared_ptr<const built_graph> g = graph_for(p, kind);
  if (!g->refusal.empty()) throw backend_error(g->refusal);
  return g;
}

void execute(const built_graph& g, std::unordered_map<fe::graph::Tensor_attributes::uid_t, void*>& pack,
             void* workspace) {
  cudnnHandle_t h = cudnn_handle();
  if (const cudnnStatus_t s = cudnnSetStream(h, stream()); s != CUDNN_STATUS_SUCCESS)
    throw backend_error(fmt::format("cudnnSetStream: {}", cudnnGetErrorString(s)));
  if (auto e = g.graph->execute(h, pack, workspace); e.is_bad())
    throw backend_error(fmt::format("cuDNN SDPA execute: {}", e.get_message()));
}

class cudnn_sdpa_runner : public device_runner {
 public:
  // The Stats output is always written (lse is the row's), so the base always
  // allocates it.
  explicit cudnn_sdpa_runner(const problem& p)
      : device_runner(p, true), graph_(checked_graph_for(p)), workspace_(graph_->workspace_bytes) {
    pack_ = {{uid_q, q_.get()}, {uid_k, k_.get()}, {uid_v, v_.get()}, {uid_o, o_.get()}, {uid_stats, lse_.get()}};
  }
  void run() override { execute(*graph_, pack_, workspace_.get()); }

 private:
  std::shared_ptr<const built_graph> graph_;
  device_buffer workspace_;
  std::unordered_map<fe::graph::Tensor_attributes::uid_t, void*> pack_;
};

// bwd / fwd_bwd: the forward graph (also run once, untimed, by set_inputs) and the
// backward graph. cuDNN writes dQ, dK and dV in full on every execute (its dQ accumulator
// lives in the workspace, which the frontend clears as part of execute), so runs do not
// accumulate (tests/gpu/test_cudnn_sdpa.cpp checks it on a device).
class cudnn_sdpa_backward_runner : public device_backward_runner {
 public:
  cudnn_sdpa_backward_runner(const problem& p, bool deterministic)
      : device_backward_runner(p, true),
        forward_(checked_graph_for(p)),
        backward_(checked_graph_for(p, backward_kind(deterministic))),
        workspace_(std::max(forward_->workspace_bytes, backward_->workspace_bytes)) {
    forward_pack_ = {
        {uid_q, q_.get()}, {uid_k, k_.get()}, {uid_v, v_.get()}, {uid_o, o_.get()}, {uid_stats, lse_.get()}};
    backward_pack_ = forward_pack_;
    backward_pack_.insert({{uid_d_o, d_o_.get()}, {uid_dq, dq_.get()}, {uid_dk, dk_.get()}, {uid_dv, dv_.get()}});
  }

 protected:
  void forward() override { execute(*forward_, forward_pack_, workspace_.get()); }
  void backward() override { execute(*backward_, backward_pack_, workspace_.get()); }

 private:
  std::shared_ptr<const built_graph> forward_, backward_;
  device_buffer workspace_;
  std::unordered_map<fe::graph::Tensor_attributes::uid_t, void*> forward_pack_, backward_pack_;
};

std::string validate_deviceless(const problem& p, int sm_version, int sm_count) {
  // bwd / fwd_bwd: the backward graph too (the forward's validates first).
  std::shared_ptr<fe::graph::Graph> g = describe_graph(p, sm_version, sm_count);
  if (fe::error_t e = g->validate(); e.is_bad()) return e.get_message();
  if (p.pass == pass_kind::fwd) return std::string();
  g = describe_backward_graph(p, false, sm_version, sm_count);
  fe::error_t e = g->validate();
  return e.is_good() ? std::string() : e.get_message();
}

std::unique_ptr<runner> make_runner(const problem& p, bool deterministic) {
  if (p.pass == pass_kind::fwd) return std::make_unique<cudnn_sdpa_runner>(p);
  return std::make_unique<cudnn_sdpa_backward_runner>(p, deterministic);
}

}  // namespace
}  // namespace cuda
}  // namespace attnbench

extern "C" const attnbench::cuda::cudnn_sdpa_api* attnbench_cudnn_sdpa_api() {
  namespace c = attnbench::cuda;
  static const c::cudnn_sdpa_api api{c::cudnn_sdpa_api_version, c::cudnn_sdpa_support, c::workspace_bytes,
                                     c::make_runner, c::validate_deviceless};
  return &api;
}

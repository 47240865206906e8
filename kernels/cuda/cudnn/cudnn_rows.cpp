// Row cudnn_sdpa of the cuda backend (what it runs: cudnn_sdpa.cpp). This file is in the
// CUDA module and needs no cuDNN: the implementation is libattnbench_cudnn.so, loaded with
// dlopen the first time the row is asked anything (supports, memory, a runner). When it
// does not load (no libcudnn.so.9, a broken wheel, a missing libnvrtc) the row refuses
// every problem with dlopen's reason and the other CUDA rows are untouched;
// `attnbench list` never loads it.
#include <dlfcn.h>

#include <fmt/format.h>

#include <cstdlib>
#include <string>

#include "kernels/cuda/cudnn/cudnn_module_api.hpp"
#include "kernels/cuda/cudnn/cudnn_sdpa.hpp"
#include "kernels/models/models.hpp"

namespace attnbench {

namespace cuda {
namespace {

struct cudnn_module {
  const cudnn_sdpa_api* api = nullptr;
  std::string path;
  std::string error;  // why api is null
};

// $ATTNBENCH_CUDNN_MODULE, else libattnbench_cudnn.so beside the object holding this code
// (the CUDA module, or a test executable that links the CUDA objects).
std::string module_path() {
  if (const char* p = std::getenv("ATTNBENCH_CUDNN_MODULE"); p && *p) return p;
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&module_path), &info) && info.dli_fname) {
    const std::string self = info.dli_fname;
    const auto slash = self.rfind('/');
    if (slash != std::string::npos) return self.substr(0, slash + 1) + ATTNBENCH_CUDNN_MODULE_NAME;
  }
  return ATTNBENCH_CUDNN_MODULE_NAME;
}

const cudnn_module& loaded_module() {
  static const cudnn_module m = [] {
    cudnn_module r;
    r.path = module_path();
    // RTLD_LOCAL: cuDNN's symbols stay private to it. Its own references into the CUDA
    // part (device_runner, stream) resolve against the CUDA module, loaded RTLD_GLOBAL
    // (harness/cuda_module.cpp), or the test executable, which exports them.
    void* h = ::dlopen(r.path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* e = ::dlerror();
      r.error = fmt::format("cuDNN did not load ({}: {}); cudnn_sdpa is disabled, the other rows are not affected",
                            r.path, e ? e : "unknown dlopen error");
      return r;
    }
    using entry_fn = const cudnn_sdpa_api* (*)();
    auto entry = reinterpret_cast<entry_fn>(::dlsym(h, "attnbench_cudnn_sdpa_api"));
    const cudnn_sdpa_api* api = entry ? entry() : nullptr;
    if (!api || api->version != cudnn_sdpa_api_version) {
      r.error = fmt::format(
          "{} is not this build's cuDNN module (entry point {}, version {}, expected {}); "
          "cudnn_sdpa is disabled",
          r.path, entry ? "found" : "missing", api ? api->version : 0, cudnn_sdpa_api_version);
      return r;
    }
    r.api = api;
    return r;
  }();
  return m;
}

template <bool deterministic>
support cudnn_sdpa_row_support(const problem& p) {
  const cudnn_module& m = loaded_module();
  return m.api ? m.api->supports(p, deterministic) : support::no(m.error);
}

std::int64_t workspace_bytes(const problem& p, bool deterministic) {
  const cudnn_module& m = loaded_module();
  return m.api ? m.api->workspace_bytes(p, deterministic) : 0;
}

// The row's memory: the forward's (inputs, O, lse, workspace); bwd / fwd_bwd add dO, dQ,
// dK and dV, and the workspace is the larger of the two graphs'.
template <bool deterministic>
std::int64_t row_memory_bytes(const problem& p) {
  const std::int64_t m = memory_bytes_cudnn_sdpa(p, workspace_bytes(p, deterministic));
  if (p.pass == pass_kind::fwd) return m;
  return m + dtype_bytes(p.type) * (2 * p.q_elems() + 2 * p.kv_elems());
}

template <bool deterministic>
std::unique_ptr<runner> make_row_runner(const problem& p, bool) {
  const cudnn_module& m = loaded_module();
  if (!m.api) throw backend_error(m.error);
  return m.api->make_runner(p, deterministic);
}

model_figures cudnn_sdpa_model(const problem& p) {
  problem f = p;
  f.pass = pass_kind::fwd;
  // exps: one per visible pair, the least a softmax kernel executes (cuDNN's tiling is closed).
  return model_for_pass(p,
                        model_figures{model_flops_softmax(f), model_flops_softmax(f), model_bytes_cudnn_sdpa_min_io(f),
                                      model_exps_min(f)},
                        model_cudnn_sdpa_backward_min_io);
}

}  // namespace

std::string cudnn_sdpa_validate_deviceless(const problem& p, int sm_version, int sm_count) {
  const cudnn_module& m = loaded_module();
  return m.api ? m.api->validate_deviceless(p, sm_version, sm_count) : m.error;
}

std::string cudnn_module_error() { return loaded_module().error; }

}  // namespace cuda

void add_cuda_rows_cudnn(std::vector<variant>& rows) {
  // Named first: GCC 12 -O3 warns (maybe-uninitialized) on a braced vector inside the braced row.
  const capabilities caps{
      .dtypes = {dtype::fp16, dtype::bf16}, .masks = mask_none | mask_causal | mask_local, .passes = pass_all};
  capabilities deterministic_caps = caps;
  deterministic_caps.passes = pass_bwd | pass_fwd_bwd;
  rows.push_back({
      .name = "cudnn_sdpa",
      .backend = backend_kind::cuda,
      .summary = "cuDNN fused SDPA forward and backward (cudnn-frontend graphs, the band mask bottom-right aligned "
                 "where Nq != Nkv; bytes: minimal IO)",
      .writes_lse = true,
      .caps = caps,
      .tags = {tag::fused, tag::library},
      .check = cuda::cudnn_sdpa_row_support<false>,
      .model = cuda::cudnn_sdpa_model,
      .memory_bytes = cuda::row_memory_bytes<false>,
      .make_runner = cuda::make_row_runner<false>,
      .resolve = untiled_problem,
  });
  // What determinism costs. The forward is cudnn_sdpa's, so only bwd and fwd_bwd.
  rows.push_back({
      .name = "cudnn_sdpa_deterministic",
      .backend = backend_kind::cuda,
      .summary = "cudnn_sdpa's backward with cuDNN's deterministic algorithm (set_deterministic_algorithm: no "
                 "atomic dQ accumulation)",
      .writes_lse = true,
      .caps = deterministic_caps,
      .tags = {tag::fused, tag::library},
      .check = cuda::cudnn_sdpa_row_support<true>,
      .model = cuda::cudnn_sdpa_model,
      .memory_bytes = cuda::row_memory_bytes<true>,
      .make_runner = cuda::make_row_runner<true>,
      .resolve = untiled_problem,
  });
}

}  // namespace attnbench

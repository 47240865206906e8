#include "harness/registry.hpp"

namespace attnbench {

std::string_view to_string(backend_kind b) { return b == backend_kind::cpu ? "cpu" : "cuda"; }

std::string variant::benchmark_name(const problem& p) const {
  return attnbench::benchmark_name(name, to_string(backend), p);
}

const std::vector<variant>& registry() {
  static const std::vector<variant> rows = [] {
    std::vector<variant> r;
    add_cpu_variants(r);
#ifdef ATTNBENCH_WITH_CUDA
    add_cuda_variants(r);
#endif
    return r;
  }();
  return rows;
}

const variant* find_variant(std::string_view name, backend_kind b) {
  for (const auto& v : registry())
    if (v.name == name && v.backend == b) return &v;
  return nullptr;
}

bool cuda_backend_built() {
#ifdef ATTNBENCH_WITH_CUDA
  return true;
#else
  return false;
#endif
}

}  // namespace attnbench

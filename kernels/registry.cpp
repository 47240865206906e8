#include "kernels/registry.hpp"

#include <set>
#include <stdexcept>
#include <string>

namespace attnbench {

#ifdef ATTNBENCH_WITH_CUDA
// CUDA families, each declaring its rows in its own folder.
void add_cuda_rows_unfused(std::vector<variant>& rows);  // naive, naive_gqa_expand, cublas_unfused
void add_cuda_rows_flash1(std::vector<variant>& rows);
void add_cuda_rows_linear(std::vector<variant>& rows);
void add_cuda_rows_flash2(std::vector<variant>& rows);  // flash2, sparse, flash2_gqa_packed, splitkv
void add_cuda_rows_flash3(std::vector<variant>& rows);  // flash3 (sm_90a)

void add_cuda_variants(std::vector<variant>& rows) {
  add_cuda_rows_unfused(rows);
  add_cuda_rows_flash1(rows);
  add_cuda_rows_linear(rows);
  add_cuda_rows_flash2(rows);
  add_cuda_rows_flash3(rows);
}
#endif

namespace {

// Rows are declarations: a malformed one is a programming error, caught the
// first time anything reads the registry (every test does).
void check_rows(const std::vector<variant>& rows) {
  std::set<std::string> names;
  int baselines[2] = {0, 0};
  for (const auto& v : rows) {
    const std::string key = v.name + "/" + std::string(to_string(v.backend));
    if (!names.insert(key).second) throw std::logic_error("registry: duplicate row " + key);
    if (!v.model || !v.memory_bytes || !v.make_runner || v.caps.dtypes.empty())
      throw std::logic_error("registry: row " + key + " lacks model, memory_bytes, make_runner or dtypes");
    if (v.has(tag::baseline)) ++baselines[static_cast<int>(v.backend)];
  }
  for (int b = 0; b < 2; ++b)
    if (baselines[b] > 1)
      throw std::logic_error("registry: more than one baseline row for one backend");
}

}  // namespace

const std::vector<variant>& registry() {
  static const std::vector<variant> rows = [] {
    std::vector<variant> r;
    add_cpu_variants(r);
#ifdef ATTNBENCH_WITH_CUDA
    add_cuda_variants(r);
#endif
    check_rows(r);
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

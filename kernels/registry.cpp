#include "kernels/registry.hpp"

#include <set>
#include <stdexcept>
#include <string>

namespace attnbench {

namespace {

// Rows of parts built separately (the CUDA backend: kernels/cuda/cuda_rows.cpp), registered
// at their static initialisation, before anything reads the registry.
std::vector<void (*)(std::vector<variant>&)>& row_providers() {
  static std::vector<void (*)(std::vector<variant>&)> p;
  return p;
}
bool registry_read = false;

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
    if (baselines[b] > 1) throw std::logic_error("registry: more than one baseline row for one backend");
}

}  // namespace

const std::vector<variant>& registry() {
  static const std::vector<variant> rows = [] {
    std::vector<variant> r;
    add_cpu_variants(r);
    for (auto* add_rows : row_providers()) add_rows(r);
    check_rows(r);
    registry_read = true;
    return r;
  }();
  return rows;
}

const variant* find_variant(std::string_view name, backend_kind b) {
  for (const auto& v : registry())
    if (v.name == name && v.backend == b) return &v;
  return nullptr;
}

void register_row_provider(void (*add_rows)(std::vector<variant>&)) {
  // Rows added after the first read would be missing from everything that read it.
  if (registry_read) throw std::logic_error("registry: a row provider registered after the registry was read");
  row_providers().push_back(add_rows);
}

std::size_t row_provider_count() { return row_providers().size(); }

void drop_row_providers(std::size_t keep) {
  if (registry_read) throw std::logic_error("registry: row providers dropped after the registry was read");
  if (keep < row_providers().size()) row_providers().resize(keep);
}

}  // namespace attnbench

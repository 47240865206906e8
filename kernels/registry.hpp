// The registry: every variant row of this build, in a fixed order (CPU rows,
// then CUDA rows when CUDA is built). Each kernel family declares its rows in
// its own folder; registry.cpp is the one place that lists the families.
#pragma once

#include <string_view>
#include <vector>

#include "core/variant.hpp"

namespace attnbench {

const std::vector<variant>& registry();
const variant* find_variant(std::string_view name, backend_kind b);  // nullptr if absent
bool cuda_backend_built();

// One provider per family (the only places rows are created).
void add_cpu_variants(std::vector<variant>& rows);
#ifdef ATTNBENCH_WITH_CUDA
void add_cuda_variants(std::vector<variant>& rows);
#endif

}  // namespace attnbench

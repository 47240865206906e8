// The registry: every variant row of this build, in a fixed order (CPU rows,
// then the CUDA rows when the CUDA part is linked in or loaded). Each kernel
// family declares its rows in its own folder; add_cpu_variants and
// kernels/cuda/cuda_rows.cpp are the places that list the families.
#pragma once

#include <string_view>
#include <vector>

#include "core/variant.hpp"

namespace attnbench {

const std::vector<variant>& registry();
const variant* find_variant(std::string_view name, backend_kind b);  // nullptr if absent
// A separately built part (the CUDA backend) adds its rows: called at that part's static
// initialisation; throws std::logic_error once the registry has been read.
void register_row_provider(void (*add_rows)(std::vector<variant>&));
// The providers registered so far, and dropping those after the first `keep` (a CUDA module
// refused after it loaded: harness/cuda_module.cpp). Both throw once the registry was read.
std::size_t row_provider_count();
void drop_row_providers(std::size_t keep);

// One provider per family (the only places rows are created).
void add_cpu_variants(std::vector<variant>& rows);
void add_cuda_variants(std::vector<variant>& rows);  // kernels/cuda/cuda_rows.cpp

}  // namespace attnbench

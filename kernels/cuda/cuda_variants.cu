// The CUDA rows of the registry. Each kernel family adds its own rows from
// its launch file; this is the one place that lists the families.
#include "harness/registry.hpp"

namespace attnbench {

void add_cuda_rows_unfused(std::vector<variant>& rows);  // naive, cublas_unfused, naive_gqa_expand
void add_cuda_rows_flash1(std::vector<variant>& rows);
void add_cuda_rows_linear(std::vector<variant>& rows);
void add_cuda_rows_flash2(std::vector<variant>& rows);   // flash2, sparse, flash2_gqa_packed, decode

void add_cuda_variants(std::vector<variant>& rows) {
  add_cuda_rows_unfused(rows);
  add_cuda_rows_flash1(rows);
  add_cuda_rows_linear(rows);
  add_cuda_rows_flash2(rows);
}

}  // namespace attnbench

// The one list of CUDA families: each declares its rows in its own folder, and this file adds
// them to the registry (kernels/registry.hpp) at static initialisation -- when the CUDA part
// is linked in (GPU tests, host emulator) or when the CUDA module is loaded
// (harness/cuda_module.hpp), so a CPU-only attnbench never maps a CUDA library.
#include "kernels/registry.hpp"

namespace attnbench {

void add_cuda_rows_unfused(std::vector<variant>& rows);  // naive, naive_gqa_expand, cublas_unfused
void add_cuda_rows_flash1(std::vector<variant>& rows);
void add_cuda_rows_linear(std::vector<variant>& rows);
void add_cuda_rows_flash2(std::vector<variant>& rows);          // flash2, sparse, flash2_gqa_packed, splitkv
void add_cuda_rows_flash3(std::vector<variant>& rows);          // flash3 (sm_90a)
void add_cuda_rows_selective_scan(std::vector<variant>& rows);  // scan/selective_scan.cu
void add_cuda_rows_ssd(std::vector<variant>& rows);             // scan/ssd.cu
void add_cuda_rows_wkv(std::vector<variant>& rows);             // scan/wkv.cu
void add_cuda_rows_wkv6(std::vector<variant>& rows);            // scan/wkv6.cu
void add_cuda_rows_performer(std::vector<variant>& rows);       // approx/performer.cu
void add_cuda_rows_routing(std::vector<variant>& rows);         // approx/routing.cu
void add_cuda_rows_additive(std::vector<variant>& rows);        // approx/additive.cu
void add_cuda_rows_linformer(std::vector<variant>& rows);       // approx/linformer.cu
#ifdef ATTNBENCH_WITH_CUDNN                            // kernels/cuda/cudnn/cudnn.cmake: only where cuDNN was found
void add_cuda_rows_cudnn(std::vector<variant>& rows);  // cudnn_sdpa
#endif

void add_cuda_variants(std::vector<variant>& rows) {
  add_cuda_rows_unfused(rows);
  add_cuda_rows_flash1(rows);
  add_cuda_rows_linear(rows);
  add_cuda_rows_flash2(rows);
  add_cuda_rows_flash3(rows);
  add_cuda_rows_selective_scan(rows);
  add_cuda_rows_ssd(rows);
  add_cuda_rows_wkv(rows);
  add_cuda_rows_wkv6(rows);
  add_cuda_rows_performer(rows);
  add_cuda_rows_routing(rows);
  add_cuda_rows_additive(rows);
  add_cuda_rows_linformer(rows);
#ifdef ATTNBENCH_WITH_CUDNN
  add_cuda_rows_cudnn(rows);
#endif
}

namespace {
const bool cuda_rows_registered = (register_row_provider(&add_cuda_variants), true);
}  // namespace

}  // namespace attnbench

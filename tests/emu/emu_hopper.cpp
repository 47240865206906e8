// Host twins of the Hopper PTX building blocks (include/attn_emu_hopper_ptx.hpp).
// First step: every function exists and reports "not implemented".
#include "tests/emu/include/attn_emu_hopper_ptx.hpp"

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstring>
#include <string>

namespace {
void not_implemented(const char* name) {
  const std::string s = std::string(name) + " not implemented";
  attnbench::emu::report(s.c_str());
}
}  // namespace

namespace attnbench::cuda::f3 {
void mbarrier_init(std::uint64_t*, std::uint32_t) { not_implemented("mbarrier_init"); }
void fence_mbarrier_init() { not_implemented("fence_mbarrier_init"); }
void mbarrier_arrive(std::uint64_t*) { not_implemented("mbarrier_arrive"); }
void mbarrier_arrive_expect_tx(std::uint64_t*, std::uint32_t) { not_implemented("mbarrier_arrive_expect_tx"); }
bool mbarrier_try_wait_parity(std::uint64_t*, std::uint32_t) {
  not_implemented("mbarrier_try_wait_parity");
  return true;
}
void tma_load_2d(void*, const CUtensorMap*, std::uint64_t*, int, int) { not_implemented("tma_load_2d"); }
void tma_load_3d(void*, const CUtensorMap*, std::uint64_t*, int, int, int) { not_implemented("tma_load_3d"); }
void tma_load_4d(void*, const CUtensorMap*, std::uint64_t*, int, int, int, int) { not_implemented("tma_load_4d"); }
void tma_prefetch_descriptor(const CUtensorMap*) { not_implemented("tma_prefetch_descriptor"); }
void fence_proxy_async_shared() { not_implemented("fence_proxy_async_shared"); }
void wgmma_fence() { not_implemented("wgmma_fence"); }
void wgmma_commit_group() { not_implemented("wgmma_commit_group"); }
void wgmma_wait_group_n(int) { not_implemented("wgmma_wait_group_n"); }
void wgmma_any(float*, int, const std::uint32_t*, std::uint64_t, std::uint64_t, int, bool, int) {
  not_implemented("wgmma_any");
}
void named_barrier_sync(int, int) { not_implemented("named_barrier_sync"); }
void named_barrier_arrive(int, int) { not_implemented("named_barrier_arrive"); }
bool elect_one_sync() {
  not_implemented("elect_one_sync");
  return false;
}
void setmaxnreg_any(int, bool) { not_implemented("setmaxnreg_any"); }
}  // namespace attnbench::cuda::f3

CUresult cuTensorMapEncodeTiled(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill) {
  attnbench::emu::report("cuTensorMapEncodeTiled not implemented");
  return CUDA_ERROR_NOT_SUPPORTED;
}
cudaError_t cudaGetDriverEntryPoint(const char* symbol, void** fn, unsigned long long,
                                    cudaDriverEntryPointQueryResult* status) {
  return cudaGetDriverEntryPointByVersion(symbol, fn, 12000, 0, status);
}
cudaError_t cudaGetDriverEntryPointByVersion(const char* symbol, void** fn, unsigned int, unsigned long long,
                                             cudaDriverEntryPointQueryResult* status) {
  if (!symbol || !fn) return cudaErrorInvalidValue;
  const bool found = std::strcmp(symbol, "cuTensorMapEncodeTiled") == 0;
  *fn = found ? reinterpret_cast<void*>(&cuTensorMapEncodeTiled) : nullptr;
  if (status) *status = found ? cudaDriverEntryPointSuccess : cudaDriverEntryPointSymbolNotFound;
  return cudaSuccess;
}
std::size_t __cvta_generic_to_shared(const void* p) {
  const auto* b = reinterpret_cast<const unsigned char*>(p);
  (void)b;
  attnbench::emu::report("__cvta_generic_to_shared not implemented");
  return 0;
}

// The per-row output check on the device (row_check.cuh): one kernel, no template
// (the output dtype is a run-time switch on a memory-bound loop).
#include <cstring>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "core/cuda/launch.cuh"
#include "kernels/cuda/reference/row_check.cuh"

namespace attnbench::cuda {

namespace {

constexpr int check_threads = 128;

__device__ inline float o_element(const void* o, dtype t, std::int64_t i) {
  const unsigned char* bytes = static_cast<const unsigned char*>(o);
  switch (t) {
    case dtype::fp16: {
      __half h;
      memcpy(&h, bytes + 2 * i, 2);
      return __half2float(h);
    }
    case dtype::bf16: {
      __nv_bfloat16 h;
      memcpy(&h, bytes + 2 * i, 2);
      return __bfloat162float(h);
    }
    default: return static_cast<const float*>(o)[i];
  }
}

__global__ void __launch_bounds__(check_threads) row_check_kernel(row_check_args a) {
  const std::int64_t r = std::int64_t(blockIdx.x) * check_threads + threadIdx.x;
  if (r >= a.rows) return;
  const std::int64_t base = r * a.d;
  const void* o = a.o;
  const dtype t = a.o_type;
  a.out[r] = row_verdict_of([o, t, base](std::int64_t x) { return o_element(o, t, base + x); }, a.d,
                            a.ref_o ? a.ref_o + base : nullptr, a.lse != nullptr, a.lse ? a.lse[r] : 0.f,
                            a.ref_lse != nullptr, a.ref_lse ? a.ref_lse[r] : 0.f, a.empty[r % a.hq] != 0);
}

}  // namespace

void row_check_device(const row_check_args& a, cudaStream_t st) {
  if (a.rows <= 0) return;
  const auto blocks = static_cast<unsigned>((a.rows + check_threads - 1) / check_threads);
  launch(row_check_kernel, blocks, check_threads, 0, st, a);
}

}  // namespace attnbench::cuda

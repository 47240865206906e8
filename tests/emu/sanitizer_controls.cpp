// Controls of the emulator's sanitizer builds (ATTNBENCH_EMU_SANITIZE only;
// tests/emu/README.md "Sanitizers"): tiny kernels, not project kernels, each
// with one defect the sanitizer of its build must report -- proof that the
// fiber runtime's annotations can fail -- and the clean twins that must not.
//
// ThreadSanitizer: thread 0 writes a shared-memory value, thread 1 reads it,
// ordered by __syncthreads, __syncwarp, or nothing. The emulator runs thread 0
// before thread 1, so without a barrier thread 1 still reads the written
// value: the NaN poison cannot see this missing barrier, only TSan can.
//   handoff_syncthreads, handoff_syncwarp   clean
//   handoff_none                            data race (a missing barrier)
//   handoff_shfl                            data race (a shuffle orders no memory)
// AddressSanitizer / UBSan:
//   global_in_bounds                        clean
//   global_past_end                         heap-buffer-overflow (one element past a cudaMalloc)
//   dyn_smem_past_launch                    use-after-poison (dynamic smem beyond the launch's size)
//   signed_overflow                         UBSan: signed integer overflow
#include <cuda_runtime.h>

#include <climits>
#include <cstdio>
#include <cstring>
#include <string>

#include "core/cuda/launch.cuh"

namespace attnbench::emu_controls {
namespace {

enum order : int { none, syncthreads, syncwarp, shfl };

__global__ void handoff_kernel(float* out, int m) {
  __shared__ float s[32];
  const int t = threadIdx.x;
  if (t == 0) s[0] = 42.f;  // writer
  if (m == syncthreads) __syncthreads();
  if (m == syncwarp) __syncwarp();
  if (m == shfl) (void)__shfl_sync(0xffffffffu, t, 0);
  if (t == 1) out[0] = s[0];  // reader: another CUDA thread of the CTA
}

__global__ void copy_kernel(const float* in, float* out, int n, int extra) {
  const int t = threadIdx.x;
  if (t < n + extra) out[t % n] = in[t];  // extra = 1: reads in[n]
}

__global__ void overflow_kernel(int* out, int base) {
  out[threadIdx.x] = base + static_cast<int>(threadIdx.x);  // base = INT_MAX: thread 1 overflows
}

int handoff(int m) {
  float out = 0.f;
  attnbench::cuda::launch(handoff_kernel, 1, 32, 0, nullptr, &out, m);
  std::printf("thread 1 read %g (the emulator ran the writer first)\n", out);
  return out == 42.f ? 0 : 1;
}

int global(int extra) {
  constexpr int n = 32;
  float *in = nullptr, *out = nullptr;
  if (cudaMalloc(&in, n * sizeof(float)) != cudaSuccess || cudaMalloc(&out, n * sizeof(float)) != cudaSuccess) return 1;
  cudaMemset(in, 0, n * sizeof(float));
  attnbench::cuda::launch(copy_kernel, 1, n + extra, 0, nullptr, in, out, n, extra);
  cudaFree(in);
  cudaFree(out);
  return 0;
}

}  // namespace
}  // namespace attnbench::emu_controls

// In attnbench::cuda, so that its extern __shared__ array is flash2's
// (attnbench::cuda::smem_raw, emu_fiber.cpp), whose bytes beyond the launch's
// dynamic size the ASan build poisons.
namespace attnbench::cuda {
__global__ void emu_ctl_dyn_smem_kernel(float* out, int n) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  float* s = reinterpret_cast<float*>(smem_raw);
  s[threadIdx.x] = 1.f;  // n + 1 threads, n floats of dynamic shared memory
  out[0] = static_cast<float>(n);
}
}  // namespace attnbench::cuda

int main(int argc, char** argv) {
  using namespace attnbench::emu_controls;
  const std::string m = argc == 2 ? argv[1] : "";
  if (m == "handoff_none") return handoff(none);
  if (m == "handoff_syncthreads") return handoff(syncthreads);
  if (m == "handoff_syncwarp") return handoff(syncwarp);
  if (m == "handoff_shfl") return handoff(shfl);
  if (m == "global_in_bounds") return global(0);
  if (m == "global_past_end") return global(1);
  if (m == "dyn_smem_past_launch") {
    float out = 0.f;
    attnbench::cuda::launch(attnbench::cuda::emu_ctl_dyn_smem_kernel, 1, 65, 64 * sizeof(float), nullptr, &out, 64);
    return 0;
  }
  if (m == "signed_overflow") {
    int out[2] = {0, 0};
    attnbench::cuda::launch(overflow_kernel, 1, 2, 0, nullptr, out, INT_MAX);
    std::printf("%d %d\n", out[0], out[1]);
    return 0;
  }
  std::fprintf(stderr,
               "usage: %s handoff_{none,syncthreads,syncwarp,shfl} | global_in_bounds | global_past_end | "
               "dyn_smem_past_launch | signed_overflow\n",
               argv[0]);
  return 2;
}

// The two small kernels around the flash2 backward's main kernel
// (flash2_bwd_kernel.cuh), both memory bound and without tensor cores (their
// names avoid "flash2", so the SASS check that demands HMMA in flash2 kernels
// does not apply to them):
//   attn_bwd_preprocess_kernel  one warp per query row: D = rowsum(dO * O) in
//       fp32, and the row of the fp32 dQ accumulator cleared (atomic mode), as FA2's
//       dot_do_o kernel does (so every backward starts from zero: no double
//       accumulation across timed runs). Reads 2 d elements, writes 4 + 4 d bytes per row.
//   attn_bwd_convert_dq_kernel  dQ = the accumulator rounded to p.type
//       (4 bytes read, one element written per element).
//   attn_bwd_sum_dq_kernel  (deterministic mode, after each wave of S key tiles) the
//       accumulator plus the wave's visited slices in ascending key-tile order, into the
//       accumulator or (last wave) into dQ.
//   attn_bwd_sum_dkv_kernel  (GQA groups split over CTAs) dK and dV = the sum of the splits'
//       fp32 parts in split order, rounded to p.type.
#include <cuda_runtime.h>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/dtype_traits.cuh"
#include "core/cuda/launch.cuh"
#include "kernels/cuda/flash2/flash2_bwd_params.hpp"

namespace attnbench::cuda {

namespace {

constexpr int kRowsPerBlock = 4;  // warps per block, one query row each

template <class T>
__global__ void attn_bwd_preprocess_kernel(const __grid_constant__ flash2_bwd_params prm) {
  const problem& p = prm.p;
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= p.B * p.H * p.Nq) return;  // whole warps leave together
  const T* const o = static_cast<const T*>(prm.o) + row * p.d;
  const T* const d_o = static_cast<const T*>(prm.d_o) + row * p.d;
  float* const acc = prm.dq_part ? nullptr : prm.dq_acc + row * p.d;  // deterministic: none
  float s = 0.f;
  for (std::int64_t c = lane; c < p.d; c += 32) {
    s += to_float(o[c]) * to_float(d_o[c]);
    if (acc) acc[c] = 0.f;
  }
  for (int m = 16; m > 0; m >>= 1) s += __shfl_xor_sync(0xffffffffu, s, m);
  if (lane == 0) prm.delta[row] = s;
}

template <class T>
__global__ void attn_bwd_convert_dq_kernel(const __grid_constant__ flash2_bwd_params prm) {
  const std::int64_t n = prm.p.q_elems();
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) static_cast<T*>(prm.dq)[i] = from_float<T>(prm.dq_acc[i]);
}

// Deterministic mode, after the wave of key tiles [kt_offset, kt_offset + dq_slices): the
// accumulator (from the second wave on) plus the wave's slices of the key tiles the element's
// query tile visits, in ascending key-tile order (the same order on every run), into the
// accumulator, or into dQ after the last wave.
template <class T>
__global__ void attn_bwd_sum_dq_kernel(const __grid_constant__ flash2_bwd_params prm) {
  const problem& p = prm.p;
  const std::int64_t n = p.q_elems();
  const std::int64_t x = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (x >= n) return;
  const std::int64_t qt = (x / p.d) % p.Nq / p.Br, end = prm.kt_offset + prm.dq_slices;
  const span64 s = kv_tiles(p, qt, tile_walk::causal_bound).first;  // bwd_visits(p, qt, kt)
  float sum = prm.kt_offset > 0 ? prm.dq_acc[x] : 0.f;
  for (std::int64_t kt = s.lo > prm.kt_offset ? s.lo : prm.kt_offset; kt < s.hi && kt < end; ++kt)
    sum += prm.dq_part[(kt - prm.kt_offset) * n + x];
  if (end >= bwd_kv_tiles(p))
    static_cast<T*>(prm.dq)[x] = from_float<T>(sum);
  else
    prm.dq_acc[x] = sum;
}

// Head splits: dK, dV = the splits' fp32 parts summed in split order (the same order on every
// run), per element of [2][B, Hkv, Nkv, d].
template <class T>
__global__ void attn_bwd_sum_dkv_kernel(const __grid_constant__ flash2_bwd_params prm) {
  const std::int64_t n = prm.p.kv_elems();
  const std::int64_t x = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (x >= 2 * n) return;
  float sum = 0.f;
  for (int s = 0; s < prm.head_splits; ++s) sum += prm.dkv_part[s * 2 * n + x];
  T* const out = x < n ? static_cast<T*>(prm.dk) + x : static_cast<T*>(prm.dv) + (x - n);
  *out = from_float<T>(sum);
}

using prepost_kernel = void (*)(flash2_bwd_params);

// One of a kernel's two instantiations by p.type (bf16, else fp16) over `blocks` blocks.
void launch_by_type(const flash2_bwd_params& prm, prepost_kernel bf16, prepost_kernel fp16, std::int64_t blocks,
                    int threads, void* stream) {
  launch(prm.p.type == dtype::bf16 ? bf16 : fp16, dim3(static_cast<unsigned>(blocks)), dim3(threads), 0,
         static_cast<cudaStream_t>(stream), prm);
  ATTN_CUDA_CHECK_LAUNCH();
}

constexpr int kElementThreads = 256;  // per block of the element-wise kernels

}  // namespace

void launch_flash2_bwd_sum_dkv(const flash2_bwd_params& prm, void* stream) {
  launch_by_type(prm, attn_bwd_sum_dkv_kernel<__nv_bfloat16>, attn_bwd_sum_dkv_kernel<__half>,
                 ceil_div(2 * prm.p.kv_elems(), kElementThreads), kElementThreads, stream);
}

void launch_flash2_bwd_sum_dq(const flash2_bwd_params& prm, void* stream) {
  launch_by_type(prm, attn_bwd_sum_dq_kernel<__nv_bfloat16>, attn_bwd_sum_dq_kernel<__half>,
                 ceil_div(prm.p.q_elems(), kElementThreads), kElementThreads, stream);
}

void launch_flash2_bwd_preprocess(const flash2_bwd_params& prm, void* stream) {
  const problem& p = prm.p;
  launch_by_type(prm, attn_bwd_preprocess_kernel<__nv_bfloat16>, attn_bwd_preprocess_kernel<__half>,
                 ceil_div(p.B * p.H * p.Nq, kRowsPerBlock), 32 * kRowsPerBlock, stream);
}

void launch_flash2_bwd_convert_dq(const flash2_bwd_params& prm, void* stream) {
  launch_by_type(prm, attn_bwd_convert_dq_kernel<__nv_bfloat16>, attn_bwd_convert_dq_kernel<__half>,
                 ceil_div(prm.p.q_elems(), kElementThreads), kElementThreads, stream);
}

}  // namespace attnbench::cuda

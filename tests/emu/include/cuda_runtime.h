// Host stand-in for <cuda_runtime.h> (tests/emu, ATTN_EMULATE): the kernels
// and their host code compile with the C++ compiler and run on the CPU.
//  * qualifiers become nothing; `__shared__` becomes `thread_local` (valid
//    both for block-scope arrays, which then have static storage shared by
//    the fibers of the CTA, and for `extern __shared__` declarations); the
//    runtime poisons the thread's whole static TLS block with 0xFF before
//    every CTA (emu_fiber.cpp), static and dynamic shared memory alike;
//  * threadIdx / blockIdx / blockDim / gridDim are globals the fiber
//    scheduler sets whenever it resumes a CUDA thread;
//  * __syncthreads and warp collectives are scheduling points of the fiber
//    runtime; device memory is host memory (cudaMalloc poisons it with 0xFF);
//    streams and events exist but everything runs at once, in order.
// Errors come back as CUDA reports them (cudaGetLastError after a bad launch).
#pragma once

#include <math.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __launch_bounds__(...)
#define __grid_constant__
#define __shared__ thread_local
#define __align__(n) __attribute__((aligned(n)))
#define __restrict__ __restrict
#define __CUDACC_EMULATED__ 1

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  constexpr dim3() = default;
  constexpr dim3(unsigned x_, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
extern dim3 threadIdx, blockIdx, blockDim, gridDim;
constexpr int warpSize = 32;

struct alignas(8) float2 {
  float x, y;
};
struct alignas(16) float4 {
  float x, y, z, w;
};
struct alignas(16) uint4 {
  unsigned x, y, z, w;
};
struct alignas(8) uint2 {
  unsigned x, y;
};
struct alignas(16) int4 {
  int x, y, z, w;
};
inline float2 make_float2(float x, float y) { return {x, y}; }
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return {x, y, z, w}; }

// CUDA's integer/float min and max overloads (usable unqualified in device code).
template <class A, class B, class = std::enable_if_t<std::is_arithmetic_v<A> && std::is_arithmetic_v<B>>>
inline std::common_type_t<A, B> min(A a, B b) {
  using C = std::common_type_t<A, B>;
  return static_cast<C>(b) < static_cast<C>(a) ? static_cast<C>(b) : static_cast<C>(a);
}
template <class A, class B, class = std::enable_if_t<std::is_arithmetic_v<A> && std::is_arithmetic_v<B>>>
inline std::common_type_t<A, B> max(A a, B b) {
  using C = std::common_type_t<A, B>;
  return static_cast<C>(a) < static_cast<C>(b) ? static_cast<C>(b) : static_cast<C>(a);
}
inline float __expf(float x) { return expf(x); }
inline float __logf(float x) { return logf(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __saturatef(float x) { return x < 0.f ? 0.f : (x > 1.f ? 1.f : x); }
// prmt.b32's default mode as CUDA's __byte_perm documents it (libdevice __nv_byte_perm): result byte n =
// byte (s >> 4n) & 7 of {x bytes 0-3, y bytes 4-7}; bit 3 of each selector and s's upper 16 bits unused.
inline unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s) {
  const std::uint64_t in = (static_cast<std::uint64_t>(y) << 32) | x;
  unsigned int r = 0;
  for (int n = 0; n < 4; ++n) r |= static_cast<unsigned int>((in >> (8 * ((s >> (4 * n)) & 7u))) & 0xFFu) << (8 * n);
  return r;
}

// ---- runtime API -------------------------------------------------------------
enum cudaError_t {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInitializationError = 3,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidPitchValue = 12,
  cudaErrorInvalidSymbol = 13,
  cudaErrorInvalidDevicePointer = 17,
  cudaErrorInvalidMemcpyDirection = 21,
  cudaErrorInvalidDeviceFunction = 98,
  cudaErrorNoDevice = 100,
  cudaErrorInvalidDevice = 101,
  cudaErrorECCUncorrectable = 214,
  cudaErrorInvalidResourceHandle = 400,
  cudaErrorNotReady = 600,
  cudaErrorIllegalAddress = 700,
  cudaErrorLaunchOutOfResources = 701,
  cudaErrorLaunchTimeout = 702,
  cudaErrorAssert = 710,
  cudaErrorHardwareStackError = 714,
  cudaErrorIllegalInstruction = 715,
  cudaErrorMisalignedAddress = 716,
  cudaErrorInvalidAddressSpace = 717,
  cudaErrorInvalidPc = 718,
  cudaErrorLaunchFailure = 719,
  cudaErrorUnknown = 999,
};
typedef struct CUstream_st* cudaStream_t;
typedef struct CUevent_st* cudaEvent_t;
enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4,
};
enum cudaDeviceAttr {
  cudaDevAttrMaxThreadsPerBlock = 1,
  cudaDevAttrMaxGridDimX = 5,
  cudaDevAttrMaxGridDimY = 6,
  cudaDevAttrMaxGridDimZ = 7,
  cudaDevAttrMaxSharedMemoryPerBlock = 8,
  cudaDevAttrClockRate = 13,
  cudaDevAttrMultiProcessorCount = 16,
  cudaDevAttrMemoryClockRate = 36,
  cudaDevAttrGlobalMemoryBusWidth = 37,
  cudaDevAttrL2CacheSize = 38,
  cudaDevAttrComputeCapabilityMajor = 75,
  cudaDevAttrComputeCapabilityMinor = 76,
  cudaDevAttrMaxSharedMemoryPerBlockOptin = 97,
};
enum cudaFuncAttribute {
  cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
  cudaFuncAttributePreferredSharedMemoryCarveout = 9,
};
#define cudaStreamDefault 0x00
#define cudaStreamNonBlocking 0x01
#define cudaEventDefault 0x00
#define cudaEventDisableTiming 0x02

cudaError_t cudaMalloc(void** p, std::size_t bytes);
template <class T>
inline cudaError_t cudaMalloc(T** p, std::size_t bytes) {
  return cudaMalloc(reinterpret_cast<void**>(p), bytes);
}
cudaError_t cudaFree(void* p);
cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t s = nullptr);
cudaError_t cudaMemset(void* p, int value, std::size_t bytes);
cudaError_t cudaMemsetAsync(void* p, int value, std::size_t bytes, cudaStream_t s = nullptr);
cudaError_t cudaMemset2DAsync(void* p, std::size_t pitch, int value, std::size_t width, std::size_t height,
                              cudaStream_t s = nullptr);
cudaError_t cudaStreamCreate(cudaStream_t* s);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned flags);
cudaError_t cudaStreamDestroy(cudaStream_t s);
cudaError_t cudaStreamSynchronize(cudaStream_t s);
cudaError_t cudaStreamQuery(cudaStream_t s);  // cudaErrorNotReady only on a hung emulated device
cudaError_t cudaDeviceSynchronize();
cudaError_t cudaEventCreate(cudaEvent_t* e);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned flags);
cudaError_t cudaEventDestroy(cudaEvent_t e);
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s = nullptr);
cudaError_t cudaEventSynchronize(cudaEvent_t e);
cudaError_t cudaEventQuery(cudaEvent_t e);
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end);
cudaError_t cudaGetDeviceCount(int* n);
cudaError_t cudaGetDevice(int* dev);
cudaError_t cudaSetDevice(int dev);
cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int dev);
cudaError_t cudaGetLastError();
cudaError_t cudaPeekAtLastError();
// Driver entry points (the Hopper kernels' cuTensorMapEncodeTiled): only that
// symbol exists here; anything else is cudaDriverEntryPointSymbolNotFound.
enum cudaDriverEntryPointQueryResult {
  cudaDriverEntryPointSuccess = 0,
  cudaDriverEntryPointSymbolNotFound = 1,
  cudaDriverEntryPointVersionNotSufficent = 2,
};
#define cudaEnableDefault 0x0
#define cudaEnableLegacyStream 0x1
#define cudaEnablePerThreadDefaultStream 0x2
cudaError_t cudaGetDriverEntryPoint(const char* symbol, void** funcPtr, unsigned long long flags,
                                    cudaDriverEntryPointQueryResult* driverStatus = nullptr);
cudaError_t cudaGetDriverEntryPointByVersion(const char* symbol, void** funcPtr, unsigned int cudaVersion,
                                             unsigned long long flags,
                                             cudaDriverEntryPointQueryResult* driverStatus = nullptr);
// cvta.to.shared: the shared-window address of a pointer into the dynamic
// shared memory (attnbench::cuda::smem_raw, 1024-byte aligned: address 0 is
// its first byte); anything else is reported and gives 0.
std::size_t __cvta_generic_to_shared(const void* p);
const char* cudaGetErrorString(cudaError_t e);
const char* cudaGetErrorName(cudaError_t e);

namespace attnbench::emu {
cudaError_t func_set_attribute(const void* fn, cudaFuncAttribute attr, int value);
// Device-side operations of the fiber runtime (emu_fiber.cpp).
void syncthreads();
// Every lane of the warp deposits `bytes` (<= 64) at its slot; returns the 32
// slots (64 bytes apart) once the whole warp has arrived at the same
// collective `op`; valid until the lane's next collective.
const unsigned char* warp_exchange(int op, unsigned mask, const void* mine, std::size_t bytes);
enum warp_op : int {
  op_syncwarp = 1,
  op_shfl,
  op_shfl_xor,
  op_shfl_down,
  op_shfl_up,
  op_vote,
  op_ldmatrix,
  op_mma,
  op_elect
};
void report(const char* what);  // an emulator error in the running kernel (counted, printed)

template <class T>
inline T shfl_any(int op, unsigned mask, T v, int arg, int width) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>);
  const unsigned char* s = warp_exchange(op, mask, &v, sizeof(T));
  const int lane = static_cast<int>(threadIdx.x % 32);  // 1-D blocks (as every kernel here)
  const int base = lane & ~(width - 1);
  int src = lane;
  switch (op) {
    case op_shfl: src = base + (arg & (width - 1)); break;
    case op_shfl_xor:
      src = lane ^ arg;
      if (src >= base + width) src = lane;
      break;
    case op_shfl_down:
      src = lane + arg;
      if (src >= base + width) src = lane;
      break;
    case op_shfl_up:
      src = lane - arg;
      if (src < base) src = lane;
      break;
  }
  T r;
  std::memcpy(&r, s + 64 * src, sizeof(T));
  return r;
}
inline unsigned ballot(unsigned mask, bool pred) {
  const int p = pred ? 1 : 0;
  const unsigned char* s = warp_exchange(op_vote, mask, &p, sizeof p);
  unsigned r = 0;
  for (int l = 0; l < 32; ++l)
    if (mask >> l & 1u) {
      int q;
      std::memcpy(&q, s + 64 * l, sizeof q);
      r |= static_cast<unsigned>(q != 0) << l;
    }
  return r;
}
}  // namespace attnbench::emu

#define __syncthreads() ::attnbench::emu::syncthreads()
inline void __syncwarp(unsigned mask = 0xffffffffu) {
  ::attnbench::emu::warp_exchange(::attnbench::emu::op_syncwarp, mask, nullptr, 0);
}
template <class T>
inline T __shfl_sync(unsigned mask, T v, int src, int width = 32) {
  return ::attnbench::emu::shfl_any(::attnbench::emu::op_shfl, mask, v, src, width);
}
template <class T>
inline T __shfl_xor_sync(unsigned mask, T v, int m, int width = 32) {
  return ::attnbench::emu::shfl_any(::attnbench::emu::op_shfl_xor, mask, v, m, width);
}
template <class T>
inline T __shfl_down_sync(unsigned mask, T v, unsigned d, int width = 32) {
  return ::attnbench::emu::shfl_any(::attnbench::emu::op_shfl_down, mask, v, static_cast<int>(d), width);
}
template <class T>
inline T __shfl_up_sync(unsigned mask, T v, unsigned d, int width = 32) {
  return ::attnbench::emu::shfl_any(::attnbench::emu::op_shfl_up, mask, v, static_cast<int>(d), width);
}
inline unsigned __ballot_sync(unsigned mask, int pred) { return ::attnbench::emu::ballot(mask, pred != 0); }
inline int __any_sync(unsigned mask, int pred) { return ::attnbench::emu::ballot(mask, pred != 0) != 0; }
inline int __all_sync(unsigned mask, int pred) { return ::attnbench::emu::ballot(mask, pred != 0) == mask; }
// atomicAdd on fp32 (the flash2 backward's dQ accumulator): CTAs run one after another and a
// fiber is switched only at a scheduling point, so a plain read-modify-write is atomic here.
// The emulator therefore cannot tell atomicAdd from a plain += (docs/backward.md).
inline float atomicAdd(float* address, float v) {
  const float old = *address;
  *address = old + v;
  return old;
}

template <class F>
inline cudaError_t cudaFuncSetAttribute(F* fn, cudaFuncAttribute attr, int value) {
  return ::attnbench::emu::func_set_attribute(reinterpret_cast<const void*>(fn), attr, value);
}

// Tests of the emulator itself (ctest emu.runtime): barriers order shared
// memory and a missing one shows poison, partial barriers and partial warp
// collectives are reported as deadlocks naming the kernel, warp collectives
// exchange per warp, launch checks as a device makes them, shared and
// cudaMalloc memory poisoned, and the cuBLAS stand-in's column-major
// semantics and documented argument checks.
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/cuda/launch.cuh"
#include "tests/emu/emu_control.hpp"

namespace attnbench::emu_test {
namespace {

using attnbench::cuda::launch;

__global__ void rotate_kernel(float* out, bool barrier) {
  __shared__ float s[256];
  const int t = threadIdx.x;
  s[t] = static_cast<float>(t);
  if (barrier) __syncthreads();
  out[blockIdx.x * blockDim.x + t] = s[(t + 1) % blockDim.x];
}

__global__ void partial_barrier_kernel(float* out) {
  if (threadIdx.x < 16) __syncthreads();
  out[threadIdx.x] = 1.f;
}

__global__ void partial_shuffle_kernel(float* out) {
  float v = static_cast<float>(threadIdx.x);
  if (threadIdx.x % 32 < 16) v = __shfl_xor_sync(0xffffffffu, v, 1);
  out[threadIdx.x] = v;
}

__global__ void collectives_kernel(float* sum, float* down, float* bcast, unsigned* ballot, int* any, int* all) {
  const int t = threadIdx.x, lane = t % 32;
  float v = static_cast<float>(t);
  for (int off = 16; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off);
  sum[t] = v;
  down[t] = __shfl_down_sync(0xffffffffu, static_cast<float>(t), 3);
  bcast[t] = __shfl_sync(0xffffffffu, static_cast<float>(t), 5);
  ballot[t] = __ballot_sync(0xffffffffu, lane % 3 == 0);
  any[t] = __any_sync(0xffffffffu, t == 40);
  all[t] = __all_sync(0xffffffffu, lane < 32);
}

__global__ void dyn_smem_kernel(float* out, int n) {
  extern __shared__ __align__(16) unsigned char emu_test_dyn[];
  float* s = reinterpret_cast<float*>(emu_test_dyn);
  if (threadIdx.x == 0) out[0] = s[n - 1];  // never written: poison
}

__global__ void noop_kernel() {}

std::string launch_error(void (*f)()) {  // the exception text of f, empty if none
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}

}  // namespace
}  // namespace attnbench::emu_test

// The extern __shared__ array dyn_smem_kernel declares (in this TU's unnamed namespace).
extern thread_local __attribute__((aligned(128))) unsigned char emu_test_dyn_storage[4096] __asm__(
    "_ZN9attnbench8emu_test12_GLOBAL__N_112emu_test_dynE");
thread_local __attribute__((aligned(128))) unsigned char emu_test_dyn_storage[4096];

namespace attnbench::emu_test {
namespace {

TEST(EmuRuntime, BarrierOrdersSharedMemory) {
  std::vector<float> out(2 * 128, -1.f);
  launch(rotate_kernel, 2, 128, 0, nullptr, out.data(), true);
  for (int b = 0; b < 2; ++b)
    for (int t = 0; t < 128; ++t) ASSERT_EQ(out[b * 128 + t], static_cast<float>((t + 1) % 128)) << t;
}

TEST(EmuRuntime, MissingBarrierReadsThePoison) {
  // Threads run in order up to a scheduling point: without the barrier,
  // thread t reads s[t + 1] before thread t + 1 wrote it -- the NaN poison.
  std::vector<float> out(128, -1.f);
  launch(rotate_kernel, 1, 128, 0, nullptr, out.data(), false);
  EXPECT_TRUE(std::isnan(out[0]));
  EXPECT_EQ(out[127], 0.f);  // s[0] was written before thread 127 ran
}

TEST(EmuRuntime, PartialBarrierIsADeadlockNamingTheKernel) {
  static std::vector<float> out(64);
  ::testing::internal::CaptureStderr();
  const std::string e = launch_error([] { launch(partial_barrier_kernel, 1, 64, 0, nullptr, out.data()); });
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(e.find("cudaErrorLaunchFailure"), std::string::npos) << e;
  EXPECT_NE(log.find("DEADLOCK in attnbench::emu_test::(anonymous namespace)::partial_barrier_kernel"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("16 wait at __syncthreads"), std::string::npos) << log;
  emu::reset_errors();
}

TEST(EmuRuntime, PartialWarpCollectiveIsADeadlock) {
  static std::vector<float> out(64);
  ::testing::internal::CaptureStderr();
  const std::string e = launch_error([] { launch(partial_shuffle_kernel, 1, 64, 0, nullptr, out.data()); });
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(e.find("cudaErrorLaunchFailure"), std::string::npos) << e;
  EXPECT_NE(log.find("partial_shuffle_kernel"), std::string::npos) << log;
  EXPECT_NE(log.find("lanes 0x0000ffff of 0xffffffff at __shfl_xor_sync"), std::string::npos) << log;
  emu::reset_errors();
}

TEST(EmuRuntime, WarpCollectivesExchangePerWarp) {
  constexpr int n = 64;
  std::vector<float> sum(n), down(n), bcast(n);
  std::vector<unsigned> ballot(n);
  std::vector<int> any(n), all(n);
  launch(collectives_kernel, 1, n, 0, nullptr, sum.data(), down.data(), bcast.data(), ballot.data(), any.data(),
         all.data());
  unsigned want_ballot = 0;
  for (int l = 0; l < 32; l += 3) want_ballot |= 1u << l;
  for (int t = 0; t < n; ++t) {
    const int w = t / 32, lane = t % 32;
    EXPECT_EQ(sum[t], static_cast<float>(32 * 32 * w + 31 * 16)) << t;  // sum over the warp's lanes
    EXPECT_EQ(down[t], static_cast<float>(lane + 3 < 32 ? t + 3 : t)) << t;
    EXPECT_EQ(bcast[t], static_cast<float>(32 * w + 5)) << t;
    EXPECT_EQ(ballot[t], want_ballot) << t;
    EXPECT_EQ(any[t], w == 1 ? 1 : 0) << t;
    EXPECT_EQ(all[t], 1) << t;
  }
}

std::string launch_with(dim3 g, dim3 b, std::size_t smem) {
  ::testing::internal::CaptureStderr();
  std::string e;
  try {
    launch(noop_kernel, g, b, smem, nullptr);
  } catch (const std::exception& x) {
    e = x.what();
  }
  ::testing::internal::GetCapturedStderr();
  emu::reset_errors();
  return e;
}

TEST(EmuRuntime, LaunchChecksAsADevice) {
  EXPECT_EQ(launch_with(dim3(70000, 1, 1), 32, 0), "");
  EXPECT_NE(launch_with(dim3(1, 65536, 1), 32, 0).find("cudaErrorInvalidConfiguration"), std::string::npos);
  EXPECT_NE(launch_with(dim3(1, 1, 65536), 32, 0).find("cudaErrorInvalidConfiguration"), std::string::npos);
  EXPECT_EQ(launch_with(dim3(1, 65535, 1), 1, 0), "");
  EXPECT_NE(launch_with(1, 1025, 0).find("cudaErrorInvalidConfiguration"), std::string::npos);
  EXPECT_NE(launch_with(1, dim3(32, 33), 0).find("cudaErrorInvalidConfiguration"), std::string::npos);
  EXPECT_EQ(launch_with(1, 1024, 0), "");
  EXPECT_EQ(launch_with(1, 32, 48 * 1024), "");
  // Above 48 KB only after cudaFuncSetAttribute(MaxDynamicSharedMemorySize), at most 227 KB.
  EXPECT_NE(launch_with(1, 32, 48 * 1024 + 16).find("cudaErrorInvalidValue"), std::string::npos);
  ASSERT_EQ(cudaFuncSetAttribute(noop_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 100 * 1024), cudaSuccess);
  EXPECT_EQ(launch_with(1, 32, 100 * 1024), "");
  EXPECT_NE(launch_with(1, 32, 100 * 1024 + 16).find("cudaErrorInvalidValue"), std::string::npos);
  EXPECT_EQ(cudaFuncSetAttribute(noop_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 232449),
            cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  ASSERT_EQ(cudaFuncSetAttribute(noop_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 232448), cudaSuccess);
  EXPECT_EQ(launch_with(1, 32, 232448), "");
  EXPECT_NE(launch_with(1, 32, 232449).find("cudaErrorInvalidValue"), std::string::npos);
}

TEST(EmuRuntime, DynamicSharedMemoryIsPoisoned) {
  float out = 0.f;
  launch(dyn_smem_kernel, 1, 32, 1024, nullptr, &out, 256);
  EXPECT_TRUE(std::isnan(out));
}

TEST(EmuRuntime, DeviceMemoryIsPoisonedAndBoundsChecked) {
  void* p = nullptr;
  ASSERT_EQ(cudaMalloc(&p, 64), cudaSuccess);
  float f;
  std::memcpy(&f, p, 4);
  EXPECT_TRUE(std::isnan(f));
  std::vector<unsigned char> host(128);
  EXPECT_EQ(cudaMemcpyAsync(p, host.data(), 64, cudaMemcpyHostToDevice, nullptr), cudaSuccess);
  EXPECT_EQ(cudaMemcpyAsync(p, host.data(), 65, cudaMemcpyHostToDevice, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpyAsync(host.data(), p, 128, cudaMemcpyDeviceToHost, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemsetAsync(static_cast<char*>(p) + 32, 0, 33, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemset2DAsync(p, 16, 0, 16, 5, nullptr), cudaErrorInvalidValue);  // 80 bytes
  EXPECT_EQ(cudaMemset2DAsync(p, 16, 0, 16, 4, nullptr), cudaSuccess);
  EXPECT_EQ(cudaFree(host.data()), cudaErrorInvalidValue);
  EXPECT_EQ(cudaFree(p), cudaSuccess);
  cudaGetLastError();
}

// ---- cuBLAS stand-in ---------------------------------------------------------------
// Column-major: element (r, c) of an ld-strided matrix at r + c * ld.
TEST(EmuCublas, ColumnMajorStridedBatchedGemm) {
  cublasHandle_t h = nullptr;
  ASSERT_EQ(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
  // Batch of 2: A_i is 3 x 2 (lda 4), op = T gives 2 x 3; B_i is 3 x 2 (ldb 3); C_i 2 x 2 (ldc 2).
  const int m = 2, n = 2, k = 3, lda = 4, ldb = 3, ldc = 2;
  std::vector<float> A(2 * 8), B(2 * 6), C(2 * 4, 7.f);
  for (int i = 0; i < 16; ++i) A[i] = static_cast<float>(i % 8 + 1 + (i / 8) * 10);
  for (int i = 0; i < 12; ++i) B[i] = static_cast<float>((i % 6) - 2 + (i / 6) * 3);
  const float alpha = 0.5f, beta = 2.f;
  ASSERT_EQ(cublasGemmStridedBatchedEx(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, A.data(), CUDA_R_32F, lda, 8,
                                       B.data(), CUDA_R_32F, ldb, 6, &beta, C.data(), CUDA_R_32F, ldc, 4, 2,
                                       CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
            CUBLAS_STATUS_SUCCESS);
  for (int b = 0; b < 2; ++b)
    for (int r = 0; r < m; ++r)
      for (int c = 0; c < n; ++c) {
        double want = 0;
        for (int t = 0; t < k; ++t) want += A[b * 8 + t + r * lda] * B[b * 6 + t + c * ldb];  // A^T(r, t) = A(t, r)
        EXPECT_DOUBLE_EQ(C[b * 4 + r + c * ldc], alpha * want + beta * 7.0) << b << " " << r << " " << c;
      }
  // beta = 0 never reads C (NaN there must not propagate); fp16 in, fp16 out.
  std::vector<__half> Ah(6), Bh(6), Ch(4, __float2half_rn(NAN));
  for (int i = 0; i < 6; ++i) Ah[i] = __float2half_rn(static_cast<float>(i)), Bh[i] = __float2half_rn(1.f);
  const float zero = 0.f, one = 1.f;
  ASSERT_EQ(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_T, 2, 2, 3, &one, Ah.data(), CUDA_R_16F, 2, 0,
                                       Bh.data(), CUDA_R_16F, 2, 0, &zero, Ch.data(), CUDA_R_16F, 2, 0, 1,
                                       CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
            CUBLAS_STATUS_SUCCESS);
  // A (2 x 3) = [[0 2 4] [1 3 5]], B^T (3 x 2) of ones: row sums.
  EXPECT_EQ(__half2float(Ch[0]), 6.f);
  EXPECT_EQ(__half2float(Ch[1]), 9.f);
  EXPECT_EQ(__half2float(Ch[2]), 6.f);
  EXPECT_EQ(__half2float(Ch[3]), 9.f);
  EXPECT_EQ(cublasDestroy(h), CUBLAS_STATUS_SUCCESS);
}

TEST(EmuCublas, RejectsWhatTheDocumentationRejects) {
  cublasHandle_t h = nullptr;
  ASSERT_EQ(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
  std::vector<float> A(64), B(64), C(64);
  const float one = 1.f;
  auto call = [&](cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, int lda, int ldb, int ldc,
                  long long sc, int batch, cudaDataType ct = CUDA_R_32F) {
    return cublasGemmStridedBatchedEx(h, ta, tb, m, n, k, &one, A.data(), CUDA_R_32F, lda, 0, B.data(), CUDA_R_32F, ldb,
                                      0, &one, C.data(), ct, ldc, sc, batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  };
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(call(CUBLAS_OP_N, CUBLAS_OP_N, 4, 2, 3, 4, 3, 4, 8, 2), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(call(CUBLAS_OP_N, CUBLAS_OP_N, 4, 2, 3, 3, 3, 4, 8, 1), CUBLAS_STATUS_INVALID_VALUE);  // lda < m
  EXPECT_EQ(call(CUBLAS_OP_T, CUBLAS_OP_N, 4, 2, 3, 3, 3, 4, 8, 1), CUBLAS_STATUS_SUCCESS);        // lda >= k
  EXPECT_EQ(call(CUBLAS_OP_T, CUBLAS_OP_N, 4, 2, 3, 2, 3, 4, 8, 1), CUBLAS_STATUS_INVALID_VALUE);  // lda < k
  EXPECT_EQ(call(CUBLAS_OP_N, CUBLAS_OP_N, 4, 2, 3, 4, 2, 4, 8, 1), CUBLAS_STATUS_INVALID_VALUE);  // ldb < k
  EXPECT_EQ(call(CUBLAS_OP_N, CUBLAS_OP_T, 4, 2, 3, 4, 1, 4, 8, 1), CUBLAS_STATUS_INVALID_VALUE);  // ldb < n
  EXPECT_EQ(call(CUBLAS_OP_N, CUBLAS_OP_N, 4, 2, 3, 4, 3, 3, 8, 1), CUBLAS_STATUS_INVALID_VALUE);  // ldc < m
  EXPECT_EQ(call(CUBLAS_OP_N, CUBLAS_OP_N, -1, 2, 3, 4, 3, 4, 8, 1), CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(call(CUBLAS_OP_N, CUBLAS_OP_N, 4, 2, 3, 4, 3, 4, 8, -1), CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(call(CUBLAS_OP_N, CUBLAS_OP_N, 4, 2, 3, 4, 3, 4, 7, 2), CUBLAS_STATUS_INVALID_VALUE);  // C_i overlap
  EXPECT_EQ(call(static_cast<cublasOperation_t>(5), CUBLAS_OP_N, 4, 2, 3, 4, 3, 4, 8, 1), CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(call(CUBLAS_OP_N, CUBLAS_OP_N, 4, 2, 3, 4, 3, 4, 8, 1, CUDA_R_16F), CUBLAS_STATUS_NOT_SUPPORTED);
  EXPECT_EQ(cublasGemmStridedBatchedEx(nullptr, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &one, A.data(), CUDA_R_32F, 1, 0,
                                       B.data(), CUDA_R_32F, 1, 0, &one, C.data(), CUDA_R_32F, 1, 0, 1,
                                       CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
            CUBLAS_STATUS_NOT_INITIALIZED);
  ::testing::internal::GetCapturedStderr();
  cublasDestroy(h);
}

}  // namespace
}  // namespace attnbench::emu_test

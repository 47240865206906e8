// Host stand-in for the cuBLAS calls attnbench makes (include/cublas_v2.h),
// written from the cuBLAS documentation (cublasGemmStridedBatchedEx):
//   for i < batchCount:  C_i = alpha * op(A_i) * op(B_i) + beta * C_i
// column-major, A_i = A + i * strideA (elements), op(A) m x k, op(B) k x n,
// C m x n; element (r, c) of a matrix with leading dimension ld is at r + c * ld.
// Rejected with CUBLAS_STATUS_INVALID_VALUE as documented: m, n, k or
// batchCount < 0; transa/transb not N, T or C; lda < max(1, m) (N) or
// max(1, k) (T/C); ldb < max(1, k) (N) or max(1, n) (T/C); ldc < max(1, m);
// alpha or beta null. The documentation leaves overlapping output matrices
// (|strideC| < ldc * n with batchCount > 1) undefined; the stand-in rejects
// them too (stricter than cuBLAS, so such a bug cannot pass here). Input
// strides may be anything (0 broadcasts). Types: CUBLAS_COMPUTE_32F (and
// _FAST_TF32 treated as 32F) with A, B in 16F, 16BF or 32F and C of the same
// type or 32F; alpha and beta are floats; products accumulate in fp32 in k
// order, C is rounded to its type (round to nearest even); with beta == 0 C
// is not read (as BLAS specifies). Anything else: CUBLAS_STATUS_NOT_SUPPORTED.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cstdio>
#include <vector>

struct cublasContext {
  cudaStream_t stream = nullptr;
};

namespace {

float load(cudaDataType t, const void* base, std::int64_t i) {
  switch (t) {
    case CUDA_R_16F: return __half2float(static_cast<const __half*>(base)[i]);
    case CUDA_R_16BF: return __bfloat162float(static_cast<const __nv_bfloat16*>(base)[i]);
    default: return static_cast<const float*>(base)[i];
  }
}
void store(cudaDataType t, void* base, std::int64_t i, float v) {
  switch (t) {
    case CUDA_R_16F: static_cast<__half*>(base)[i] = __float2half_rn(v); break;
    case CUDA_R_16BF: static_cast<__nv_bfloat16*>(base)[i] = __float2bfloat16_rn(v); break;
    default: static_cast<float*>(base)[i] = v; break;
  }
}
bool valid_op(cublasOperation_t o) { return o == CUBLAS_OP_N || o == CUBLAS_OP_T || o == CUBLAS_OP_C; }
bool input_type(cudaDataType t) { return t == CUDA_R_16F || t == CUDA_R_16BF || t == CUDA_R_32F; }
int imax(int a, int b) { return a > b ? a : b; }
cublasStatus_t invalid(const char* why) {
  std::fprintf(stderr, "EMU cuBLAS: CUBLAS_STATUS_INVALID_VALUE: %s\n", why);
  return CUBLAS_STATUS_INVALID_VALUE;
}

}  // namespace

cublasStatus_t cublasCreate(cublasHandle_t* handle) {
  if (!handle) return CUBLAS_STATUS_INVALID_VALUE;
  *handle = new cublasContext;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasDestroy(cublasHandle_t handle) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->stream = stream;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                          int m, int n, int k, const void* alpha, const void* A, cudaDataType Atype,
                                          int lda, long long strideA, const void* B, cudaDataType Btype, int ldb,
                                          long long strideB, const void* beta, void* C, cudaDataType Ctype, int ldc,
                                          long long strideC, int batchCount, cublasComputeType_t computeType,
                                          cublasGemmAlgo_t) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (m < 0 || n < 0 || k < 0 || batchCount < 0) return invalid("m, n, k or batchCount < 0");
  if (!valid_op(transa) || !valid_op(transb)) return invalid("transa/transb not N, T or C");
  const bool ta = transa != CUBLAS_OP_N, tb = transb != CUBLAS_OP_N;
  if (lda < imax(1, ta ? k : m)) return invalid(ta ? "lda < max(1, k) with op(A) = A^T" : "lda < max(1, m)");
  if (ldb < imax(1, tb ? n : k)) return invalid(tb ? "ldb < max(1, n) with op(B) = B^T" : "ldb < max(1, k)");
  if (ldc < imax(1, m)) return invalid("ldc < max(1, m)");
  if (!alpha || !beta) return invalid("alpha or beta is null");
  if (batchCount > 1 && n > 0 && m > 0 && (strideC < 0 ? -strideC : strideC) < static_cast<long long>(ldc) * n)
    return invalid("output matrices overlap (|strideC| < ldc * n): undefined in cuBLAS, rejected here");
  if (computeType != CUBLAS_COMPUTE_32F && computeType != CUBLAS_COMPUTE_32F_FAST_TF32)
    return CUBLAS_STATUS_NOT_SUPPORTED;
  if (!input_type(Atype) || Atype != Btype || !(Ctype == Atype || Ctype == CUDA_R_32F))
    return CUBLAS_STATUS_NOT_SUPPORTED;
  if (m == 0 || n == 0 || batchCount == 0) return CUBLAS_STATUS_SUCCESS;
  if (!A || !B || !C) return CUBLAS_STATUS_EXECUTION_FAILED;

  const float a = *static_cast<const float*>(alpha), b = *static_cast<const float*>(beta);
  std::vector<float> opa(static_cast<std::size_t>(m) * k), opb(static_cast<std::size_t>(k) * n);
  for (int bi = 0; bi < batchCount; ++bi) {
    const std::int64_t oa = bi * strideA, ob = bi * strideB, oc = bi * strideC;
    // op(A)(r, c) = A(r, c) or A(c, r); stored as opa[r * k + c] for a k-contiguous dot product.
    for (int r = 0; r < m; ++r)
      for (int c = 0; c < k; ++c)
        opa[static_cast<std::size_t>(r) * k + c] =
            load(Atype, A, oa + (ta ? c + static_cast<std::int64_t>(r) * lda : r + static_cast<std::int64_t>(c) * lda));
    for (int c = 0; c < n; ++c)
      for (int r = 0; r < k; ++r)
        opb[static_cast<std::size_t>(c) * k + r] =
            load(Btype, B, ob + (tb ? c + static_cast<std::int64_t>(r) * ldb : r + static_cast<std::int64_t>(c) * ldb));
    for (int c = 0; c < n; ++c)
      for (int r = 0; r < m; ++r) {
        float acc = 0.f;
        const float* x = &opa[static_cast<std::size_t>(r) * k];
        const float* y = &opb[static_cast<std::size_t>(c) * k];
        for (int t = 0; t < k; ++t) acc += x[t] * y[t];
        const std::int64_t ci = oc + r + static_cast<std::int64_t>(c) * ldc;
        const float v = b == 0.f ? a * acc : a * acc + b * load(Ctype, C, ci);
        store(Ctype, C, ci, v);
      }
  }
  return CUBLAS_STATUS_SUCCESS;
}

const char* cublasGetStatusName(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    default: return "CUBLAS_STATUS_UNKNOWN";
  }
}
const char* cublasGetStatusString(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "success";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "the library was not initialized";
    case CUBLAS_STATUS_INVALID_VALUE: return "an invalid numeric value was used as an argument";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "the functionality requested is not supported";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "the GPU program failed to execute";
    default: return "unknown error";
  }
}

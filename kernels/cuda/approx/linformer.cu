// linformer (cuda): Linformer (Wang et al. 2020), the math of the CPU row
// (kernels/cpu/linformer.cpp): K-bar = E^T K and V-bar = F^T V with the seeded [Nkv x k]
// projections E and F (k = min(256, Nkv), kernels/reference/approx_params.hpp), then softmax
// attention of Q over the k projected keys. Non-causal only: every projected key mixes every
// position, so no mask is claimed.
// Idea: both halves are GEMMs, so both run on cuBLAS. The projections are two strided-batched
// GEMMs, one batch entry per (batch, KV head) with E or F broadcast (stride 0), fp32 in and out
// (CUBLAS_COMPUTE_32F: no TF32); the attention is cublas_unfused's forward
// (kernels/cuda/unfused/unfused_rows.cu, enqueue_cublas_forward) on the reduced problem
// (Nkv = k, no mask): S = Q K-bar^T / sqrt(d) and P in global memory, which at k <= 256 is
// Nq x 256 per head, then O = P V-bar. GQA native: a KV head's query heads share K-bar, V-bar.
// Changed from the CPU row: the CPU runs flash2's fused loop over the k keys; here the reused
// kernel is the unfused one (S and P through memory, 8 bytes per score in fp32) because its
// launch function is shared and handles fp32 at any d; the projection pass is the same.
// Expected bottleneck: the projections at long Nkv (4 Nkv k d FLOPs per KV head against
// 4 Nq k d per query head for the attention; E and F read per (batch, KV head), 2 Nkv k fp32,
// from L2 after the first) and, for the attention at small Nq, S and P traffic.
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/cuda/launch_limits.hpp"
#include "kernels/cuda/common/device_runner.cuh"
#include "kernels/cuda/common/host_transfer.cuh"
#include "kernels/cuda/unfused/unfused_kernels.cuh"
#include "kernels/models/models.hpp"
#include "kernels/reference/approx_params.hpp"

namespace attnbench {

namespace cuda {
namespace {

class linformer_runner : public device_runner {
 public:
  linformer_runner(const problem& p, bool writes_lse)
      : device_runner(p, writes_lse),
        r_(linformer_reduced_problem(p)),
        kbar_(r_.kv_elems() * sizeof(float)),
        vbar_(r_.kv_elems() * sizeof(float)),
        s_(p.rows() * r_.Nkv * sizeof(float)),
        prob_(p.rows() * r_.Nkv * sizeof(float)) {
    linformer_projections pr = make_linformer_projections(p.Nkv, r_.Nkv);
    for (auto [buf, src] : {std::pair{&e_, &pr.e}, {&f_, &pr.f}}) {
      *buf = uploaded(*src);
    }
    cublas_handle();  // create outside the timed region
  }
  void run() override {
    project(k_.get(), e_.get<const float>(), kbar_.get<float>());
    project(v_.get(), f_.get<const float>(), vbar_.get<float>());
    enqueue_cublas_forward(
        r_, {q_.get(), kbar_.get(), vbar_.get(), s_.get<float>(), prob_.get(), o_.get(), lse_.get<float>()});
  }

 private:
  // Per (batch, KV head): out [k x d] = M^T X, X [Nkv x d] and M [Nkv x k] row-major. Column-major
  // view: out^T [d x k] = X^T [d x Nkv] * M [Nkv x k], M stored as M^T [k x Nkv] (ld k), hence op T.
  void project(const void* x, const float* m, float* out) {
    cublasHandle_t h = cublas_handle();
    ATTN_CUBLAS_CHECK(cublasSetStream(h, stream()));
    const int d = static_cast<int>(p_.d), k = static_cast<int>(r_.Nkv), n = static_cast<int>(p_.Nkv);
    const float one = 1.f, zero = 0.f;
    ATTN_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
        h, CUBLAS_OP_N, CUBLAS_OP_T, d, k, n, &one, x, CUDA_R_32F, d, static_cast<long long>(p_.Nkv) * p_.d, m,
        CUDA_R_32F, k, 0, &zero, out, CUDA_R_32F, d, static_cast<long long>(k) * d, static_cast<int>(p_.B * p_.Hkv),
        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }

  problem r_;                  // Nkv = k, no mask: what the attention runs
  device_buffer e_, f_;        // [Nkv x k] fp32
  device_buffer kbar_, vbar_;  // [B, Hkv, k, d] fp32
  device_buffer s_, prob_;     // [B*H*Nq, k] fp32
};

}  // namespace
}  // namespace cuda

void add_cuda_rows_linformer(std::vector<variant>& rows) {
  rows.push_back({
      .name = "linformer",
      .backend = backend_kind::cuda,
      .math = attention_math::linformer,
      .summary = "Linformer: K-bar = E^T K, V-bar = F^T V (seeded n x k, k = min(256, Nkv)) as cuBLAS batched "
                 "GEMMs, then cublas_unfused's forward over the k keys; no mask (E^T K mixes every position)",
      .writes_lse = true,
      .caps = {.dtypes = {dtype::fp32}, .masks = mask_none},
      .tags = {tag::unfused, tag::library, tag::comparison},
      .check =
          [](const problem& p) {
            if (p.group() * p.Nq > 0x7fffffffLL || p.Nkv > 0x7fffffffLL || p.B * p.Hkv > 0x7fffffffLL)
              return support::no("G*Nq, Nkv or B*Hkv exceeds cuBLAS's 32-bit dimensions");
            return cuda::check_launch({.grid_x = p.rows()}, "masked softmax");
          },
      .model = model_linformer_cuda,
      .memory_bytes = memory_bytes_linformer_cuda,
      .make_runner = [](const problem& p, bool lse) -> std::unique_ptr<runner> {
        return std::make_unique<cuda::linformer_runner>(p, lse);
      },
      .resolve = untiled_problem,
  });
}

}  // namespace attnbench

// Rows naive, naive_gqa_expand and cublas_unfused of the cuda backend.
//
// cublas_unfused is the baseline every chart compares against: what a framework
// without a fused kernel does. QK^T and PV run as cuBLAS strided-batched GEMMs
// (cublasGemmStridedBatchedEx, fp32 compute: tensor cores for fp16/bf16
// inputs, plain fp32 FMA for fp32 since CUBLAS_COMPUTE_32F excludes TF32),
// with the masked softmax kernel between them. GQA costs nothing extra: the
// G = H / Hkv query heads of one KV head are contiguous in Q, S, P and O, so
// one batch entry per (b, KV head) multiplies a [G*Nq x d] block by K^T.
// S is fp32 (cuBLAS writes fp32 C), P is in the input dtype (cuBLAS needs A
// and B of one type). Predecessor: naive, whose GEMMs are CUDA-core loops.
// Expected bottleneck: memory for all but tiny Nkv: S and P traffic (18 or 12
// bytes per score at fp16/fp32) against 4d FLOPs per score on tensor cores.
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>

#include "kernels/models/models.hpp"
#include "core/cuda/launch_limits.hpp"
#include "kernels/cuda/common/device_backward_runner.cuh"
#include "kernels/cuda/common/device_runner.cuh"
#include "kernels/cuda/unfused/unfused_kernels.cuh"

namespace attnbench {

namespace cuda {
namespace {

float softmax_scale(const problem& p) { return 1.f / std::sqrt(static_cast<float>(p.d)); }

class naive_runner : public device_runner {
 public:
  naive_runner(const problem& p, bool writes_lse)
      : device_runner(p, writes_lse), s_(p.rows() * p.Nkv * sizeof(float)), prob_(p.rows() * p.Nkv * sizeof(float)) {}
  void run() override { naive_passes(p_, q_.get(), k_.get(), v_.get()); }

 protected:
  void naive_passes(const problem& p, const void* q, const void* k, const void* v) {
    launch_naive_scores(p, q, k, s_.get<float>(), softmax_scale(p), stream());
    launch_masked_softmax(p, s_.get<float>(), prob_.get(), true, lse_.get<float>(), stream());
    launch_naive_output(p, prob_.get<float>(), v, o_.get(), stream());
  }
  device_buffer s_, prob_;
};

class naive_gqa_expand_runner : public naive_runner {
 public:
  naive_gqa_expand_runner(const problem& p, bool writes_lse)
      : naive_runner(p, writes_lse),
        kx_(p.B * p.H * p.Nkv * p.d * dtype_bytes(p.type)),
        vx_(p.B * p.H * p.Nkv * p.d * dtype_bytes(p.type)) {}
  void run() override {
    launch_expand_kv(p_, k_.get(), kx_.get(), stream());
    launch_expand_kv(p_, v_.get(), vx_.get(), stream());
    problem x = p_;
    x.Hkv = p_.H;
    naive_passes(x, q_.get(), kx_.get(), vx_.get());
  }

 private:
  device_buffer kx_, vx_;
};

}  // namespace

cublasHandle_t cublas_handle() {
  // One handle for the process (creation costs milliseconds); never destroyed
  // so no static destruction order issue at exit.
  static cublasHandle_t h = [] {
    cublasHandle_t created = nullptr;
    ATTN_CUBLAS_CHECK(cublasCreate(&created));
    return created;
  }();
  return h;
}

namespace {
cudaDataType cuda_type(dtype t) {
  switch (t) {
    case dtype::fp16: return CUDA_R_16F;
    case dtype::bf16: return CUDA_R_16BF;
    case dtype::e4m3: throw std::logic_error("cublas_unfused: no e4m3 path (the row does not claim e4m3)");
    case dtype::fp32: break;
  }
  return CUDA_R_32F;
}
}  // namespace

void enqueue_cublas_forward(const problem& p, const cublas_forward_buffers& f) {
  cublasHandle_t h = cublas_handle();
  ATTN_CUBLAS_CHECK(cublasSetStream(h, stream()));
  const cudaDataType t = cuda_type(p.type);
  const int g = static_cast<int>(p.group());
  const int nq = static_cast<int>(p.Nq), nkv = static_cast<int>(p.Nkv), d = static_cast<int>(p.d);
  const int batch = static_cast<int>(p.B * p.Hkv);
  const float alpha = softmax_scale(p), one = 1.f, zero = 0.f;
  // Column-major view: S^T [Nkv x G*Nq] = K [Nkv x d] * Q_group^T [d x G*Nq].
  ATTN_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
      h, CUBLAS_OP_T, CUBLAS_OP_N, nkv, g * nq, d, &alpha, f.k, t, d, static_cast<long long>(p.Nkv) * p.d, f.q, t, d,
      static_cast<long long>(g) * p.Nq * p.d, &zero, f.s, CUDA_R_32F, nkv, static_cast<long long>(g) * p.Nq * p.Nkv,
      batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  launch_masked_softmax(p, f.s, f.prob, false, f.lse, stream());
  // O^T [d x G*Nq] = V^T [d x Nkv] * P_group^T [Nkv x G*Nq].
  ATTN_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
      h, CUBLAS_OP_N, CUBLAS_OP_N, d, g * nq, nkv, &one, f.v, t, d, static_cast<long long>(p.Nkv) * p.d, f.prob, t, nkv,
      static_cast<long long>(g) * p.Nq * p.Nkv, &zero, f.o, t, d, static_cast<long long>(g) * p.Nq * p.d, batch,
      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

namespace {

class cublas_unfused_runner : public device_runner {
 public:
  cublas_unfused_runner(const problem& p, bool writes_lse)
      : device_runner(p, writes_lse),
        s_(p.rows() * p.Nkv * sizeof(float)),
        prob_(p.rows() * p.Nkv * dtype_bytes(p.type)) {
    cublas_handle();  // create outside the timed region
  }
  void run() override {
    enqueue_cublas_forward(p_,
                           {q_.get(), k_.get(), v_.get(), s_.get<float>(), prob_.get(), o_.get(), lse_.get<float>()});
  }

 private:
  device_buffer s_, prob_;
};

// The unfused backward, what autograd runs after an unfused forward: P is kept
// from the forward (saved, as autograd saves the softmax output; S is not
// recomputed), then four cuBLAS GEMMs around the softmax backward kernel:
//   dP = dO V^T (fp32, over S's buffer)   dV = P^T dO
//   dS = P (dP - D), D = rowsum(dO O)     dQ = scale dS K    dK = scale dS^T Q
// GQA: a KV head's G query heads are contiguous in Q, dO, P and dS, so dK and
// dV sum over the group inside one GEMM whose inner dimension is G*Nq (the
// group's rows): no expanded dK/dV, no reduction kernel, no extra bytes.
// dS has its own buffer (writing it over P would feed the next run's dV a dS).
// Expected bottleneck: memory, as the forward: dP written and read in fp32, P
// read twice, dS written and read twice, per score, against 8d FLOPs.
class cublas_unfused_backward_runner : public device_backward_runner {
 public:
  cublas_unfused_backward_runner(const problem& p, bool writes_lse)
      : device_backward_runner(p, writes_lse),
        s_(p.rows() * p.Nkv * sizeof(float)),
        prob_(p.rows() * p.Nkv * dtype_bytes(p.type)),
        ds_(p.rows() * p.Nkv * dtype_bytes(p.type)) {
    cublas_handle();
  }

 protected:
  void forward() override {
    enqueue_cublas_forward(p_,
                           {q_.get(), k_.get(), v_.get(), s_.get<float>(), prob_.get(), o_.get(), lse_.get<float>()});
  }
  void backward() override {
    const problem& p = p_;
    cublasHandle_t h = cublas_handle();
    ATTN_CUBLAS_CHECK(cublasSetStream(h, stream()));
    const cudaDataType t = cuda_type(p.type);
    const int nkv = static_cast<int>(p.Nkv), d = static_cast<int>(p.d);
    const int group_rows = static_cast<int>(p.group() * p.Nq);  // the inner dimension of dK and dV
    const int batch = static_cast<int>(p.B * p.Hkv);
    const long long q_stride = static_cast<long long>(group_rows) * p.d,
                    kv_stride = static_cast<long long>(p.Nkv) * p.d;
    const long long score_stride = static_cast<long long>(group_rows) * p.Nkv;
    const float scale = softmax_scale(p), one = 1.f, zero = 0.f;
    float* dp = s_.get<float>();
    // Column-major views of the row-major arrays (X [r x c] is X^T with ld c).
    // dP^T [Nkv x G*Nq] = V [Nkv x d] * dO_group^T [d x G*Nq].
    ATTN_CUBLAS_CHECK(cublasGemmStridedBatchedEx(h, CUBLAS_OP_T, CUBLAS_OP_N, nkv, group_rows, d, &one, v_.get(), t, d,
                                                 kv_stride, d_o_.get(), t, d, q_stride, &zero, dp, CUDA_R_32F, nkv,
                                                 score_stride, batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    // dV^T [d x Nkv] = dO_group^T [d x G*Nq] * P_group [G*Nq x Nkv].
    ATTN_CUBLAS_CHECK(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_T, d, nkv, group_rows, &one, d_o_.get(), t,
                                                 d, q_stride, prob_.get(), t, nkv, score_stride, &zero, dv_.get(), t, d,
                                                 kv_stride, batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    launch_softmax_backward(p, o_.get(), d_o_.get(), prob_.get(), dp, ds_.get(), stream());
    // dQ^T [d x G*Nq] = scale K^T [d x Nkv] * dS_group^T [Nkv x G*Nq].
    ATTN_CUBLAS_CHECK(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, d, group_rows, nkv, &scale, k_.get(), t,
                                                 d, kv_stride, ds_.get(), t, nkv, score_stride, &zero, dq_.get(), t, d,
                                                 q_stride, batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    // dK^T [d x Nkv] = scale Q_group^T [d x G*Nq] * dS_group [G*Nq x Nkv].
    ATTN_CUBLAS_CHECK(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_T, d, nkv, group_rows, &scale, q_.get(), t,
                                                 d, q_stride, ds_.get(), t, nkv, score_stride, &zero, dk_.get(), t, d,
                                                 kv_stride, batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }

 private:
  device_buffer s_, prob_, ds_;
};

// The unfused launches: tiled GEMMs (32 x 32 output tiles, one z per (b, h))
// and the masked softmax (one block per row).
support unfused_launches(const problem& p) {
  const support gemm = check_launch({.grid_x = ceil_div(std::max(p.Nkv, p.d), cuda_naive_tile),
                                     .grid_y = ceil_div(p.Nq, cuda_naive_tile),
                                     .grid_z = p.B * p.H},
                                    "naive GEMMs");
  if (!gemm.ok) return gemm;
  return check_launch({.grid_x = p.rows()}, "masked softmax");
}

}  // namespace
}  // namespace cuda

void add_cuda_rows_unfused(std::vector<variant>& rows) {
  const capabilities all_types{.dtypes = {dtype::fp32, dtype::fp16, dtype::bf16}};
  rows.push_back({
      .name = "naive",
      .backend = backend_kind::cuda,
      .summary = "QK^T, masked softmax, PV as three kernels; S and P (fp32) in global memory",
      .writes_lse = true,
      .caps = all_types,
      .tags = {tag::unfused},
      .check = cuda::unfused_launches,
      .model =
          [](const problem& p) {
            return model_figures{model_flops_softmax(p), model_flops_executed_naive(p), model_bytes_naive_cuda(p),
                                 model_exps_unfused_cuda(p)};
          },
      .memory_bytes = memory_bytes_naive_cuda,
      .make_runner = [](const problem& p, bool lse) -> std::unique_ptr<runner> {
        return std::make_unique<cuda::naive_runner>(p, lse);
      },
      .resolve = untiled_problem,
  });
  rows.push_back({
      .name = "naive_gqa_expand",
      .backend = backend_kind::cuda,
      .summary = "naive after copying K and V to all H query heads (GQA the wasteful way)",
      .writes_lse = true,
      .caps = {.dtypes = all_types.dtypes, .gqa_only = true},
      .tags = {tag::unfused, tag::gqa},
      .check = cuda::unfused_launches,
      .model =
          [](const problem& p) {
            return model_figures{model_flops_softmax(p), model_flops_executed_naive(p),
                                 model_bytes_naive_gqa_expand_cuda(p), model_exps_unfused_cuda(p)};
          },
      .memory_bytes = memory_bytes_naive_gqa_expand_cuda,
      .make_runner = [](const problem& p, bool lse) -> std::unique_ptr<runner> {
        return std::make_unique<cuda::naive_gqa_expand_runner>(p, lse);
      },
      .resolve = untiled_problem,
  });
  rows.push_back({
      .name = "cublas_unfused",
      .backend = backend_kind::cuda,
      .summary = "baseline: cuBLAS batched GEMMs (fp32 compute) around a masked softmax kernel; bwd: P kept, dP, dS "
                 "through memory, 4 GEMMs around a softmax-backward kernel",
      .writes_lse = true,
      .caps = {.dtypes = all_types.dtypes, .passes = pass_all},
      .tags = {tag::baseline, tag::unfused, tag::library},
      .check =
          [](const problem& p) {
            if (p.group() * p.Nq > 0x7fffffffLL || p.Nkv > 0x7fffffffLL)
              return support::no("G*Nq or Nkv exceeds cuBLAS's 32-bit dimensions");
            return cuda::check_launch({.grid_x = p.rows()}, "masked softmax");
          },
      .model =
          [](const problem& p) {
            problem f = p;
            f.pass = pass_kind::fwd;
            return model_for_pass(p,
                                  model_figures{model_flops_softmax(f), model_flops_executed_naive(f),
                                                model_bytes_cublas_unfused(f), model_exps_unfused_cuda(f)},
                                  model_cublas_unfused_backward);
          },
      .memory_bytes =
          [](const problem& p) {
            return p.pass == pass_kind::fwd ? memory_bytes_cublas_unfused(p) : memory_bytes_cublas_unfused_backward(p);
          },
      .make_runner = [](const problem& p, bool lse) -> std::unique_ptr<runner> {
        if (p.pass == pass_kind::fwd) return std::make_unique<cuda::cublas_unfused_runner>(p, lse);
        return std::make_unique<cuda::cublas_unfused_backward_runner>(p, lse);
      },
      .resolve = untiled_problem,
  });
}

}  // namespace attnbench

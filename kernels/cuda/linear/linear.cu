// linear (cuda): linear attention with the feature map phi(x) = elu(x) + 1.
//
// Idea: O_i = phi(q_i)^T S / phi(q_i)^T z with S = sum_j phi(k_j) v_j^T and
// z = sum_j phi(k_j), so the cost is linear in the sequence length. The state
// [S | z] (d x (d+1), fp32, V augmented with a ones column) is built per KV
// head by a state pass: one block per (b, KV head, 32 state rows) walks the
// keys in order, 16 at a time through shared memory. Non-causal: the final
// state feeds an output pass (one block per 16 query rows reads the state).
// Causal (a chunked scan, chunk = Bc): the state pass writes the exclusive
// prefix state at the start of every key chunk that holds query rows (the
// last chunk's keys are never needed), and the output pass adds, for each
// 16-row tile (in aligned positions i' = i + Nkv - Nq, so a tile sits in one
// chunk), the prefix state's contribution plus the masked intra-chunk block
// sum_{c*Bc <= j <= i'} (phi(q_i).phi(k_j)) [v_j, 1]. Rows with i' < 0 see no
// key and are written as zeros. Only masks none and causal exist for linear
// attention here. Predecessor: none on the GPU; this is the linear-time
// alternative the softmax variants are compared with. The two passes live in
// feature_passes.cuh (shared with performer's precomputed features); this file
// supplies phi, applied to Q and K as they load.
// Expected bottleneck: the state pass's sequential walk over the keys
// (B*Hkv*d/32 blocks, each d+1 FMAs per key per thread: latency-bound at small
// batch), then the output pass's state reads (4d(d+1) bytes per 16 rows).
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>

#include "core/mask.hpp"
#include "kernels/models/models.hpp"
#include "core/cuda/launch_limits.hpp"
#include "kernels/cuda/common/device_runner.cuh"
#include "core/cuda/dtype_traits.cuh"
#include "core/cuda/launch.cuh"
#include "kernels/cuda/linear/feature_passes.cuh"

namespace attnbench {

namespace cuda {
namespace {

using feature_passes::causal;
using feature_passes::imin;
using feature_passes::out_rows;

__device__ inline float phi(float x) { return x > 0.f ? x + 1.f : expf(x); }

// phi = elu + 1 applied to Q and K as they load: F = d features.
template <class T>
struct elu_map {
  const T *q, *k;
  std::int64_t F, Nq, Nkv;
  __device__ float key(std::int64_t kvz, std::int64_t j, std::int64_t f) const {
    return phi(to_float(k[(kvz * Nkv + j) * F + f]));
  }
  __device__ float query(std::int64_t z, std::int64_t i, std::int64_t f) const {
    return phi(to_float(q[(z * Nq + i) * F + f]));
  }
};

std::int64_t n_states(const problem& p) { return causal(p) ? num_kv_tiles(p) - linear_first_chunk(p) : 1; }

class linear_runner : public device_runner {
 public:
  linear_runner(const problem& p, bool writes_lse)
      : device_runner(p, writes_lse), state_(p.B * p.Hkv * n_states(p) * p.d * (p.d + 1) * sizeof(float)) {}
  void run() override {
    const problem& p = p_;
    const feature_passes::pass_args a{v_.get(), o_.get(), state_.get<float>(), n_states(p),
                                      causal(p) ? linear_first_chunk(p) : 0};
    const int threads = static_cast<int>(imin(256, (p.d + 1 + 31) / 32 * 32));
    const dim3 sgrid(static_cast<unsigned>(ceil_div(p.d, feature_passes::state_rows)),
                     static_cast<unsigned>(p.B * p.Hkv));
    const std::int64_t tiles = causal(p) ? ceil_div(p.Nkv, out_rows) : ceil_div(p.Nq, out_rows);
    const dim3 ogrid(static_cast<unsigned>(tiles), static_cast<unsigned>(p.B * p.H));
    dispatch_dtype(p.type, [&](auto t) {
      using T = decltype(t);
      const elu_map<T> map{static_cast<const T*>(q_.get()), static_cast<const T*>(k_.get()), p.d, p.Nq, p.Nkv};
      launch(feature_passes::feature_state_kernel<T, elu_map<T>>, sgrid, threads, 0, stream(), p, a, map);
      ATTN_CUDA_CHECK_LAUNCH();
      launch(feature_passes::feature_output_kernel<T, elu_map<T>>, ogrid, threads, 0, stream(), p, a, map);
      ATTN_CUDA_CHECK_LAUNCH();
    });
    if (causal(p) && p.Nq > p.Nkv) {  // rows with i' < 0 see no key: zeros
      const std::size_t e = dtype_bytes(p.type);
      ATTN_CUDA_CHECK(cudaMemset2DAsync(o_.get(), p.Nq * p.d * e, 0, (p.Nq - p.Nkv) * p.d * e, p.B * p.H, stream()));
    }
  }

 private:
  device_buffer state_;
};

}  // namespace
}  // namespace cuda

void add_cuda_rows_linear(std::vector<variant>& rows) {
  rows.push_back({
      .name = "linear",
      .backend = backend_kind::cuda,
      .math = attention_math::linear,
      .summary = "linear attention, phi = elu + 1: KV-state pass then output pass; causal: chunked scan",
      .writes_lse = false,
      .caps = {.dtypes = {dtype::fp32, dtype::fp16, dtype::bf16}, .masks = mask_none | mask_causal},
      .tags = {tag::fused},
      .check =
          [](const problem& p) {
            return cuda::check_launch(
                {.grid_x = ceil_div(p.mask.kind == mask_kind::causal ? p.Nkv : p.Nq, cuda_linear_rows),
                 .grid_y = p.B * p.H},
                "linear");
          },
      .model =
          [](const problem& p) {
            return model_figures{model_flops_linear(p), model_flops_executed_linear_cuda(p), model_bytes_linear_cuda(p),
                                 model_exps_linear_cuda(p)};
          },
      .memory_bytes = memory_bytes_linear_cuda,
      .make_runner = [](const problem& p, bool lse) -> std::unique_ptr<runner> {
        return std::make_unique<cuda::linear_runner>(p, lse);
      },
  });
}

}  // namespace attnbench

// Model of the cudnn_sdpa row (cuDNN's fused SDPA through cudnn-frontend).
// cuDNN's kernel is closed, so its tiling is not modelled: the byte model is
// the minimal IO of one forward pass (Q, K, V read once, O and the fp32 lse
// written once) and is labelled so; executed FLOPs are the useful ones.
#include "kernels/models/models.hpp"

#include "kernels/models/model_terms.hpp"

namespace attnbench {

using namespace model_terms;

double model_bytes_cudnn_sdpa_min_io(const problem& p) {
  return model_bytes_min(p) + static_cast<double>(f32 * p.rows());
}

std::int64_t memory_bytes_cudnn_sdpa(const problem& p, std::int64_t workspace_bytes) {
  return io_bytes(p) + f32 * p.rows() + workspace_bytes;
}

model_figures model_cudnn_sdpa_backward_min_io(const problem& p) {
  const std::int64_t e = es(p);
  const std::int64_t bytes = e * (3 * p.q_elems() + 2 * p.kv_elems()) + f32 * p.rows() +  // Q, O, dO, K, V, lse
                             e * (p.q_elems() + 2 * p.kv_elems());                        // dQ, dK, dV
  const double flops = model_flops_backward(p);
  return {flops, flops, static_cast<double>(bytes), model_exps_min(p)};
}

}  // namespace attnbench

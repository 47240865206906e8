// linear (CPU): linear attention with the elu + 1 feature map phi
// (Katharopoulos et al. 2020): O_i = phi(q_i)^T S / phi(q_i)^T z with
// S = sum_j phi(k_j) v_j^T (d x d) and z = sum_j phi(k_j) over the keys
// visible to i. Changed from the softmax ladder: no softmax, so the sum over
// keys factors through a d x d state and the cost is linear in N.
// The passes (a state pass per (batch, KV head); non-causal, an output pass
// per (query tile, batch, head); causal, the chunked prefix-state form) are
// feature_map_runner's; this row's feature map is elu + 1, element by
// element (F = d), one exp per element. Other masks are not supported.
// Expected bottleneck: memory for d <= 64 (the state products are d x d per
// row, about 2d FLOPs per byte of Q/O); math for larger d.
#include "kernels/cpu/feature_map_runner.hpp"

namespace attnbench::cpu {

namespace {

class linear_runner final : public feature_map_runner {
 public:
  linear_runner(const problem& p, bool writes_lse) : feature_map_runner(p, writes_lse, p.d, 0) {}

 private:
  void begin_state(std::int64_t, std::int64_t, float*, float*) override {}
  void begin_output(std::int64_t, std::int64_t, float*) override {}
  void map_queries(const float* global, std::int64_t rows, float* u, float*) override { elu1_rows(global, rows, u); }
  void map_keys(const float* global, std::int64_t rows, float* u, float*) override { elu1_rows(global, rows, u); }
  void elu1_rows(const float* global, std::int64_t rows, float* u) {
    load(u, global, rows * p_.d, bytes_);
    elu1(u, rows * p_.d, exps_);
  }
};

}  // namespace

std::unique_ptr<runner> make_linear_runner(const problem& p, bool writes_lse) {
  return std::make_unique<linear_runner>(p, writes_lse);
}

}  // namespace attnbench::cpu

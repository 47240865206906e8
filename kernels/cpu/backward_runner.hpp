// The CPU runner of a bwd / fwd_bwd run (docs/backward.md): the arrays of
// cpu_runner plus dO and the three gradients. set_inputs runs the algorithm's
// own forward once, untimed (the O and lse its backward reads); run() is the
// whole backward (p.pass bwd) or the forward then the backward (fwd_bwd), each
// counting its bytes and exps. Gradients are written in full by every run
// (nothing accumulates across runs), so no reset is needed between runs.
#pragma once

#include "kernels/cpu/cpu_common.hpp"

namespace attnbench::cpu {

class cpu_backward_runner : public cpu_runner {
 public:
  cpu_backward_runner(const problem& p, bool writes_lse);
  void set_inputs(const host_inputs& in) override;
  void poison_outputs() override;  // bwd: the gradients; fwd_bwd: O and lse too
  void run() override;
  host_outputs get_outputs() override;

 protected:
  virtual void forward() = 0;   // O (and lse) from q_, k_, v_; adds to the counters
  virtual void backward() = 0;  // dq_, dk_, dv_ from q_, k_, v_, o_, lse_, d_o_; adds to the counters
  std::vector<float> d_o_, dq_, dk_, dv_;
};

}  // namespace attnbench::cpu

#include "kernels/cpu/backward_runner.hpp"

#include <fmt/format.h>
#include <limits>

namespace attnbench::cpu {

cpu_backward_runner::cpu_backward_runner(const problem& p, bool writes_lse)
    : cpu_runner(p, writes_lse), d_o_(p.q_elems()), dq_(p.q_elems()), dk_(p.kv_elems()), dv_(p.kv_elems()) {}

void cpu_backward_runner::set_inputs(const host_inputs& in) {
  cpu_runner::set_inputs(in);
  if (in.d_o.size() != d_o_.size())
    throw input_error(
        fmt::format("a {} run needs dO of {} values, got {}", to_string(p_.pass), d_o_.size(), in.d_o.size()));
  d_o_ = in.d_o;
  forward();  // untimed: the O and lse the backward reads
  reset_counters();
}

void cpu_backward_runner::poison_outputs() {
  if (p_.pass == pass_kind::fwd_bwd) cpu_runner::poison_outputs();
  for (auto* g : {&dq_, &dk_, &dv_}) std::fill(g->begin(), g->end(), std::numeric_limits<float>::quiet_NaN());
}

void cpu_backward_runner::run() {
  reset_counters();
  if (p_.pass == pass_kind::fwd_bwd) forward();
  backward();
}

host_outputs cpu_backward_runner::get_outputs() {
  host_outputs out = cpu_runner::get_outputs();
  out.dq = dq_;
  out.dk = dk_;
  out.dv = dv_;
  return out;
}

}  // namespace attnbench::cpu

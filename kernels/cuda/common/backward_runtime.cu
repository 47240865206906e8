#include <string>
#include <vector>

#include "kernels/cuda/common/device_backward_runner.cuh"
#include "core/cuda/dtype_traits.cuh"
#include "kernels/cuda/common/host_transfer.cuh"
#include "core/errors.hpp"

namespace attnbench::cuda {

std::int64_t device_backward_runner::backward_memory_bytes(const problem& p) {
  return base_memory_bytes(p) + dtype_bytes(p.type) * (2 * p.q_elems() + 2 * p.kv_elems());
}

device_backward_runner::device_backward_runner(const problem& p, bool writes_lse)
    : device_runner(p, writes_lse),
      d_o_(p.q_elems() * dtype_bytes(p.type)),
      dq_(p.q_elems() * dtype_bytes(p.type)),
      dk_(p.kv_elems() * dtype_bytes(p.type)),
      dv_(p.kv_elems() * dtype_bytes(p.type)) {
  if (p.type == dtype::e4m3) throw backend_error("a CUDA backward runs in fp32, fp16 or bf16, not e4m3");
}

void device_backward_runner::set_inputs(const host_inputs& in) {
  device_runner::set_inputs(in);
  if (in.d_o.size() != static_cast<std::size_t>(p_.q_elems()))
    throw input_error("a " + std::string(to_string(p_.pass)) + " run needs dO of " + std::to_string(p_.q_elems()) +
                      " values, got " + std::to_string(in.d_o.size()));
  dispatch_dtype(p_.type, [&](auto t) { upload_as<decltype(t)>(d_o_, in.d_o); });
  forward();  // untimed: the O and lse the backward reads
  ATTN_CUDA_CHECK(cudaGetLastError());
  ATTN_CUDA_CHECK(cudaStreamSynchronize(stream()));
}

void device_backward_runner::poison_outputs() {
  if (p_.pass == pass_kind::fwd_bwd) device_runner::poison_outputs();
  for (device_buffer* g : {&dq_, &dk_, &dv_}) ATTN_CUDA_CHECK(cudaMemsetAsync(g->get(), 0xFF, g->bytes(), stream()));
  ATTN_CUDA_CHECK(cudaStreamSynchronize(stream()));
}

void device_backward_runner::run() {
  if (p_.pass == pass_kind::fwd_bwd) forward();
  backward();
}

host_outputs device_backward_runner::get_outputs() {
  host_outputs out = device_runner::get_outputs();
  dispatch_dtype(p_.type, [&](auto t) {
    using T = decltype(t);
    out.dq = download_as<T>(dq_, p_.q_elems());
    out.dk = download_as<T>(dk_, p_.kv_elems());
    out.dv = download_as<T>(dv_, p_.kv_elems());
  });
  return out;
}

}  // namespace attnbench::cuda

#include <cstdint>
#include <cstring>
#include <vector>

#include "core/fp8.hpp"
#include "kernels/cuda/common/device_runner.cuh"
#include "core/cuda/dtype_traits.cuh"

namespace attnbench::cuda {

namespace {

template <class T>
void upload(device_buffer& dst, const std::vector<float>& src) {
  std::vector<T> tmp(src.size());
  for (std::size_t i = 0; i < src.size(); ++i) tmp[i] = from_float<T>(src[i]);
  ATTN_CUDA_CHECK(cudaMemcpyAsync(dst.get(), tmp.data(), tmp.size() * sizeof(T), cudaMemcpyHostToDevice, stream()));
  ATTN_CUDA_CHECK(cudaStreamSynchronize(stream()));
}

// e4m3: the codes of src / scale (exact for host values that are code x scale).
void upload_e4m3(device_buffer& dst, const std::vector<float>& src, float scale) {
  const std::vector<std::uint8_t> codes = e4m3_encode(src, scale);
  ATTN_CUDA_CHECK(cudaMemcpyAsync(dst.get(), codes.data(), codes.size(), cudaMemcpyHostToDevice, stream()));
  ATTN_CUDA_CHECK(cudaStreamSynchronize(stream()));
}

template <class T>
std::vector<float> download(const device_buffer& src, std::size_t n) {
  std::vector<T> tmp(n);
  ATTN_CUDA_CHECK(cudaMemcpyAsync(tmp.data(), src.get(), n * sizeof(T), cudaMemcpyDeviceToHost, stream()));
  ATTN_CUDA_CHECK(cudaStreamSynchronize(stream()));
  std::vector<float> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = to_float(tmp[i]);
  return out;
}

}  // namespace

std::int64_t device_runner::base_memory_bytes(const problem& p) {
  return dtype_bytes(p.type) * (p.q_elems() + 2 * p.kv_elems()) + output_bytes(p.type) * p.o_elems() + 4 * p.rows();
}

device_runner::device_runner(const problem& p, bool writes_lse)
    : p_(p),
      writes_lse_(writes_lse),
      q_(p.q_elems() * dtype_bytes(p.type)),
      k_(p.kv_elems() * dtype_bytes(p.type)),
      v_(p.kv_elems() * dtype_bytes(p.type)),
      o_(p.o_elems() * output_bytes(p.type)),
      lse_(writes_lse ? p.rows() * sizeof(float) : 0) {}

void device_runner::set_inputs(const host_inputs& in) {
  scales_ = in.scales;
  if (p_.type == dtype::e4m3) {
    upload_e4m3(q_, in.q, scales_.q);
    upload_e4m3(k_, in.k, scales_.k);
    upload_e4m3(v_, in.v, scales_.v);
    return;
  }
  dispatch_dtype(p_.type, [&](auto t) {
    using T = decltype(t);
    upload<T>(q_, in.q);
    upload<T>(k_, in.k);
    upload<T>(v_, in.v);
  });
}

void device_runner::poison_outputs() {
  ATTN_CUDA_CHECK(cudaMemsetAsync(o_.get(), 0xFF, o_.bytes(), stream()));
  if (writes_lse_) ATTN_CUDA_CHECK(cudaMemsetAsync(lse_.get(), 0xFF, lse_.bytes(), stream()));
  ATTN_CUDA_CHECK(cudaStreamSynchronize(stream()));
}

host_outputs device_runner::get_outputs() {
  host_outputs out;
  dispatch_dtype(output_dtype(p_.type), [&](auto t) { out.o = download<decltype(t)>(o_, p_.o_elems()); });
  if (writes_lse_) out.lse = download<float>(lse_, p_.rows());
  return out;
}

}  // namespace attnbench::cuda

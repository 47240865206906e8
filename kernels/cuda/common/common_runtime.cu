#include <cstdint>
#include <cstring>
#include <vector>

#include "core/fp8.hpp"
#include "kernels/cuda/common/device_mask.cuh"
#include "kernels/cuda/common/device_runner.cuh"
#include "core/cuda/dtype_traits.cuh"
#include "kernels/cuda/common/host_transfer.cuh"

namespace attnbench::cuda {

namespace {

// e4m3: the codes of src / scale (exact for host values that are code x scale).
void upload_e4m3(device_buffer& dst, const std::vector<float>& src, float scale) {
  const std::vector<std::uint8_t> codes = e4m3_encode(src, scale);
  ATTN_CUDA_CHECK(cudaMemcpyAsync(dst.get(), codes.data(), codes.size(), cudaMemcpyHostToDevice, stream()));
  ATTN_CUDA_CHECK(cudaStreamSynchronize(stream()));
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
    upload_as<T>(q_, in.q);
    upload_as<T>(k_, in.k);
    upload_as<T>(v_, in.v);
  });
}

void device_runner::poison_outputs() {
  ATTN_CUDA_CHECK(cudaMemsetAsync(o_.get(), 0xFF, o_.bytes(), stream()));
  if (writes_lse_) ATTN_CUDA_CHECK(cudaMemsetAsync(lse_.get(), 0xFF, lse_.bytes(), stream()));
  ATTN_CUDA_CHECK(cudaStreamSynchronize(stream()));
}

host_outputs device_runner::get_outputs() {
  host_outputs out;
  dispatch_dtype(output_dtype(p_.type), [&](auto t) { out.o = download_as<decltype(t)>(o_, p_.o_elems()); });
  if (writes_lse_) out.lse = download_as<float>(lse_, p_.rows());
  return out;
}

device_mask mask_on_device(const problem& p, cudaStream_t st) {
  device_mask out{p, {}, {}};
  if (!p.mask.has_sparse()) return out;
  sparse_terms t = *p.mask.sparse;
  if (t.layout_block > 0 && t.layout) {
    const auto bytes = static_cast<std::size_t>(t.layout_heads * t.layout_rows * t.layout_cols);
    out.layout = device_buffer(bytes);
    ATTN_CUDA_CHECK(cudaMemcpyAsync(out.layout.get(), t.layout, bytes, cudaMemcpyHostToDevice, st));
    t.layout = out.layout.get<const std::uint8_t>();
  }
  out.terms = device_buffer(sizeof t);
  ATTN_CUDA_CHECK(cudaMemcpyAsync(out.terms.get(), &t, sizeof t, cudaMemcpyHostToDevice, st));
  ATTN_CUDA_CHECK(cudaStreamSynchronize(st));  // t is a local
  out.p.mask.sparse = out.terms.get<const sparse_terms>();
  return out;
}

device_tile_list tile_list_on_device(const tile_list& l, cudaStream_t st) {
  device_tile_list out{device_buffer(l.num.size() * 4), device_buffer(l.indices.size() * 4), {}};
  ATTN_CUDA_CHECK(cudaMemcpyAsync(out.num.get(), l.num.data(), l.num.size() * 4, cudaMemcpyHostToDevice, st));
  ATTN_CUDA_CHECK(
      cudaMemcpyAsync(out.indices.get(), l.indices.data(), l.indices.size() * 4, cudaMemcpyHostToDevice, st));
  out.view = {out.num.get<const std::int32_t>(), out.indices.get<const std::int32_t>(), l.heads, l.outer, l.inner};
  return out;
}

}  // namespace attnbench::cuda

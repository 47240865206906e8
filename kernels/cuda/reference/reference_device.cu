// On-device fp32 reference (see reference_device.cuh): correctness over speed.
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/mask.hpp"
#include "core/cuda/device_buffer.cuh"
#include "core/cuda/dtype_traits.cuh"
#include "core/cuda/launch.cuh"
#include "kernels/cuda/reference/reference_device.cuh"

namespace attnbench::cuda {

namespace {

constexpr int warps_per_block = 4;
constexpr int max_d_per_lane = 8;          // d <= 256
constexpr int key_tile = 32, x_slab = 32;  // pass 1's staged tile of K

__device__ inline float warp_sum(float x) {
  for (int off = 16; off > 0; off /= 2) x += __shfl_xor_sync(0xffffffffu, x, off);
  return x;
}

__device__ inline float phi(float x) { return x > 0.f ? x + 1.f : expf(x); }

template <class T>
__global__ void __launch_bounds__(32 * warps_per_block)
    reference_softmax_kernel(problem p, const T* q, const T* k, const T* v, float* o, float* lse) {
  __shared__ float qs[warps_per_block][256];
  __shared__ float ks[warps_per_block][key_tile][x_slab + 1];  // +1: lanes read distinct banks
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const std::int64_t row = std::int64_t(blockIdx.x) * warps_per_block + warp;
  if (row >= p.rows()) return;
  const std::int64_t d = p.d, z = row / p.Nq, i = row % p.Nq;
  const std::int64_t h = z % p.H, kvz = (z / p.H) * p.Hkv + h / p.group();
  const T* kh = k + kvz * p.Nkv * d;
  const T* vh = v + kvz * p.Nkv * d;
  const float scale = 1.f / sqrtf(static_cast<float>(d));
  for (std::int64_t x = lane; x < d; x += 32) qs[warp][x] = to_float(q[row * d + x]);
  __syncwarp();

  // Pass 1: online max and sum over the visible keys, lanes split the keys: lane t owns
  // key j0 + t of each tile of 32, whose rows the warp stages through shared memory in
  // slabs of 32 elements (coalesced loads; each lane then reads its own key's slab).
  // The score is summed over x in order, as a lane reading K itself would.
  float m = -INFINITY, l = 0.f;
  for (std::int64_t j0 = 0; j0 < p.Nkv; j0 += key_tile) {
    const std::int64_t j = j0 + lane;
    const bool visible = j < p.Nkv && is_visible(p, h, i, j);
    if (!__any_sync(0xffffffffu, visible)) continue;  // a tile no key of which is visible
    const int keys = p.Nkv - j0 < key_tile ? static_cast<int>(p.Nkv - j0) : key_tile;
    float s = 0.f;
    for (std::int64_t x0 = 0; x0 < d; x0 += x_slab) {
      const int w = d - x0 < x_slab ? static_cast<int>(d - x0) : x_slab;
      for (int c = 0; c < keys; ++c)
        if (lane < w) ks[warp][c][lane] = to_float(kh[(j0 + c) * d + x0 + lane]);
      __syncwarp();
      if (visible)
        for (int x = 0; x < w; ++x) s += qs[warp][x0 + x] * ks[warp][lane][x];
      __syncwarp();
    }
    if (!visible) continue;
    s *= scale;
    if (s > m) {
      l = (m == -INFINITY ? 0.f : l * expf(m - s)) + 1.f;
      m = s;
    } else {
      l += expf(s - m);
    }
  }
  for (int off = 16; off > 0; off /= 2) {
    const float m2 = __shfl_xor_sync(0xffffffffu, m, off);
    const float l2 = __shfl_xor_sync(0xffffffffu, l, off);
    const float mx = fmaxf(m, m2);
    if (mx != -INFINITY) {
      l = (m == -INFINITY ? 0.f : l * expf(m - mx)) + (m2 == -INFINITY ? 0.f : l2 * expf(m2 - mx));
      m = mx;
    }
  }

  // Pass 2: O = sum_j exp(s_j - m) / l * v_j, lanes split d.
  float acc[max_d_per_lane] = {};
  if (l > 0.f) {
    for (std::int64_t j = 0; j < p.Nkv; ++j) {
      if (!is_visible(p, h, i, j)) continue;
      float part = 0.f;
      for (std::int64_t x = lane; x < d; x += 32) part += qs[warp][x] * to_float(kh[j * d + x]);
      const float w = expf(warp_sum(part) * scale - m) / l;
#pragma unroll
      for (int t = 0; t < max_d_per_lane; ++t) {
        const std::int64_t x = lane + 32 * t;
        if (x < d) acc[t] += w * to_float(vh[j * d + x]);
      }
    }
  }
#pragma unroll
  for (int t = 0; t < max_d_per_lane; ++t) {
    const std::int64_t x = lane + 32 * t;
    if (x < d) o[row * d + x] = acc[t];
  }
  if (lse && lane == 0) lse[row] = l > 0.f ? m + logf(l) : -INFINITY;
}

template <class T>
__global__ void __launch_bounds__(32 * warps_per_block)
    reference_linear_kernel(problem p, const T* q, const T* k, const T* v, float* o) {
  __shared__ float qs[warps_per_block][256];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const std::int64_t row = std::int64_t(blockIdx.x) * warps_per_block + warp;
  if (row >= p.rows()) return;
  const std::int64_t d = p.d, z = row / p.Nq, i = row % p.Nq;
  const std::int64_t kvz = (z / p.H) * p.Hkv + (z % p.H) / p.group();
  const T* kh = k + kvz * p.Nkv * d;
  const T* vh = v + kvz * p.Nkv * d;
  for (std::int64_t x = lane; x < d; x += 32) qs[warp][x] = phi(to_float(q[row * d + x]));
  __syncwarp();
  float acc[max_d_per_lane] = {}, den = 0.f;
  for (std::int64_t j = 0; j < p.Nkv; ++j) {
    if (!is_visible(p, i, j)) continue;  // linear rows accept none and causal only
    float part = 0.f;
    for (std::int64_t x = lane; x < d; x += 32) part += qs[warp][x] * phi(to_float(kh[j * d + x]));
    const float w = warp_sum(part);
    den += w;
#pragma unroll
    for (int t = 0; t < max_d_per_lane; ++t) {
      const std::int64_t x = lane + 32 * t;
      if (x < d) acc[t] += w * to_float(vh[j * d + x]);
    }
  }
#pragma unroll
  for (int t = 0; t < max_d_per_lane; ++t) {
    const std::int64_t x = lane + 32 * t;
    if (x < d) o[row * d + x] = den > 0.f ? acc[t] / den : 0.f;
  }
}

unsigned blocks_for(const problem& p) {
  return static_cast<unsigned>((p.rows() + warps_per_block - 1) / warps_per_block);
}

}  // namespace

void reference_softmax_fp32_device(const problem& p, const void* q, const void* k, const void* v, float* o, float* lse,
                                   cudaStream_t st) {
  dispatch_dtype(p.type, [&](auto t) {
    using T = decltype(t);
    launch(reference_softmax_kernel<T>, blocks_for(p), 32 * warps_per_block, 0, st, p, static_cast<const T*>(q),
           static_cast<const T*>(k), static_cast<const T*>(v), o, lse);
  });
  ATTN_CUDA_CHECK_LAUNCH();
}

void reference_linear_fp32_device(const problem& p, const void* q, const void* k, const void* v, float* o,
                                  cudaStream_t st) {
  dispatch_dtype(p.type, [&](auto t) {
    using T = decltype(t);
    launch(reference_linear_kernel<T>, blocks_for(p), 32 * warps_per_block, 0, st, p, static_cast<const T*>(q),
           static_cast<const T*>(k), static_cast<const T*>(v), o);
  });
  ATTN_CUDA_CHECK_LAUNCH();
}

namespace {

template <class T>
device_buffer upload(const std::vector<float>& src, cudaStream_t st) {
  std::vector<T> tmp(src.size());
  for (std::size_t i = 0; i < src.size(); ++i) tmp[i] = from_float<T>(src[i]);
  device_buffer b(tmp.size() * sizeof(T));
  ATTN_CUDA_CHECK(cudaMemcpyAsync(b.get(), tmp.data(), b.bytes(), cudaMemcpyHostToDevice, st));
  ATTN_CUDA_CHECK(cudaStreamSynchronize(st));
  return b;
}

}  // namespace

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

host_outputs reference_fp32_on_device(attention_math math, const host_inputs& in) {
  // e4m3 inputs arrive as code x scale (host_inputs): exact in fp32, so the
  // reference reads them as fp32 tensors.
  const cudaStream_t st = stream();
  const device_mask mask = mask_on_device(in.p, st);
  problem p = mask.p;
  if (p.type == dtype::e4m3) p.type = dtype::fp32;
  host_outputs out;
  dispatch_dtype(p.type, [&](auto t) {
    using T = decltype(t);
    device_buffer q = upload<T>(in.q, st), k = upload<T>(in.k, st), v = upload<T>(in.v, st);
    device_buffer o(p.o_elems() * sizeof(float)), lse(p.rows() * sizeof(float));
    if (math == attention_math::softmax)
      reference_softmax_fp32_device(p, q.get(), k.get(), v.get(), o.get<float>(), lse.get<float>(), st);
    else
      reference_linear_fp32_device(p, q.get(), k.get(), v.get(), o.get<float>(), st);
    out.o.resize(p.o_elems());
    ATTN_CUDA_CHECK(cudaMemcpyAsync(out.o.data(), o.get(), o.bytes(), cudaMemcpyDeviceToHost, st));
    if (math == attention_math::softmax) {
      out.lse.resize(p.rows());
      ATTN_CUDA_CHECK(cudaMemcpyAsync(out.lse.data(), lse.get(), lse.bytes(), cudaMemcpyDeviceToHost, st));
    }
    ATTN_CUDA_CHECK(cudaStreamSynchronize(st));
  });
  return out;
}

}  // namespace attnbench::cuda

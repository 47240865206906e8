// On-device fp32 reference (see reference_device.cuh): correctness over speed.
#include <cmath>
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/mask.hpp"
#include "core/cuda/device_buffer.cuh"
#include "core/cuda/dtype_traits.cuh"
#include "core/cuda/launch.cuh"
#include "kernels/cuda/reference/reference_device.cuh"
#include "kernels/cuda/unfused/unfused_kernels.cuh"  // cublas_handle()

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

// The GEMM path's softmax: one warp per row of a piece of `rows` consecutive query rows
// starting at global row row0 (z = b H + h, row = z Nq + i); s holds their scaled scores
// [rows][Nkv] and gets P (0 where masked; a row with no visible key is all 0, lse -inf).
// (Launch bounds with 1 block: ptxas's default spilled 4 bytes on sm_90 at 64 registers.)
__global__ void __launch_bounds__(32 * warps_per_block, 1)
    reference_softmax_rows_kernel(problem p, std::int64_t row0, std::int64_t rows, float* s, float* lse) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const std::int64_t r = std::int64_t(blockIdx.x) * warps_per_block + warp;
  if (r >= rows) return;
  const std::int64_t row = row0 + r, z = row / p.Nq, i = row % p.Nq, h = z % p.H;
  float* const sr = s + r * p.Nkv;
  float m = -INFINITY;
  for (std::int64_t j = lane; j < p.Nkv; j += 32)
    if (is_visible(p, h, i, j)) m = fmaxf(m, sr[j]);
  for (int off = 16; off > 0; off /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
  float l = 0.f;
  if (m != -INFINITY)
    for (std::int64_t j = lane; j < p.Nkv; j += 32)
      if (is_visible(p, h, i, j)) l += expf(sr[j] - m);
  l = warp_sum(l);
  for (std::int64_t j = lane; j < p.Nkv; j += 32) sr[j] = l > 0.f && is_visible(p, h, i, j) ? expf(sr[j] - m) / l : 0.f;
  if (lse && lane == 0) lse[row] = l > 0.f ? m + logf(l) : -INFINITY;
}

template <class T>
__global__ void to_fp32_kernel(const T* x, float* y, std::int64_t n) {
  for (std::int64_t e = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n;
       e += std::int64_t(gridDim.x) * blockDim.x)
    y[e] = to_float(x[e]);
}

// An fp32 copy of a device tensor in p.type (none needed for fp32: `own` stays empty).
const float* as_fp32(const problem& p, const void* x, std::int64_t n, device_buffer& own, cudaStream_t st) {
  if (p.type == dtype::fp32) return static_cast<const float*>(x);
  own = device_buffer(static_cast<std::size_t>(n) * sizeof(float));
  dispatch_dtype(p.type, [&](auto t) {
    using T = decltype(t);
    launch(to_fp32_kernel<T>, 1024u, 256, 0, st, static_cast<const T*>(x), own.get<float>(), n);
  });
  ATTN_CUDA_CHECK_LAUNCH();
  return own.get<float>();
}

// C (column-major m x n, ldc m) = alpha op(A) B on fp32 operands with fp32 arithmetic
// (CUBLAS_COMPUTE_32F: no TF32, no tensor cores).
void sgemm(cublasOperation_t ta, int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
           float* c) {
  const float zero = 0.f;
  ATTN_CUBLAS_CHECK(cublasGemmStridedBatchedEx(cublas_handle(), ta, CUBLAS_OP_N, m, n, k, &alpha, a, CUDA_R_32F, lda, 0,
                                               b, CUDA_R_32F, ldb, 0, &zero, c, CUDA_R_32F, m, 0, 1, CUBLAS_COMPUTE_32F,
                                               CUBLAS_GEMM_DEFAULT));
}

// Scores for pieces of at most this many bytes (one piece: 32k query rows at Nkv 4k).
constexpr std::size_t gemm_workspace_bytes = std::size_t(512) << 20;

// The GEMM path: per (batch, KV head), the group's query rows (its G heads are consecutive rows)
// in pieces: S = scale Q K^T, the masked softmax in place, O = P V, its buffers in `w`. False,
// with nothing written, when they do not fit in device memory (the warp kernel then runs).
bool reference_softmax_fp32_gemm(const problem& p, const void* q, const void* k, const void* v, float* o, float* lse,
                                 cudaStream_t st, std::int64_t max_piece, reference_workspace& w) {
  device_buffer &q32 = w.q, &k32 = w.k, &v32 = w.v, &s = w.s;
  const std::int64_t group_rows = p.group() * p.Nq;
  const std::int64_t piece = std::max<std::int64_t>(
      1, std::min({group_rows, max_piece, static_cast<std::int64_t>(gemm_workspace_bytes) / (p.Nkv * 4)}));
  const float *qf = nullptr, *kf = nullptr, *vf = nullptr;
  try {
    s = device_buffer(static_cast<std::size_t>(piece * p.Nkv) * sizeof(float));
    qf = as_fp32(p, q, p.q_elems(), q32, st);
    kf = as_fp32(p, k, p.kv_elems(), k32, st);
    vf = as_fp32(p, v, p.kv_elems(), v32, st);
  } catch (const std::exception&) {
    (void)cudaGetLastError();  // the failed cudaMalloc; the warp kernel needs none of these
    w = {};
    return false;
  }
  ATTN_CUBLAS_CHECK(cublasSetStream(cublas_handle(), st));
  const int nkv = static_cast<int>(p.Nkv), d = static_cast<int>(p.d);
  const float scale = 1.f / sqrtf(static_cast<float>(p.d));
  for (std::int64_t b = 0; b < p.B; ++b)
    for (std::int64_t kvh = 0; kvh < p.Hkv; ++kvh) {
      const std::int64_t row0 = (b * p.H + kvh * p.group()) * p.Nq, kv = (b * p.Hkv + kvh) * p.Nkv * p.d;
      for (std::int64_t r0 = 0; r0 < group_rows; r0 += piece) {
        const std::int64_t rows = std::min(piece, group_rows - r0);
        // Column-major: S^T [Nkv x rows] = K [d x Nkv]^T Q^T [d x rows].
        sgemm(CUBLAS_OP_T, nkv, static_cast<int>(rows), d, scale, kf + kv, d, qf + (row0 + r0) * p.d, d,
              s.get<float>());
        launch(reference_softmax_rows_kernel, static_cast<unsigned>((rows + warps_per_block - 1) / warps_per_block),
               32 * warps_per_block, 0, st, p, row0 + r0, rows, s.get<float>(), lse);
        ATTN_CUDA_CHECK_LAUNCH();
        // O^T [d x rows] = V^T [d x Nkv] P^T [Nkv x rows].
        sgemm(CUBLAS_OP_N, d, static_cast<int>(rows), nkv, 1.f, vf + kv, d, s.get<float>(), nkv, o + (row0 + r0) * p.d);
      }
    }
  return true;
}

unsigned blocks_for(const problem& p) {
  return static_cast<unsigned>((p.rows() + warps_per_block - 1) / warps_per_block);
}

}  // namespace

reference_workspace reference_softmax_fp32_device(const problem& p, const void* q, const void* k, const void* v,
                                                  float* o, float* lse, cudaStream_t st, reference_path path) {
  const std::int64_t max_piece =
      path == reference_path::gemm_in_7_row_pieces ? 7 : std::numeric_limits<std::int64_t>::max();
  reference_workspace w;
  if (path != reference_path::warp_kernel && reference_softmax_fp32_gemm(p, q, k, v, o, lse, st, max_piece, w))
    return w;
  dispatch_dtype(p.type, [&](auto t) {
    using T = decltype(t);
    launch(reference_softmax_kernel<T>, blocks_for(p), 32 * warps_per_block, 0, st, p, static_cast<const T*>(q),
           static_cast<const T*>(k), static_cast<const T*>(v), o, lse);
  });
  ATTN_CUDA_CHECK_LAUNCH();
  return w;
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

host_outputs reference_fp32_on_device(attention_math math, const host_inputs& in, reference_path path) {
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
    reference_workspace ws;  // freed after the synchronize below
    if (math == attention_math::softmax)
      ws = reference_softmax_fp32_device(p, q.get(), k.get(), v.get(), o.get<float>(), lse.get<float>(), st, path);
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

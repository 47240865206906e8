// flash1 (cuda): FlashAttention-1, Algorithm 1 of Dao et al. (2022).
//
// Idea: never materialise S. For each key/value block K_j, V_j the scores of
// a query block Q_i are computed in shared memory, reduced to a block
// softmax (row max m~, row sum l~, P~ = exp(S - m~)), and merged into the
// running output: O_i <- (l_i e^{m_i - m_new} O_i + e^{m~ - m_new} P~ V_j) / l_new.
// As in Algorithm 1 the KV loop is the outer one and O_i, l_i, m_i live in
// global memory between KV blocks (read and written back once per block);
// the Q loop (Algorithm 1's inner loop) runs across thread blocks, one block
// per (b, h, query tile of Br rows), so Q_i stays in shared memory. The
// running O_i is kept in an fp32 workspace (rounding it to fp16/bf16 after
// every block would add one rounding error per block); the last KV block
// writes O in the input dtype and lse = m + log l. Key blocks follow the
// causal bound (core/mask.hpp causal_bounded_kv_tiles); every other mask
// is applied per element with is_visible. Br and Bc come from the problem.
// Predecessor: naive / cublas_unfused (S and P in global memory): flash1
// trades Nq*Nkv score traffic for (Nkv/Bc) round trips of O, l, m.
// Expected bottleneck: the O_i round trips (8d bytes per row per KV block
// in fp32) and CUDA-core FMAs (no tensor cores): far below flash2, above the
// unfused variants at long sequence lengths.
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

namespace attnbench {

namespace cuda {
namespace {

constexpr int threads = 128;
constexpr int warps = threads / 32;

struct flash1_args {
  const void *q, *k, *v;
  void* o;
  float* lse;
  float* o_acc;  // [B*H*Nq, d] running O (normalised), fp32
  float* l;      // [B*H*Nq]
  float* m;      // [B*H*Nq]
  float scale;
};

template <class T>
__global__ void __launch_bounds__(threads) flash1_kernel(problem p, flash1_args a) {
  extern __shared__ __align__(16) unsigned char smem[];
  // Tile-local indices are 32-bit (64-bit division is a called subroutine that
  // made ptxas spill around the call on sm_80).
  const int d = static_cast<int>(p.d), ld = d + 4 / static_cast<int>(sizeof(T));  // odd word stride
  const int br = static_cast<int>(p.Br), bc = static_cast<int>(p.Bc);
  T* qs = reinterpret_cast<T*>(smem);
  T* ks = qs + br * ld;
  T* vs = ks + bc * ld;
  float* ss = reinterpret_cast<float*>(vs + bc * ld);
  float* alpha = ss + br * bc;
  float* beta = alpha + br;

  const std::int64_t qt = blockIdx.x, z = blockIdx.y;
  const std::int64_t kvz = (z / p.H) * p.Hkv + (z % p.H) / p.group();
  const std::int64_t r0 = qt * p.Br;
  const int R = static_cast<int>(min(p.Br, p.Nq - r0));
  const std::int64_t row0 = z * p.Nq + r0;  // flat index of the tile's first row
  const T* q = static_cast<const T*>(a.q) + row0 * d;
  const T* k = static_cast<const T*>(a.k) + kvz * p.Nkv * d;
  const T* v = static_cast<const T*>(a.v) + kvz * p.Nkv * d;
  T* o = static_cast<T*>(a.o) + row0 * d;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;

  const span64 tiles = causal_bounded_kv_tiles(p, qt);
  if (tiles.empty()) {  // no key reachable: O = 0, lse = -inf
    for (int e = tid; e < R * d; e += threads) o[e] = from_float<T>(0.f);
    for (int r = tid; r < R; r += threads) a.lse[row0 + r] = -INFINITY;
    return;
  }
  for (int e = tid; e < R * d; e += threads) qs[(e / d) * ld + e % d] = q[e];

  for (std::int64_t kt = tiles.lo; kt < tiles.hi; ++kt) {
    const bool first = kt == tiles.lo, last = kt == tiles.hi - 1;
    const std::int64_t c0 = kt * p.Bc;
    const int C = static_cast<int>(min(p.Bc, p.Nkv - c0));
    for (int e = tid; e < bc * d; e += threads) {
      const int c = e / d, x = e % d;
      const bool in = c < C;  // padded keys: zeros (P = 0 must not meet NaN)
      ks[c * ld + x] = in ? k[(c0 + c) * d + x] : from_float<T>(0.f);
      vs[c * ld + x] = in ? v[(c0 + c) * d + x] : from_float<T>(0.f);
    }
    __syncthreads();

    // S = scale * Q_i K_j^T for the whole tile (as model_flops_executed_flash1
    // counts), then -inf where masked or padded.
    for (int e = tid; e < R * bc; e += threads) {
      const int r = e / bc, c = e % bc;
      float x = -INFINITY;
      if (c < C) {
        float dot = 0.f;
        for (int t = 0; t < d; ++t) dot += to_float(qs[r * ld + t]) * to_float(ks[c * ld + t]);
        if (is_visible(p, r0 + r, c0 + c)) x = dot * a.scale;
      }
      ss[r * bc + c] = x;
    }
    __syncthreads();

    // Block softmax per row (one warp per row) and the merge factors.
    for (int r = warp; r < R; r += warps) {
      float* srow = ss + r * bc;
      float mt = -INFINITY;
      for (int c = lane; c < bc; c += 32) mt = fmaxf(mt, srow[c]);
      for (int off = 16; off > 0; off /= 2) mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, off));
      float lt = 0.f;
      for (int c = lane; c < bc; c += 32) {
        const float pr = mt == -INFINITY ? 0.f : expf(srow[c] - mt);
        srow[c] = pr;
        lt += pr;
      }
      for (int off = 16; off > 0; off /= 2) lt += __shfl_xor_sync(0xffffffffu, lt, off);
      if (lane == 0) {
        const std::int64_t row = row0 + r;
        const float m_old = first ? -INFINITY : a.m[row];
        const float l_old = first ? 0.f : a.l[row];
        const float m_new = fmaxf(m_old, mt);
        const float fa = m_old == -INFINITY ? 0.f : l_old * expf(m_old - m_new);
        const float fb = mt == -INFINITY ? 0.f : expf(mt - m_new);
        const float l_new = fa + fb * lt;
        const float inv = l_new > 0.f ? 1.f / l_new : 0.f;
        alpha[r] = fa * inv;
        beta[r] = fb * inv;
        if (last) {
          a.lse[row] = l_new > 0.f ? m_new + logf(l_new) : -INFINITY;
        } else {
          a.m[row] = m_new;
          a.l[row] = l_new;
        }
      }
    }
    __syncthreads();

    // O_i <- alpha * O_i + beta * P~ V_j (O_i read from and written to global).
    for (int e = tid; e < R * d; e += threads) {
      const int r = e / d, x = e % d;
      float acc = 0.f;
      for (int c = 0; c < C; ++c) acc += ss[r * bc + c] * to_float(vs[c * ld + x]);
      float* oa = a.o_acc + (row0 + r) * d + x;
      const float val = alpha[r] * (first ? 0.f : *oa) + beta[r] * acc;
      if (last) {
        o[e] = from_float<T>(val);
      } else {
        *oa = val;
      }
    }
    __syncthreads();
  }
}

class flash1_runner : public device_runner {
 public:
  flash1_runner(const problem& p, bool writes_lse)
      : device_runner(p, writes_lse),
        o_acc_(p.rows() * p.d * sizeof(float)),
        l_(p.rows() * sizeof(float)),
        m_(p.rows() * sizeof(float)),
        smem_(flash1_smem_bytes(p)) {
    int dev = 0, optin = 0;
    ATTN_CUDA_CHECK(cudaGetDevice(&dev));
    ATTN_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    if (smem_ > optin)
      throw backend_error("flash1 needs " + std::to_string(smem_) +
                          " bytes of shared memory per block; this device allows " + std::to_string(optin));
    dispatch_dtype(p.type, [&](auto t) {
      ATTN_CUDA_CHECK(cudaFuncSetAttribute(flash1_kernel<decltype(t)>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(smem_)));
    });
  }
  void run() override {
    const flash1_args a{q_.get(),        k_.get(),          v_.get(),
                        o_.get(),        lse_.get<float>(), o_acc_.get<float>(),
                        l_.get<float>(), m_.get<float>(),   1.f / std::sqrt(static_cast<float>(p_.d))};
    const dim3 grid(static_cast<unsigned>(num_q_tiles(p_)), static_cast<unsigned>(p_.B * p_.H));
    dispatch_dtype(p_.type, [&](auto t) { launch(flash1_kernel<decltype(t)>, grid, threads, smem_, stream(), p_, a); });
    ATTN_CUDA_CHECK_LAUNCH();
  }

 private:
  device_buffer o_acc_, l_, m_;
  std::int64_t smem_;
};

}  // namespace
}  // namespace cuda

void add_cuda_rows_flash1(std::vector<variant>& rows) {
  rows.push_back({
      .name = "flash1",
      .backend = backend_kind::cuda,
      .math = attention_math::softmax,
      .summary = "FlashAttention-1 Algorithm 1: KV-outer loop, O/l/m through global memory per KV block",
      .writes_lse = true,
      .caps = {.dtypes = {dtype::fp32, dtype::fp16, dtype::bf16}},
      .tags = {tag::fused, tag::tiled},
      .check =
          [](const problem& p) {
            return cuda::check_launch({.grid_x = num_q_tiles(p),
                                       .grid_y = p.B * p.H,
                                       .threads = cuda::threads,
                                       .smem_bytes = flash1_smem_bytes(p)},
                                      "flash1 tiles Br=" + std::to_string(p.Br) + " Bc=" + std::to_string(p.Bc) +
                                          " d=" + std::to_string(p.d));
          },
      .model =
          [](const problem& p) {
            return model_figures{model_flops_softmax(p), model_flops_executed_flash1(p), model_bytes_flash1_cuda(p),
                                 model_exps_flash1_cuda(p)};
          },
      .memory_bytes = memory_bytes_flash1_cuda,
      .make_runner = [](const problem& p, bool lse) -> std::unique_ptr<runner> {
        return std::make_unique<cuda::flash1_runner>(p, lse);
      },
  });
}

}  // namespace attnbench

// ssd (cuda): Mamba-2's state space duality layer, forward, chunked, the semantics of the CPU
// row (kernels/cpu/ssd.cpp, docs/alternatives.md): x, z in Q, V, per head a scalar A, per step
// dt = softplus(dt_raw + bias), S = exp(dt A) S + dt B_t x_t^T (N x P), y = S^T C_t + D x_t,
// out = y silu(z). Per chunk of 64 steps, with A_cs the cumulative sum of dt A in the chunk:
//   M   = (C B^T) o L,  L[t][s] = exp(A_cs[t] - A_cs[s]) for s <= t   (64 x 64 over N)
//   out = diag(exp(A_cs)) C S_in + M (dt x), then D x and the gate      (64 x P over N, over 64)
//   S   = exp(A_cs[63]) S_in + B^T diag(L[63]) (dt x)                   (N x P over 64)
// Idea: one CTA of 4 warps per (batch, head) walks its chunks in order, as the CPU row's task
// does, the state S in shared memory (fp32) between chunks; the four products run on tensor
// cores (mma.sync m16n8k16, flash2's PTX helpers), each warp taking 16 x 8 output tiles in
// turn, fragments built from the fp32 tiles in shared memory and rounded to the input type
// (C, B, M, dt x and S: Mamba-2's Triton kernels round the same operands), fp32 accumulation.
// The decay mask keeps the CPU row's numerics: an exponent per pair, never exp(A_cs[t]) times
// exp(-A_cs[s]) (which overflows for long chunks of strong decay). fp16 and bf16 share one
// kernel: the mma instruction follows a warp-uniform flag, not a second instantiation.
// Changed from the CPU row: the chunk is fixed at 64 steps (not p.Bc; the model is evaluated at
// 64), tiles of M above the diagonal are skipped at 16 x 8 granularity, the cumulative sum runs
// on one thread (64 adds, the CPU row's order), and x, z are read again from global memory in the
// epilogue instead of kept as tiles.
// Expected bottleneck: at Mamba-2's N = 128, P = 64 the products are about 64 (N + P) + 4 N P
// FLOPs per step against 3 P e + 4 (2 N + 1) bytes (B and C in fp32 dominate): ~32 FLOP/B, far
// under an H200's bf16 ridge (~200), so memory by the model; in practice the fragments, built by
// scalar fp32 loads from shared memory and conversions (not ldmatrix), and the four barriers per
// chunk come first, and at small B H latency: B H CTAs of 135 KiB, one per SM.
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>

#include "core/cuda/dtype_traits.cuh"
#include "core/cuda/launch.cuh"
#include "core/cuda/launch_limits.hpp"
#include "kernels/cuda/common/device_runner.cuh"
#include "kernels/cuda/common/host_transfer.cuh"
#include "kernels/cuda/flash2/flash2_ptx.cuh"
#include "kernels/models/models.hpp"
#include "kernels/reference/scan_parameters.hpp"

namespace attnbench {

namespace cuda {
namespace {

constexpr int chunk = 64;  // cuda_ssd_chunk: steps per chunk (the model's Bc)
constexpr int warps = 4;
constexpr int threads = warps * 32;
constexpr int max_state = 128;  // N
constexpr int max_head = 128;   // P = d

struct ssd_args {
  const void *x, *z;
  void* out;
  const float *a, *skip, *bias, *dt_raw, *b, *c;  // a, skip, bias [H], dt_raw [B, H, L], B and C [B, G, L, N]
  bool bf16;
};

__host__ __device__ inline int padded_state(std::int64_t N) {
  return static_cast<int>((N + 15) / 16 * 16);
}  // a k and m extent
__host__ __device__ inline int padded_head(std::int64_t P) { return static_cast<int>((P + 7) / 8 * 8); }  // an n extent

// Floats of the CTA's tiles: C, B (64 x Np), S (Np x Pp), M (64 x 64), dt x (64 x Pp), rows
// padded by 4 floats; dt, A_cs, exp(A_cs) and the state update's decays (64 each).
std::int64_t smem_bytes(const problem& p) {
  const std::int64_t ldn = padded_state(p.dstate) + 4, ldp = padded_head(p.d) + 4;
  return 4 * (2 * chunk * ldn + (ldn - 4) * ldp + chunk * (chunk + 4) + chunk * ldp + 4 * chunk);
}

// The 16-bit type's two instructions, chosen per call by the kernel-wide flag.
struct tensor_op {
  bool bf16;
  __device__ std::uint32_t pack(float lo, float hi) const {
    return bf16 ? f2::pack2<__nv_bfloat16>(lo, hi) : f2::pack2<__half>(lo, hi);
  }
  __device__ void mma(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0, std::uint32_t b1) const {
    if (bf16)
      f2::mma_16816<__nv_bfloat16>(d, a, b0, b1);
    else
      f2::mma_16816<__half>(d, a, b0, b1);
  }
  __device__ float load(const void* p, std::int64_t i) const {
    return bf16 ? to_float(static_cast<const __nv_bfloat16*>(p)[i]) : to_float(static_cast<const __half*>(p)[i]);
  }
  __device__ void store(void* p, std::int64_t i, float v) const {
    if (bf16)
      static_cast<__nv_bfloat16*>(p)[i] = from_float<__nv_bfloat16>(v);
    else
      static_cast<__half*>(p)[i] = from_float<__half>(v);
  }
};

// acc (a 16 x 8 tile) += sum over k < k_end (a multiple of 16) of a(i, k) b(k, j), i and j
// tile-relative; the accumulator layout is flash2_ptx.cuh's (c0 c1 at row g, c2 c3 at g + 8).
template <class FA, class FB>
__device__ void mma_tile(const tensor_op& op, float (&acc)[4], int k_end, FA a, FB b) {
  const int lane = threadIdx.x % 32, g = lane / 4, c = 2 * (lane % 4);
  for (int k = 0; k < k_end; k += 16) {
    const std::uint32_t fa[4] = {op.pack(a(g, k + c), a(g, k + c + 1)), op.pack(a(g + 8, k + c), a(g + 8, k + c + 1)),
                                 op.pack(a(g, k + c + 8), a(g, k + c + 9)),
                                 op.pack(a(g + 8, k + c + 8), a(g + 8, k + c + 9))};
    op.mma(acc, fa, op.pack(b(k + c, g), b(k + c + 1, g)), op.pack(b(k + c + 8, g), b(k + c + 9, g)));
  }
}

__device__ inline float softplus(float v) { return v > 20.f ? v : log1pf(expf(v)); }  // Mamba's threshold

__global__ void __launch_bounds__(threads) ssd_kernel(problem p, ssd_args g) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int N = static_cast<int>(p.dstate), P = static_cast<int>(p.d);
  const int Np = padded_state(N), Pp = padded_head(P), ldn = Np + 4, ldp = Pp + 4, ldq = chunk + 4;
  float* cs = reinterpret_cast<float*>(smem);
  float* bs = cs + chunk * ldn;
  float* st = bs + chunk * ldn;
  float* ms = st + Np * ldp;
  float* xs = ms + chunk * ldq;
  float* dts = xs + chunk * ldp;
  float* acs = dts + chunk;
  float* eacs = acs + chunk;
  float* last = eacs + chunk;
  const std::int64_t L = p.Nkv, G = p.ngroups, b = blockIdx.x / p.H, h = blockIdx.x % p.H;
  const std::int64_t grp = h / (p.H / G), xo = (b * p.H + h) * L * P;
  const float* bsrc = g.b + (b * G + grp) * L * N;
  const float* csrc = g.c + (b * G + grp) * L * N;
  const float* dtsrc = g.dt_raw + (b * p.H + h) * L;
  const tensor_op op{g.bf16};
  const float a = g.a[h], skip = g.skip[h], bias = g.bias[h];
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, gr = lane / 4, c2 = 2 * (lane % 4);
  const std::int64_t chunks = (L + chunk - 1) / chunk;

  for (int e = tid; e < Np * ldp; e += threads) st[e] = 0.f;
  for (std::int64_t ci = 0; ci < chunks; ++ci) {
    const std::int64_t t0 = ci * chunk;
    const int T = static_cast<int>(L - t0 < chunk ? L - t0 : chunk);
    const bool carry_on = ci + 1 < chunks;
    __syncthreads();  // the previous chunk's reads of the tiles are done
    for (int e = tid; e < chunk * Np; e += threads) {
      const int r = e / Np, n = e % Np;
      const bool in = r < T && n < N;
      cs[r * ldn + n] = in ? csrc[(t0 + r) * N + n] : 0.f;
      bs[r * ldn + n] = in ? bsrc[(t0 + r) * N + n] : 0.f;
    }
    if (tid < chunk) dts[tid] = tid < T ? softplus(dtsrc[t0 + tid] + bias) : 0.f;
    __syncthreads();
    if (tid == 0) {  // padding steps have dt = 0: A_cs stays at its last value there
      float run = 0.f;
      for (int t = 0; t < chunk; ++t) {
        run += dts[t] * a;
        acs[t] = run;
        eacs[t] = expf(run);
      }
    }
    for (int e = tid; e < chunk * Pp; e += threads) {
      const int r = e / Pp, i = e % Pp;
      xs[r * ldp + i] = r < T && i < P ? dts[r] * op.load(g.x, xo + (t0 + r) * P + i) : 0.f;
    }
    __syncthreads();
    if (tid < chunk) last[tid] = carry_on && tid < T ? expf(acs[T - 1] - acs[tid]) : 0.f;
    // M = (C B^T) o L; tiles wholly above the diagonal are never read (the next product stops
    // its k loop at the tile row's end).
    for (int w = warp; w < (chunk / 16) * (chunk / 8); w += warps) {
      const int i0 = w / (chunk / 8) * 16, j0 = w % (chunk / 8) * 8;
      if (j0 > i0 + 15) continue;
      float acc[4] = {};
      mma_tile(
          op, acc, Np, [&](int i, int k) { return cs[(i0 + i) * ldn + k]; },
          [&](int k, int j) { return bs[(j0 + j) * ldn + k]; });
      for (int e = 0; e < 4; ++e) {
        const int t = i0 + gr + e / 2 * 8, s = j0 + c2 + e % 2;
        ms[t * ldq + s] = s <= t && t < T ? acc[e] * expf(acs[t] - acs[s]) : 0.f;
      }
    }
    __syncthreads();
    // out = diag(exp(A_cs)) C S_in + M (dt x) (S_in = 0 in the first chunk), D x, the gate.
    for (int w = warp; w < (chunk / 16) * (Pp / 8); w += warps) {
      const int i0 = w / (Pp / 8) * 16, j0 = w % (Pp / 8) * 8;
      float acc[4] = {};
      mma_tile(
          op, acc, ci > 0 ? Np : 0, [&](int i, int k) { return cs[(i0 + i) * ldn + k]; },
          [&](int k, int j) { return st[k * ldp + j0 + j]; });
      for (int e = 0; e < 4; ++e) acc[e] *= eacs[i0 + gr + e / 2 * 8];
      mma_tile(
          op, acc, i0 + 16, [&](int i, int k) { return ms[(i0 + i) * ldq + k]; },
          [&](int k, int j) { return xs[k * ldp + j0 + j]; });
      for (int e = 0; e < 4; ++e) {
        const int t = i0 + gr + e / 2 * 8, i = j0 + c2 + e % 2;
        if (t < T && i < P) {
          const std::int64_t at = xo + (t0 + t) * P + i;
          const float x = op.load(g.x, at), z = op.load(g.z, at);
          op.store(g.out, at, (acc[e] + skip * x) * (z / (1.f + expf(-z))));
        }
      }
    }
    if (!carry_on) continue;
    __syncthreads();  // every read of S_in is done
    // S = exp(A_cs[T-1]) S_in + B^T diag(L[T-1]) (dt x); each warp owns its tiles of S.
    const float decay = eacs[T - 1];
    for (int w = warp; w < (Np / 16) * (Pp / 8); w += warps) {
      const int i0 = w / (Pp / 8) * 16, j0 = w % (Pp / 8) * 8;
      float acc[4] = {};
      mma_tile(
          op, acc, chunk, [&](int i, int k) { return bs[k * ldn + i0 + i]; },
          [&](int k, int j) { return xs[k * ldp + j0 + j] * last[k]; });
      for (int e = 0; e < 4; ++e) {
        float& s = st[(i0 + gr + e / 2 * 8) * ldp + j0 + c2 + e % 2];
        s = decay * s + acc[e];
      }
    }
  }
}

class ssd_runner : public device_runner {
 public:
  explicit ssd_runner(const problem& p) : device_runner(p, false), smem_(smem_bytes(p)) {
    const ssd_parameters s = make_ssd_parameters(p);
    for (auto [buf, src] : {std::pair{&a_, &s.a},
                            {&skip_, &s.skip},
                            {&bias_, &s.bias},
                            {&dt_raw_, &s.dt_raw},
                            {&b_, &s.b},
                            {&c_, &s.c}}) {
      *buf = uploaded(*src);
    }
    ATTN_CUDA_CHECK(
        cudaFuncSetAttribute(ssd_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem_)));
  }
  void run() override {
    const problem& p = p_;
    const ssd_args g{q_.get(),
                     v_.get(),
                     o_.get(),
                     a_.get<float>(),
                     skip_.get<float>(),
                     bias_.get<float>(),
                     dt_raw_.get<float>(),
                     b_.get<float>(),
                     c_.get<float>(),
                     p.type == dtype::bf16};
    launch(ssd_kernel, static_cast<unsigned>(p.B * p.H), threads, static_cast<std::size_t>(smem_), stream(), p, g);
    ATTN_CUDA_CHECK_LAUNCH();
  }

 private:
  std::int64_t smem_;
  device_buffer a_, skip_, bias_, dt_raw_, b_, c_;
};

}  // namespace
}  // namespace cuda

void add_cuda_rows_ssd(std::vector<variant>& rows) {
  rows.push_back({
      .name = "ssd",
      .backend = backend_kind::cuda,
      .math = attention_math::ssd,
      .summary = "Mamba-2 SSD, chunked: a CTA per (batch, head) walks 64-step chunks, C B^T, (C B^T o L)(dt x), "
                 "exp(A_cs) C S and the state update on tensor cores (mma.sync), the N x d state in shared memory",
      .writes_lse = false,
      .caps = {.dtypes = {dtype::fp16, dtype::bf16}, .masks = mask_causal, .gqa = false},
      .tags = {tag::scan},
      .check =
          [](const problem& p) {
            if (const support s = ssd_support(p); !s.ok) return s;
            if (p.dstate > cuda::max_state || p.d > cuda::max_head)
              return support::no("ssd (cuda) holds C, B (64 x N) and the state (N x d) in shared memory: needs N <= " +
                                 std::to_string(cuda::max_state) + " and d <= " + std::to_string(cuda::max_head) +
                                 " (got N=" + std::to_string(p.dstate) + ", d=" + std::to_string(p.d) + ")");
            return cuda::check_launch(
                {.grid_x = p.B * p.H, .threads = cuda::threads, .smem_bytes = cuda::smem_bytes(p)}, "ssd");
          },
      .model =
          [](const problem& p) {
            problem q = p;
            q.Bc = cuda::chunk;
            return model_figures{model_flops_ssd(q), model_flops_executed_ssd(q), model_bytes_ssd_cuda(p),
                                 model_exps_ssd(q)};
          },
      .memory_bytes = memory_bytes_ssd_cuda,
      .make_runner = [](const problem& p, bool) -> std::unique_ptr<runner> {
        return std::make_unique<cuda::ssd_runner>(p);
      },
  });
}

}  // namespace attnbench

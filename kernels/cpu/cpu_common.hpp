// Shared pieces of the CPU backend: the runner base (global arrays, NaN
// poisoning, per-thread byte counters), counted copies between the global
// arrays and a thread's tile buffers, single-threaded tile products
// (tile_gemm.hpp) and vectorised row operations.
//
// "Global memory" on the CPU means the runner's arrays (Q, K, V, O, lse and
// each algorithm's workspace); "on-chip" means a thread's tile buffers. Every
// read or write of global memory goes through load()/store() (copies),
// load_transposed() or read_tile() (a tile used where it lies, its rows being
// contiguous), which count `elem` bytes per element: the size of the array's
// dtype (4 by default: fp32 arrays and the workspace). The arrays hold floats
// whatever the dtype (values already rounded to it, the CPU computes in
// fp32); flash2 and sparse at bf16 or e4m3 pass dtype_bytes(p.type) for Q, K,
// V and output_bytes(p.type) for O, as kernels/models/ counts them.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "kernels/models/models.hpp"
#include "kernels/registry.hpp"

namespace attnbench::cpu {

// ---- byte counting -------------------------------------------------------------
class byte_counter {
 public:
  void reset();                  // one slot per OpenMP thread, zeroed
  void add(std::int64_t bytes);  // into the calling thread's slot
  std::int64_t total() const;

 private:
  struct alignas(64) slot {
    std::int64_t n = 0;
  };
  std::vector<slot> slots_;
};

// Counted copies of `n` elements of `elem` bytes each in the array's dtype
// (global -> tile, tile -> global).
inline void load(float* tile, const float* global, std::int64_t n, byte_counter& c, std::int64_t elem = 4) {
  std::memcpy(tile, global, sizeof(float) * n);
  c.add(elem * n);
}
inline void store(float* global, const float* tile, std::int64_t n, byte_counter& c, std::int64_t elem = 4) {
  std::memcpy(global, tile, sizeof(float) * n);
  c.add(elem * n);
}
// A tile read where it lies (its rows are already contiguous): counted as
// load() counts, no copy.
inline const float* read_tile(const float* global, std::int64_t n, byte_counter& c, std::int64_t elem = 4) {
  c.add(elem * n);
  return global;
}
// Counted load of a rows x cols row-major block stored transposed:
// tile[x * ld + r] = global[r * cols + x] (ld >= rows).
void load_transposed(float* tile, std::int64_t ld, const float* global, std::int64_t rows, std::int64_t cols,
                     byte_counter& c, std::int64_t elem = 4);
inline void fill_store(float* global, float value, std::int64_t n, byte_counter& c, std::int64_t elem = 4) {
  for (std::int64_t x = 0; x < n; ++x) global[x] = value;
  c.add(elem * n);
}

// ---- exponential counting ---------------------------------------------------------------
// The exponentials a kernel executes (exp_approx, exp_approx16 lanes of real rows and keys,
// std::exp), counted per thread as bytes are and reported by runner::counted_exps; tests hold
// them to the model's exps (kernels/models/models.hpp). The count is added where the
// exponentials are computed: in the row operations below (an exp_counter argument) and by the
// tile_softmax functions' return value.
using exp_counter = byte_counter;

// ---- tile products (row-major, single-threaded; tile_gemm.hpp) ---------------------
// C[m x n] = alpha * A[m x k] * B[n x k]^T + beta * C
void gemm_nt(std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a, std::int64_t lda,
             const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc);
// C[m x n] = alpha * A[m x k] * B[k x n] + beta * C
void gemm_nn(std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a, std::int64_t lda,
             const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc);
// C[m x n] = alpha * A[k x m]^T * B[k x n] + beta * C
void gemm_tn(std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a, std::int64_t lda,
             const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc);

// Keeps OpenBLAS single-threaded while alive (the kernels parallelise with
// OpenMP themselves), restoring the previous thread count afterwards.
class blas_single_thread {
 public:
  blas_single_thread();
  ~blas_single_thread();
  blas_single_thread(const blas_single_thread&) = delete;
  blas_single_thread& operator=(const blas_single_thread&) = delete;

 private:
  int saved_;
};

// ---- row operations (vectorised; dispatched on the CPU's ISA at load time) --------
float row_max(const float* x, std::int64_t n);  // -inf for n == 0
// x[j] = exp(x[j] - m) for finite m (exp(-inf) = 0); returns the sum. n exps.
float exp_sub_sum(float* x, std::int64_t n, float m, exp_counter& exps);
void scale(float* x, std::int64_t n, float a);
// x[j] = elu(x[j]) + 1. n exps (vectorised: the exp of every element, then a select).
void elu1(float* x, std::int64_t n, exp_counter& exps);
float sum(const float* x, std::int64_t n);
// Bahdanau's score: sum_c v[c] tanh(q[c] + k[c]), tanh(x) = 1 - 2 / (exp(2x) + 1) on the
// FPU (exp_approx, saturating to +-1). n exps, which the caller counts (once per tile: a
// count per score costs a thread lookup each) as the exp roof counts tanh: one
// multi-function op each (a GPU's tanh.approx, like its ex2.approx).
float tanh_score(const float* q, const float* k, const float* v, std::int64_t n);
// x[j] = bf16(x[j]) (round to nearest even; infinities and NaN unchanged): O
// written in bf16 (output_dtype of bf16 and e4m3), kept as floats.
void round_bf16(float* x, std::int64_t n);
// The P of the fp8 path (FA3's Max_offset = 8): x[j] = e4m3(256 x[j]) for
// x[j] in [0, 1], so P = 2^8 exp(s - m) lies in (0, 256] and every p >= 2^-14
// becomes an e4m3 normal (>= 2^-6) instead of a subnormal.
void offset_round_e4m3(float* x, std::int64_t n);
inline constexpr float fp8_p_offset = 256.0f;               // 2^8
inline constexpr float fp8_ln_offset = 5.545177444479562f;  // ln 2^8

// Masks row i of a score tile holding keys [c0, c0 + n): entries of keys not
// visible to i become `masked` (-inf for softmax, 0 for linear attention).
// Whole-row fast path when every key of the tile is visible (core/mask.hpp).
void mask_row(const problem& p, std::int64_t i, std::int64_t c0, float* row, std::int64_t n, float masked);
// The same for a row of scores stored with a stride (column i of a transposed
// tile: row[j * stride] holds key c0 + j), of query head h (a per-head block
// layout differs between heads; every other term is the same for all).
void mask_strided(const problem& p, std::int64_t h, std::int64_t i, std::int64_t c0, float* row, std::int64_t stride,
                  std::int64_t n, float masked);

// ---- parallel loop helpers -----------------------------------------------------------
int max_threads();
int thread_id();
// Whether a run is big enough to share among threads: below ~1M
// multiply-adds (B*H*Nq*Nkv*d) thread start-up and barriers cost more than
// they save, and on a loaded machine spinning threads cost far more.
inline bool worth_threads(const problem& p) { return p.B * p.H * p.Nq * p.Nkv * p.d >= (std::int64_t{1} << 20); }

// Task t of a grid over (query tile, batch, head), heaviest query tiles first
// (with a causal mask the last tiles visit the most keys).
struct qbh_task {
  std::int64_t qt, b, h;
};
inline qbh_task qbh_task_of(const problem& p, std::int64_t t) {
  const std::int64_t bh = t % (p.B * p.H);
  return {num_q_tiles(p) - 1 - t / (p.B * p.H), bh / p.H, bh % p.H};
}

// Flat offsets of the layouts in core/problem.hpp.
inline std::int64_t q_offset(const problem& p, std::int64_t b, std::int64_t h, std::int64_t i) {
  return ((b * p.H + h) * p.Nq + i) * p.d;
}
inline std::int64_t kv_offset(const problem& p, std::int64_t b, std::int64_t hkv, std::int64_t j) {
  return ((b * p.Hkv + hkv) * p.Nkv + j) * p.d;
}

// ---- runner base -------------------------------------------------------------------
// Owns the global arrays. Derived classes implement run() and allocate their
// workspace in their constructor (outside the timed region).
class cpu_runner : public runner {
 public:
  cpu_runner(const problem& p, bool writes_lse);
  void set_inputs(const host_inputs& in) override;
  void poison_outputs() override;
  host_outputs get_outputs() override;
  std::int64_t counted_bytes() const override { return bytes_.total(); }
  std::int64_t counted_exps() const override { return exps_.total(); }

 protected:
  // Zeroes both counters: the first thing every run() does.
  void reset_counters() {
    bytes_.reset();
    exps_.reset();
  }
  problem p_;
  std::vector<float> q_, k_, v_, o_, lse_;
  byte_counter bytes_;
  exp_counter exps_;
};

// Runners of each algorithm (one file each).
std::unique_ptr<runner> make_naive_runner(const problem& p, bool writes_lse);
std::unique_ptr<runner> make_naive_gqa_expand_runner(const problem& p, bool writes_lse);
std::unique_ptr<runner> make_flash1_runner(const problem& p, bool writes_lse);
std::unique_ptr<runner> make_flash2_runner(const problem& p, bool writes_lse);
std::unique_ptr<runner> make_sparse_runner(const problem& p, bool writes_lse);
std::unique_ptr<runner> make_linear_runner(const problem& p, bool writes_lse);
// Backward runners (p.pass bwd / fwd_bwd; backward_runner.hpp, docs/backward.md).
std::unique_ptr<runner> make_naive_backward_runner(const problem& p, bool writes_lse);
std::unique_ptr<runner> make_flash2_backward_runner(const problem& p, bool writes_lse);
std::unique_ptr<runner> make_sparse_backward_runner(const problem& p, bool writes_lse);

// The scans (selective_scan.cpp, ssd.cpp, wkv.cpp, wkv6.cpp; docs/alternatives.md). A fault plants a known bug
// for the negative controls of tests/cpu/test_scan_rows.cpp; rows run with none.
enum class scan_fault {
  none,
  drop_carry,            // the state restarts at every chunk: the carry is lost
  decay_twice,           // the decay applied twice per step (selective scan: one more exp per state element)
  carry_through_memory,  // right values, but the carry stored and reloaded per chunk: bytes the model does not count
};
std::unique_ptr<runner> make_selective_scan_runner(const problem& p, bool writes_lse,
                                                   scan_fault fault = scan_fault::none);
std::unique_ptr<runner> make_wkv_runner(const problem& p, bool writes_lse, scan_fault fault = scan_fault::none);
std::unique_ptr<runner> make_wkv6_runner(const problem& p, bool writes_lse, scan_fault fault = scan_fault::none);
std::unique_ptr<runner> make_ssd_runner(const problem& p, bool writes_lse, scan_fault fault = scan_fault::none);

// Defects a test plants in the approximation kernels (the negative controls of their
// reference checks); the rows run `none`.
enum class planted_defect {
  none,
  linformer_projection_transposed,
  performer_no_stabiliser,
  additive_tanh_identity,
  routing_wrong_cluster,  // cluster c's queries attend to cluster c + 1's keys
};
std::unique_ptr<runner> make_linformer_runner(const problem& p, bool writes_lse,
                                              planted_defect defect = planted_defect::none);
std::unique_ptr<runner> make_performer_runner(const problem& p, bool writes_lse,
                                              planted_defect defect = planted_defect::none);
std::unique_ptr<runner> make_additive_runner(const problem& p, bool writes_lse,
                                             planted_defect defect = planted_defect::none);
std::unique_ptr<runner> make_routing_runner(const problem& p, bool writes_lse,
                                            planted_defect defect = planted_defect::none);

}  // namespace attnbench::cpu

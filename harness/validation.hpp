// Validation: one run of a prepared runner on poisoned outputs, then
//  - every output checked: every element of O and lse scanned for bad
//    values (non-finite, or an lse other than -inf in a row without keys), and every
//    row's relative error against an fp32 reference of all rows -- on the device by the
//    cuda backend (backend::check_outputs, harness/cuda/device_check.hpp), on the host
//    otherwise (kernels/reference/row_check.hpp, kernels/reference/reference_fp32.hpp);
//  - sampled rows against two fp64 references: on the rounded inputs the kernel was
//    given (its own error, rel_err, held to the dtype's tolerance) and on the fp32
//    originals they were rounded from (the end-to-end error of the dtype, e2e_rel_err);
//  - an approximation of softmax attention (approximates_softmax): the same sampled rows
//    against exact fp64 softmax attention, approx_err_vs_exact, reported and never held
//    to a tolerance.
// A bad element fails the entry (validation_failure); the worst row's error is held to
// row_tolerance. Inputs and references are cached so that the variants, tiles and
// masks of one shape share them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "harness/run_result.hpp"
#include "harness/sweep.hpp"
#include "harness/tensors.hpp"
#include "kernels/reference/reference_fp32.hpp"

namespace attnbench {

class backend;

// Validation rows for a problem: every row when small, fewer for long Nkv so the
// fp64 reference stays well under a second.
std::int64_t validation_rows(const problem& p);

// Inputs of the last shape seen (the mask and tiles do not change them) and the
// fp64 reference rows of the last problem (tiles ignored), so the variants,
// tile shapes and masks of one shape share them.
class reference_cache {
 public:
  // The unrounded inputs of a shape (default: make_original_inputs(p)); the
  // cache rounds them with round_inputs. Tests plant wrong ones.
  using originals_maker = std::function<host_inputs(const problem&)>;
  reference_cache();
  explicit reference_cache(originals_maker make_originals);

  // What the kernel is given: the originals rounded to p.type (e4m3: with scales).
  host_inputs& inputs(const problem& p);
  // The fp32 values the inputs were rounded from; for fp32 the inputs themselves
  // (no second copy is kept).
  const host_inputs& originals(const problem& p);
  struct rows_and_ref {
    std::vector<std::int64_t> rows;
    std::vector<double> o, lse;  // on inputs(p)
    std::vector<double> e2e_o;   // on originals(p), same rows; empty for fp32 (the same reference)
  };
  const rows_and_ref& reference(const problem& p, attention_math m);
  // Every row in fp32 on the host (reference_fp32_all_rows) for p and m; null when it
  // would need more than half of `free_bytes`, or for a math other than softmax and linear
  // (no fp32 twin: its rows are scanned, and the fp64 sample compared).
  const reference_all_rows* all_rows(const problem& p, attention_math m, std::int64_t free_bytes);
  // The fp64 gradients (pass bwd / fwd_bwd, docs/backward.md) on inputs(p): sampled query
  // rows (dQ) and key rows (dK, dV; each needs every query row's statistics).
  struct grads_and_ref {
    std::vector<std::int64_t> q_rows, kv_rows;  // flat: (b H + h) Nq + i; (b Hkv + hkv) Nkv + j
    std::vector<double> dq, dk, dv;
  };
  const grads_and_ref& gradients(const problem& p);
  // The rows of p without a visible key, [H * Nq] (kernels/reference/row_check.hpp).
  const std::vector<std::uint8_t>& rows_without_keys(const problem& p);
  // Frees the cached data that does not belong to p.
  void keep_only(const problem& p);

 private:
  static problem shape_of(problem p);    // mask and tiles reset
  static problem problem_of(problem p);  // tiles reset
  originals_maker make_originals_;
  problem shape_{}, problem_{};
  std::unique_ptr<host_inputs> inputs_, originals_;           // originals_: null for fp32
  std::unique_ptr<rows_and_ref> refs_[attention_math_count];  // by attention_math
  std::unique_ptr<reference_all_rows> all_rows_[attention_math_count];
  bool all_rows_tried_[attention_math_count] = {};
  std::unique_ptr<std::vector<std::uint8_t>> empty_rows_;
  std::unique_ptr<grads_and_ref> grads_;
};

// Key rows to validate dK and dV, as flat indices (b * Hkv + hkv) * Nkv + j (sample_rows over
// the key rows of every KV head, or of fewer heads spread from the last one where the query
// rows' statistics of all of them would cost more than the budget in validation.cpp).
std::vector<std::int64_t> validation_kv_rows(const problem& p);

struct validation_run {
  validation_result result;
  double run_seconds = 0;  // wall time of the one run (the timing step's pilot for slow runs)
};

// r has its inputs set. Throws backend_error (wrong output size, backend failures).
validation_run validate(backend& be, runner& r, const configuration& c, reference_cache& cache);

// Empty when the validated run may be timed; else why its entry fails: bad output
// elements, e.g. "non-finite outputs: 4160 elements in 64 rows of 32768, the first at
// (b 0, h 3, row 1984)".
std::string validation_failure(const problem& p, const validation_result& v);

}  // namespace attnbench

// Validation: one run of a prepared runner on poisoned outputs, compared on
// sampled rows with the fp64 reference. Inputs and reference rows are cached
// so that the variants, tiles and masks of one shape share them.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "harness/run_result.hpp"
#include "harness/sweep.hpp"
#include "harness/tensors.hpp"

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
  host_inputs& inputs(const problem& p);
  struct rows_and_ref {
    std::vector<std::int64_t> rows;
    std::vector<double> o, lse;
  };
  const rows_and_ref& reference(const problem& p, attention_math m);
  // Frees the cached data that does not belong to p.
  void keep_only(const problem& p);

 private:
  static problem shape_of(problem p);    // mask and tiles reset
  static problem problem_of(problem p);  // tiles reset
  problem shape_{}, problem_{};
  std::unique_ptr<host_inputs> inputs_;
  std::unique_ptr<rows_and_ref> refs_[2];
};

struct validation_run {
  validation_result result;
  double run_seconds = 0;  // wall time of the one run (the timing step's pilot for slow runs)
};

// r has its inputs set. Throws backend_error (wrong output size, backend failures).
validation_run validate(backend& be, runner& r, const configuration& c, reference_cache& cache);

}  // namespace attnbench

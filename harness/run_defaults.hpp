// The defaults of a run, in one place: what a sweep uses per backend when the
// command line and the sweep leave a setting out (docs/cli.md). Axis defaults
// (seq 1024, heads 8, ...) belong to the axis table of the sweep.
#pragma once

#include <vector>

#include "core/variant.hpp"

namespace attnbench {

struct run_defaults {
  int repetitions;            // Google Benchmark repetitions; the median is reported
  double rep_time_s;          // target time of one repetition
  std::vector<dtype> dtypes;  // when a sweep names none
};

inline run_defaults defaults_for(backend_kind b) {
  if (b == backend_kind::cuda) return {5, 0.02, {dtype::bf16, dtype::fp16}};
  return {3, 0.03, {dtype::fp32}};
}

}  // namespace attnbench

// The CUDA backend's scan of one run's outputs: one thread per query row
// computes the row's verdict (kernels/reference/row_check.hpp: bad elements of O and
// lse, and the row's error against the on-device fp32 reference when given), written
// to a per-row array the host folds with reduce_verdicts. Outside the timed region.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/problem.hpp"
#include "kernels/reference/row_check.hpp"

namespace attnbench::cuda {

struct row_check_args {
  std::int64_t rows = 0;  // B * H * Nq
  std::int64_t d = 0;
  std::int64_t hq = 1;  // H * Nq: a row's index into `empty` is row % hq
  const void* o = nullptr;
  dtype o_type = dtype::fp32;           // fp32, fp16 or bf16 (output_dtype of the problem's dtype)
  const float* lse = nullptr;           // null: the row writes none
  const std::uint8_t* empty = nullptr;  // [H * Nq], 1: the row has no visible key
  const float* ref_o = nullptr;         // [rows, d] fp32 reference; null: scan only
  const float* ref_lse = nullptr;       // [rows]; null: no lse to compare
  row_verdict* out = nullptr;           // [rows]
};

// Enqueues the check on `st` (device pointers in a).
void row_check_device(const row_check_args& a, cudaStream_t st);

}  // namespace attnbench::cuda

// One forward launch of a flash2-family row, set up outside the timed region: the row's plan
// and instantiation, the mask's device data (sparse terms, a layout's bits and, for a listed
// walk, the key-tile lists) and the split-KV workspace. The forward runner runs it; the
// backward runner runs it for its O and lse, so a bwd entry's forward is exactly its row's.
// Host C++ (flash2_runner.cpp).
#pragma once

#include <cuda_runtime.h>

#include "kernels/cuda/common/device_mask.cuh"
#include "kernels/cuda/flash2/flash2_plan.hpp"

namespace attnbench::cuda {

class flash2_forward_launch {
 public:
  // Throws backend_error when the row has no instantiation for p. The copies are enqueued on st.
  flash2_forward_launch(const problem& p, flash2_row row, int forced_splits, cudaStream_t st);
  // O and lse (splits == 1) of q, k, v, enqueued on st.
  void launch(const void* q, const void* k, const void* v, void* o, float* lse, cudaStream_t st);
  // p with mask.sparse pointing at the device copy of the sparse terms.
  const problem& device_problem() const { return mask_.p; }

 private:
  const flash2_config* cfg_ = nullptr;
  flash2_params prm_;
  device_mask mask_;         // the sparse terms on the device
  kv_tile_list tiles_host_;  // what tiles_ was copied from
  device_tile_list tiles_;
  device_buffer o_part_, lse_part_;
};

}  // namespace attnbench::cuda

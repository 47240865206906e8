// Models every softmax variant shares: useful FLOPs and the minimum traffic.
// Sums run in 64-bit integers and are converted to double once, so they stay exact.
#include "kernels/models/models.hpp"

#include <algorithm>

#include "kernels/models/model_terms.hpp"

namespace attnbench {

using namespace model_terms;

double model_flops_softmax(const problem& p) {
  return 4.0 * p.d * static_cast<double>(visible_pairs_per_batch(p)) * p.B;
}

double model_bytes_min(const problem& p) { return static_cast<double>(io_bytes(p)); }

double model_exps_min(const problem& p) { return static_cast<double>(visible_pairs_per_batch(p)) * p.B; }

}  // namespace attnbench

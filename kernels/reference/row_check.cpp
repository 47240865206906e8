#include "kernels/reference/row_check.hpp"

#include <omp.h>
#include <algorithm>

#include "core/mask.hpp"

namespace attnbench {

namespace {

// Adds row r's verdict to a partial result.
void fold(full_check& f, std::int64_t r, const row_verdict& v, bool compared) {
  if (v.bad > 0) {
    f.bad += v.bad;
    ++f.bad_rows;
    if (f.first_bad_row < 0 || r < f.first_bad_row) f.first_bad_row = r;
    return;  // its error is not a number to compare
  }
  if (!compared) return;
  if (f.worst_row < 0 || v.err > f.worst_err || (v.err == f.worst_err && r < f.worst_row)) {
    f.worst_err = v.err;
    f.worst_row = r;
  }
  f.lse_max_abs = std::max(f.lse_max_abs, static_cast<double>(v.lse_diff));
}

void merge(full_check& into, const full_check& f) {
  into.bad += f.bad;
  into.bad_rows += f.bad_rows;
  if (f.first_bad_row >= 0 && (into.first_bad_row < 0 || f.first_bad_row < into.first_bad_row))
    into.first_bad_row = f.first_bad_row;
  if (f.worst_row >= 0 && (into.worst_row < 0 || f.worst_err > into.worst_err ||
                           (f.worst_err == into.worst_err && f.worst_row < into.worst_row))) {
    into.worst_err = f.worst_err;
    into.worst_row = f.worst_row;
  }
  into.lse_max_abs = std::max(into.lse_max_abs, f.lse_max_abs);
}

// Rows in parallel, each thread folding its rows, then merged in thread order.
template <class VerdictOf>
full_check check_all(std::int64_t rows, bool compared, VerdictOf verdict_of) {
  full_check out;
  out.rows_total = rows;
  out.rows_compared = compared ? rows : 0;
  std::vector<full_check> parts(static_cast<std::size_t>(omp_get_max_threads()));
#pragma omp parallel if (rows > 4096)
  {
    full_check& mine = parts[static_cast<std::size_t>(omp_get_thread_num())];
#pragma omp for schedule(static)
    for (std::int64_t r = 0; r < rows; ++r) fold(mine, r, verdict_of(r), compared);
  }
  for (const full_check& f : parts) merge(out, f);
  return out;
}

}  // namespace

full_check reduce_verdicts(std::span<const row_verdict> verdicts, bool compared) {
  return check_all(static_cast<std::int64_t>(verdicts.size()), compared,
                   [&](std::int64_t r) { return verdicts[static_cast<std::size_t>(r)]; });
}

std::vector<std::uint8_t> rows_without_keys(const problem& p) {
  std::vector<std::uint8_t> empty(static_cast<std::size_t>(p.H * p.Nq), 0);
  const std::int64_t heads = p.mask.per_head() ? p.H : 1;  // the same rows for every head otherwise
#pragma omp parallel for schedule(dynamic, 256) collapse(2) if (p.mask.has_sparse())
  for (std::int64_t h = 0; h < heads; ++h)
    for (std::int64_t i = 0; i < p.Nq; ++i)
      empty[static_cast<std::size_t>(h * p.Nq + i)] = visible_keys(p, h, i) == 0 ? 1 : 0;
  for (std::int64_t h = heads; h < p.H; ++h) std::copy_n(empty.begin(), p.Nq, empty.begin() + h * p.Nq);
  return empty;
}

full_check check_rows_host(const problem& p, std::span<const float> o, std::span<const float> lse,
                           std::span<const std::uint8_t> empty_rows, std::span<const float> ref_o,
                           std::span<const float> ref_lse) {
  const std::int64_t d = p.d, hq = p.H * p.Nq;
  const bool has_lse = !lse.empty(), compared = !ref_o.empty(), has_ref_lse = !ref_lse.empty();
  return check_all(p.rows(), compared, [&](std::int64_t r) {
    const float* row = o.data() + r * d;
    return row_verdict_of([row](std::int64_t x) { return row[x]; }, d, compared ? ref_o.data() + r * d : nullptr,
                          has_lse, has_lse ? lse[static_cast<std::size_t>(r)] : 0.f, has_ref_lse,
                          has_ref_lse ? ref_lse[static_cast<std::size_t>(r)] : 0.f,
                          empty_rows[static_cast<std::size_t>(r % hq)] != 0);
  });
}

}  // namespace attnbench

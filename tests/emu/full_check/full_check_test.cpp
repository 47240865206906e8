// The check of every output, in the host emulator: the cuda backend's check of every output
// (harness/cuda/device_check.hpp: the row-check kernel of kernels/cuda/reference/
// row_check.cu and the on-device fp32 reference), through the harness's validate()
// with a backend that forwards check_outputs exactly as harness/cuda/cuda_backend.cpp
// does, on registry rows run by the emulator.
//
//   attnbench_emu_full_check agree      the kernel's per-row verdicts, folded, equal the host
//                                       scan's (check_rows_host) on planted bad elements: NaN and
//                                       inf in O, NaN lse, a finite lse in a row without keys,
//                                       -inf in one with keys; O in fp32, fp16 and bf16; with and
//                                       without a reference
//   attnbench_emu_full_check rows       correct rows pass with every row compared on the device:
//                                       flash1 (fp16, causal with rows without keys), linear
//                                       (bf16 causal), sparse (flash2's, bf16, random blocks: the
//                                       sparse terms copied to the device), flash2_splitkv (decode,
//                                       GQA), flash1 GQA with a local+global mask; the reference is
//                                       made once per problem (tiles aside)
//   attnbench_emu_full_check skip_tile  flash1 bf16, B1 H8 Nq4096 Nkv4 (32768 rows, 256 sampled):
//                                       the entry passes. The negative control
//                                       emu.neg.full_check_skip_tile runs it on a flash1 that never
//                                       writes one interior query tile that the fp64 sample misses
//                                       (head 5's tile 38):
//                                       the entry must fail, naming the tile's first row
//   attnbench_emu_full_check one_row    flash1 bf16, B1 H2 N256 causal: passes. Its control
//                                       emu.neg.full_check_one_row: a flash1 wrong by 25 % in one
//                                       (sampled) row, 355, must fail the worst-row gate while rel_err
//                                       (pooled over the sample) stays within the tolerance
//   attnbench_emu_full_check baselines  cublas_unfused at bf16 and fp16: 4 x its worst row is
//                                       within row_tolerance (the rule that set it)
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/cuda/device_buffer.cuh"
#include "core/mask.hpp"
#include "harness/backend.hpp"
#include "harness/cuda/device_check.hpp"
#include "harness/tensors.hpp"
#include "harness/validation.hpp"
#include "kernels/cuda/reference/row_check.cuh"
#include "kernels/reference/reference_fp32.hpp"
#include "kernels/registry.hpp"

namespace attnbench {
namespace {

int failures = 0;

void check(bool ok, const std::string& what) {
  std::printf("%s %s\n", ok ? "ok  " : "FAIL", what.c_str());
  if (!ok) ++failures;
}

// The cuda backend as the harness sees it, minus timing and the context: waits on the
// stream, and check_outputs forwarded as harness/cuda/cuda_backend.cpp forwards it.
class emu_cuda_backend final : public backend {
 public:
  backend_kind kind() const override { return backend_kind::cuda; }
  nlohmann::json context(bool) override { return nlohmann::json::object(); }
  std::int64_t free_memory_bytes() override { return std::int64_t{8} << 30; }
  bool manual_time() const override { return true; }
  double timed_sample(runner&, int, const timing_options&) override { throw backend_error("not timed here"); }
  void synchronize() override { ATTN_CUDA_CHECK(cudaStreamSynchronize(cuda::stream())); }
  void range_push(const std::string&) override {}
  void range_pop() override {}
  std::optional<full_check> check_outputs(runner& r, const host_inputs& in, attention_math m,
                                          std::span<const std::uint8_t> rows_without_keys) override {
    const auto* dr = dynamic_cast<const cuda::device_runner*>(&r);
    if (!dr) return std::nullopt;
    return checker.check(*dr, in, m, rows_without_keys, free_memory_bytes());
  }
  void keep_check_data(const problem& p) override { checker.keep_only(p); }
  cuda::device_output_check checker;
};

problem make(std::int64_t B, std::int64_t H, std::int64_t Hkv, std::int64_t Nq, std::int64_t Nkv, std::int64_t d,
             dtype t, const char* mask) {
  problem p;
  p.B = B, p.H = H, p.Hkv = Hkv, p.Nq = Nq, p.Nkv = Nkv, p.d = d, p.type = t;
  p.mask = parse_mask(mask);
  validate(p);
  return p;
}

struct validated {
  validation_result v;
  std::string failure;  // validation_failure: the entry's error when not empty
};

// One configuration of registry row `name` through validate(), as the sweep runs it.
validated run_row(emu_cuda_backend& be, reference_cache& cache, const char* name, problem p) {
  const variant* row = find_variant(name, backend_kind::cuda);
  if (!row) throw std::runtime_error(std::string("no cuda row ") + name);
  p = row->resolved(p);
  configuration c{row, p, "emu", row->benchmark_name(p), row->supports(p)};
  if (!c.sup.ok) throw std::runtime_error(c.name + ": " + c.sup.reason);
  cache.keep_only(p);
  be.keep_check_data(p);
  std::unique_ptr<runner> r = row->make(p);
  r->set_inputs(cache.inputs(p));
  validated out;
  out.v = validate(be, *r, c, cache).result;
  out.failure = validation_failure(p, out.v);
  std::printf(
      "     %s: rows %lld of %lld checked, %lld bad, rel_err %.2e, worst row %.2e at %lld (tol %.2e / row %.2e)%s%s\n",
      c.name.c_str(), static_cast<long long>(out.v.rows_checked), static_cast<long long>(out.v.rows_total),
      static_cast<long long>(out.v.nonfinite_outputs), out.v.rel_err, out.v.worst_row_err,
      static_cast<long long>(out.v.worst_row), out.v.tolerance, out.v.row_tolerance, out.failure.empty() ? "" : "; ",
      out.failure.c_str());
  return out;
}

bool passes(const validated& r) {
  return r.failure.empty() && r.v.err_ok && r.v.nonfinite_outputs == 0 && r.v.rows_checked == r.v.rows_total;
}

// ---- agree ----------------------------------------------------------------------------

std::uint16_t bits_of(dtype t, float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, 4);
  if (t == dtype::bf16) {
    if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;
    return static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  }
  const _Float16 h = static_cast<_Float16>(x);
  std::uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}
float from_bits(dtype t, std::uint16_t b) {
  if (t == dtype::bf16) {
    const std::uint32_t u = std::uint32_t(b) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  _Float16 h;
  std::memcpy(&h, &b, 2);
  return static_cast<float>(h);
}

template <class T>
cuda::device_buffer upload(const std::vector<T>& x) {
  cuda::device_buffer b(x.size() * sizeof(T));
  ATTN_CUDA_CHECK(cudaMemcpy(b.get(), x.data(), b.bytes(), cudaMemcpyHostToDevice));
  return b;
}

void case_agree() {
  const problem p = make(2, 3, 3, 20, 12, 16, dtype::fp32, "causal");  // rows i < 8 see no key
  const host_inputs in = make_inputs(p, 99);
  const reference_all_rows ref = reference_fp32_all_rows(attention_math::softmax, in);
  const std::vector<std::uint8_t> empty = rows_without_keys(p);
  std::mt19937_64 gen(5);
  std::normal_distribution<float> noise(0.f, 1e-3f);
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (dtype ot : {dtype::fp32, dtype::fp16, dtype::bf16}) {
    std::vector<float> o = ref.o, lse = ref.lse;
    for (float& x : o) x += x == 0.f ? 0.f : noise(gen);
    for (float& x : lse) x += std::isinf(x) ? 0.f : noise(gen);
    const std::int64_t d = p.d;
    o[41 * d + 3] = nan;   // row 41
    o[41 * d + 9] = -inf;  // same row: 2 bad elements, 1 bad row
    o[77 * d + 0] = inf;   // row 77
    lse[30] = nan;         // a row with keys
    lse[2] = 0.5f;         // a row without keys must hold -inf
    lse[109] = -inf;       // a row with keys must not
    // O as the kernel stores it (fp16/bf16 bits), and the float values the host reads.
    cuda::device_buffer o_dev;
    if (ot == dtype::fp32) {
      o_dev = upload(o);
    } else {
      std::vector<std::uint16_t> b(o.size());
      for (std::size_t i = 0; i < o.size(); ++i) b[i] = bits_of(ot, o[i]), o[i] = from_bits(ot, b[i]);
      o_dev = upload(b);
    }
    cuda::device_buffer lse_dev = upload(lse), empty_dev = upload(empty), ref_dev = upload(ref.o),
                        ref_lse_dev = upload(ref.lse);
    for (bool with_ref : {false, true}) {
      cuda::device_buffer out(static_cast<std::size_t>(p.rows()) * sizeof(row_verdict));
      cuda::row_check_args a;
      a.rows = p.rows(), a.d = d, a.hq = p.H * p.Nq, a.o = o_dev.get(), a.o_type = ot;
      a.lse = lse_dev.get<const float>(), a.empty = empty_dev.get<const std::uint8_t>();
      a.ref_o = with_ref ? ref_dev.get<const float>() : nullptr;
      a.ref_lse = with_ref ? ref_lse_dev.get<const float>() : nullptr;
      a.out = out.get<row_verdict>();
      cuda::row_check_device(a, cuda::stream());
      std::vector<row_verdict> v(static_cast<std::size_t>(p.rows()));
      ATTN_CUDA_CHECK(cudaMemcpy(v.data(), out.get(), out.bytes(), cudaMemcpyDeviceToHost));
      const full_check dev = reduce_verdicts(v, with_ref);
      const full_check host =
          check_rows_host(p, o, lse, empty, with_ref ? std::span<const float>(ref.o) : std::span<const float>(),
                          with_ref ? std::span<const float>(ref.lse) : std::span<const float>());
      const std::string tag = std::string(to_string(ot)) + (with_ref ? " with reference" : " scan only");
      check(dev.bad == 6 && dev.bad_rows == 5 && dev.first_bad_row == 2,
            "agree " + tag + ": the kernel counts 6 bad elements in 5 rows, the first in row 2 (got " +
                std::to_string(dev.bad) + " in " + std::to_string(dev.bad_rows) + ", first " +
                std::to_string(dev.first_bad_row) + ")");
      check(dev.bad == host.bad && dev.bad_rows == host.bad_rows && dev.first_bad_row == host.first_bad_row &&
                dev.rows_compared == host.rows_compared && dev.worst_row == host.worst_row &&
                std::fabs(dev.worst_err - host.worst_err) <= 1e-5 * host.worst_err + 1e-12 &&
                std::fabs(dev.lse_max_abs - host.lse_max_abs) <= 1e-6,
            "agree " + tag + ": device and host folds equal (worst row " + std::to_string(dev.worst_row) + ")");
      if (with_ref)
        check(dev.worst_row >= 0 && dev.worst_err > 0 && dev.worst_err < 0.05, "agree " + tag + ": a worst row");
    }
  }
}

// ---- rows -----------------------------------------------------------------------------

void case_rows() {
  emu_cuda_backend be;
  reference_cache cache;
  struct one {
    const char* row;
    problem p;
  };
  const one cases[] = {
      {"flash1", make(1, 2, 2, 80, 48, 64, dtype::fp16, "causal")},  // 32 rows per head without keys
      {"linear", make(1, 2, 2, 64, 64, 32, dtype::bf16, "causal")},
      {"sparse", make(1, 2, 2, 128, 128, 64, dtype::bf16, "causal+random:32,2")},
      {"flash2_splitkv", make(1, 4, 1, 4, 300, 64, dtype::fp16, "causal")},
      // No fp32 device twin (the fp64 sample checks them): scanned, not compared with linear's.
      {"performer", make(1, 2, 1, 40, 70, 32, dtype::fp32, "causal")},
      {"routing", make(1, 2, 1, 40, 90, 32, dtype::fp32, "causal")},
      {"flash1", make(2, 4, 2, 40, 60, 32, dtype::bf16, "local:9,3+global:2")},  // last: reused below
  };
  for (const one& c : cases) {
    const validated r = run_row(be, cache, c.row, c.p);
    check(passes(r), std::string("rows: ") + c.row + " passes with every row compared");
  }
  // Tiles do not change the reference: the next configuration of the same problem reuses it.
  const int before = be.checker.references_made();
  problem p = cases[std::size(cases) - 1].p;
  p.Br = p.Bc = 32;
  const validated r = run_row(be, cache, "flash1", p);
  check(passes(r) && be.checker.references_made() == before, "rows: other tiles reuse the kept reference");
  // A row without a twin leaves the kept reference to the next row of the problem (the crossover's
  // scans between the attention rows at 64k) and is not compared with it.
  const problem q = make(1, 2, 1, 40, 70, 32, dtype::fp32, "causal");
  const bool first = passes(run_row(be, cache, "naive", q));
  const int made = be.checker.references_made();
  const validated other = run_row(be, cache, "performer", q);
  const validated again = run_row(be, cache, "naive", q);
  check(first && passes(other) && passes(again) && be.checker.references_made() == made,
        "rows: a row without a twin keeps the reference for the next (made " +
            std::to_string(be.checker.references_made() - made) + " more)");
}

// ---- the two controls -----------------------------------------------------------------

// The tile of rows the negative control's flash1 skips: query tile 38 (rows 2432..2495) of
// head 5, an interior tile none of whose rows the fp64 sample of this shape holds (308 of the
// 496 interior tiles are such: the sampled check alone passed them).
constexpr std::int64_t skip_head = 5, skip_tile = 38;

void case_skip_tile() {
  emu_cuda_backend be;
  reference_cache cache;
  const problem p = make(1, 8, 8, 4096, 4, 64, dtype::bf16, "none");
  // The hole this closes: the sample (validation.cpp) misses the tile.
  const std::vector<std::int64_t> sample = sample_rows(p, validation_rows(p));
  const std::int64_t lo = skip_head * p.Nq + skip_tile * 64, hi = lo + 64;
  bool sampled = false;
  for (std::int64_t r : sample) sampled |= r >= lo && r < hi;
  check(!sampled, "skip_tile: the fp64 sample (" + std::to_string(sample.size()) + " of " + std::to_string(p.rows()) +
                      " rows) holds no row of head 5's query tile 38");
  const validated r = run_row(be, cache, "flash1", p);
  if (!r.failure.empty()) std::printf("skip_tile: the entry fails: %s\n", r.failure.c_str());
  check(passes(r), "skip_tile: flash1 at B1 H8 Nq4096 passes the check of every output");
}

void case_one_row() {
  emu_cuda_backend be;
  reference_cache cache;
  const problem p = make(1, 2, 2, 256, 256, 64, dtype::bf16, "causal");
  const validated r = run_row(be, cache, "flash1", p);
  if (!r.v.err_ok && r.v.rel_err <= r.v.tolerance && r.v.worst_row_err > r.v.row_tolerance)
    std::printf(
        "one_row: the worst-row gate fails the entry: worst row %.3g at row %lld above %.3g, while rel_err %.3g "
        "is within %.3g\n",
        r.v.worst_row_err, static_cast<long long>(r.v.worst_row), r.v.row_tolerance, r.v.rel_err, r.v.tolerance);
  check(passes(r), "one_row: flash1 bf16 B1 H2 N256 causal passes");
}

// The tolerance rule of the worst-row gate (harness/tensors.cpp row_tolerance): at fp16 and
// bf16 a small multiple (4x) of the worst row of the same-precision unfused baseline, capped.
// The baseline itself must stay within it: a wrong-but-finite baseline, or a tolerance set
// below 4x what the baseline does, fails this case (as tests/gpu/tolerance.hpp's cap check).
void case_baselines() {
  emu_cuda_backend be;
  reference_cache cache;
  for (dtype t : {dtype::bf16, dtype::fp16}) {
    const validated r = run_row(be, cache, "cublas_unfused", make(1, 4, 4, 256, 256, 64, t, "causal"));
    check(passes(r) && 4 * r.v.worst_row_err <= r.v.row_tolerance, std::string("baselines: cublas_unfused ") +
                                                                       std::string(to_string(t)) +
                                                                       ": 4 x its worst row is within row_tolerance");
  }
}

}  // namespace
}  // namespace attnbench

int main(int argc, char** argv) {
  using namespace attnbench;
  const std::string sel = argc > 1 ? argv[1] : "all";
  try {
    bool ran = false;
    if (sel == "all" || sel == "agree") case_agree(), ran = true;
    if (sel == "all" || sel == "rows") case_rows(), ran = true;
    if (sel == "all" || sel == "skip_tile") case_skip_tile(), ran = true;
    if (sel == "all" || sel == "one_row") case_one_row(), ran = true;
    if (sel == "all" || sel == "baselines") case_baselines(), ran = true;
    if (!ran) {
      std::fprintf(stderr, "no case '%s' (agree, rows, skip_tile, one_row, baselines, all)\n", sel.c_str());
      return 2;
    }
  } catch (const std::exception& e) {
    std::printf("FAIL error: %s\n", e.what());
    return 1;
  }
  std::printf("%d check(s) failed\n", failures);
  return failures ? 1 : 0;
}

// The variant registry: one row per (algorithm, backend). Tests, benchmarks,
// `attnbench list` and (through the JSON) the charts all read it; no other
// list of variants exists. Rows are added by kernels/cpu/cpu_variants.cpp and
// kernels/cuda/cuda_variants.cu (the latter only when CUDA is built).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "harness/problem.hpp"

namespace attnbench {

enum class backend_kind { cpu, cuda };
std::string_view to_string(backend_kind b);

// What a variant computes, and so which reference checks it.
enum class attention_math { softmax, linear };

struct support {
  bool ok = true;
  std::string reason;  // why not, when !ok (one line)
  static support yes() { return {}; }
  static support no(std::string why) { return {false, std::move(why)}; }
};

// Inputs on the host, float32, already rounded to p.type so every backend
// sees the same values. Layouts as in problem.hpp.
struct host_inputs {
  problem p;
  std::vector<float> q, k, v;
};

struct host_outputs {
  std::vector<float> o;    // [B, H, Nq, d]
  std::vector<float> lse;  // [B, H, Nq] natural-log sum of exp of scaled scores; -inf for
                           // rows with no visible key. Empty when the variant writes none.
};

// One prepared run of one variant on one problem. Everything but run() is
// outside the timed region.
class runner {
 public:
  virtual ~runner() = default;
  virtual void set_inputs(const host_inputs& in) = 0;
  // Fills O (and lse) with NaN so unwritten elements show.
  virtual void poison_outputs() = 0;
  // The timed work: one forward pass. CUDA runners enqueue on the harness stream
  // (harness/cuda/) and do not synchronise.
  virtual void run() = 0;
  virtual host_outputs get_outputs() = 0;
  // Global-memory bytes moved by the last run() as counted by the kernel itself
  // (CPU backend); -1 when the backend does not count.
  virtual std::int64_t counted_bytes() const { return -1; }
};

struct variant {
  std::string name;  // "flash2"; with the backend, the first two fields of benchmark names
  backend_kind backend = backend_kind::cpu;
  attention_math math = attention_math::softmax;
  std::string summary;  // one line for `attnbench list`
  bool writes_lse = false;
  std::function<support(const problem&)> supports;
  std::function<double(const problem&)> flops;           // useful FLOPs (docs/models.md)
  std::function<double(const problem&)> flops_executed;  // FLOPs the algorithm performs
  std::function<double(const problem&)> bytes;           // modeled global-memory traffic
  // Memory the run allocates (inputs, outputs, workspace) on its backend, so
  // configurations that would not fit are skipped before allocating.
  std::function<std::int64_t(const problem&)> memory_bytes;
  std::function<std::unique_ptr<runner>(const problem&)> make_runner;

  std::string benchmark_name(const problem& p) const;
};

const std::vector<variant>& registry();
const variant* find_variant(std::string_view name, backend_kind b);  // nullptr if absent
bool cuda_backend_built();

// Per-backend row providers (the only places rows are created).
void add_cpu_variants(std::vector<variant>& rows);
#ifdef ATTNBENCH_WITH_CUDA
void add_cuda_variants(std::vector<variant>& rows);
#endif

}  // namespace attnbench

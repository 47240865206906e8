// The CPU backend: runners execute on the host (OpenMP threads inside each
// kernel). Cold (the default) every timed run is one timed_sample(): an LLC
// eviction (harness/cache_eviction.hpp), then the run alone on the clock; --hot
// times run() in a loop with warm caches. Ceilings are measured: a multithreaded
// copy of a 256 MiB buffer (bytes read + written) and the BLAS's sgemm at the
// best of n = 1024, 2048, 4096 (tflops.fp32; fp32_sgemm: which n, threads, library) and
// the kernels' own vectorised exp on every thread (exps_per_s, exp_method; harness/exp_ceiling.hpp).
#include <algorithm>
#include <cblas.h>
#include <chrono>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <omp.h>
#include <random>
#include <string>
#include <vector>

#include "harness/backend.hpp"
#include "harness/cache_eviction.hpp"
#include "harness/exp_ceiling.hpp"
#include "harness/host_info.hpp"

namespace attnbench {

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

}  // namespace

std::string cpu_model_name() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) {
        std::string s = line.substr(colon + 1);
        s.erase(0, s.find_first_not_of(" \t"));
        return s;
      }
    }
  }
  return "unknown CPU";
}

std::int64_t host_available_bytes() {
  std::int64_t avail = -1;
  {
    std::ifstream f("/proc/meminfo");
    std::string key;
    std::int64_t kb = 0;
    std::string unit;
    while (f >> key >> kb) {
      std::getline(f, unit);
      if (key == "MemAvailable:") {
        avail = kb * 1024;
        break;
      }
    }
  }
  std::ifstream lim("/sys/fs/cgroup/memory.max"), cur("/sys/fs/cgroup/memory.current");
  std::string max_text;
  std::int64_t used = 0;
  if (lim >> max_text && max_text != "max" && cur >> used) {
    const std::int64_t room = std::stoll(max_text) - used;
    avail = avail < 0 ? room : std::min(avail, room);
  }
  return avail < 0 ? (std::int64_t{1} << 34) : avail;
}

namespace {

double measure_copy_gbps() {
  const std::size_t n = std::size_t{256} << 20;  // bytes per buffer
  std::vector<char> src(n), dst(n);
  const int threads = omp_get_max_threads();
#pragma omp parallel for schedule(static)
  for (int t = 0; t < threads; ++t) {  // first touch by the thread that copies
    const std::size_t lo = n * t / threads, hi = n * (t + 1) / threads;
    std::memset(src.data() + lo, t + 1, hi - lo);
    std::memset(dst.data() + lo, 0, hi - lo);
  }
  double best = 1e30;
  for (int rep = 0; rep < 8; ++rep) {
    const auto t0 = clock_type::now();
#pragma omp parallel for schedule(static)
    for (int t = 0; t < threads; ++t) {
      const std::size_t lo = n * t / threads, hi = n * (t + 1) / threads;
      std::memcpy(dst.data() + lo, src.data() + lo, hi - lo);
    }
    best = std::min(best, seconds_since(t0));
  }
  return 2.0 * static_cast<double>(n) / best / 1e9;
}

// OpenBLAS's identity when it is the BLAS linked (weak: another cblas leaves them null).
extern "C" char* openblas_get_config() __attribute__((weak));
extern "C" int openblas_get_num_threads() __attribute__((weak));
extern "C" void openblas_set_num_threads(int) __attribute__((weak));
extern "C" int blas_thread_shutdown_() __attribute__((weak));  // OpenBLAS's pthread build only

// OpenBLAS runs on one thread in this backend: the kernels parallelise with OpenMP and call
// it from inside their parallel regions. A pool of its own threads spin-waits after each
// multithreaded call (and from its start), and on 2 vCPUs that spinning took the OpenMP
// workers' CPU in 4 ms scheduler slices: flash2 at B1 H8 Hkv1 Nq1 Nkv4096 d128 ran 1.0 ms or
// 8 ms (median of 5 calls, bimodal over runs) until the pool was shut down, as it is here
// (OpenBLAS starts it again for its next multithreaded call). Only the sgemm ceiling below
// uses every thread.
void keep_blas_single_threaded() {
  if (openblas_set_num_threads) openblas_set_num_threads(1);
  if (blas_thread_shutdown_) blas_thread_shutdown_();
}

// The fp32 peak of the BLAS the CPU kernels call (cblas_sgemm, all its threads): square NN
// GEMMs of n = 1024, 2048, 4096, a warm-up then the best of two or more runs each, the best n
// kept. A size is skipped when one run of it is predicted (at the rate of the size before)
// to take over 1 s, so a slow BLAS is not timed for a minute. Why several sizes: 2048^3
// reported ~0.30 TFLOP/s on the Xeon VM of docs/cpu.md, where 4096^3 (0.43 s a run) reaches ~0.32.
nlohmann::json measure_sgemm() {
  if (openblas_set_num_threads) openblas_set_num_threads(omp_get_max_threads());
  nlohmann::json by_n = nlohmann::json::object();
  double best_tflops = 0, rate = 0;  // rate: FLOP/s of the last size
  int best_n = 0;
  std::string skipped;
  std::mt19937 gen(42);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int n : {1024, 2048, 4096}) {
    const double flop = 2.0 * n * double(n) * n;
    if (rate > 0 && flop / rate > 1.0) {
      skipped = fmt::format("n={} and above: {:.1f} s a run predicted (limit 1 s)", n, flop / rate);
      break;
    }
    std::vector<float> a(std::size_t(n) * n), b(a.size()), c(a.size());
    for (auto* m : {&a, &b})
      for (float& x : *m) x = dist(gen);
    double best = 1e30, spent = 0;
    for (int rep = 0; rep < 8 && (rep < 3 || spent < 0.5); ++rep) {  // rep 0 is the warm-up
      const auto t0 = clock_type::now();
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(),
                  n);
      const double s = seconds_since(t0);
      spent += s;
      if (rep > 0) best = std::min(best, s);
    }
    rate = flop / best;
    by_n[std::to_string(n)] = rate / 1e12;
    if (rate / 1e12 > best_tflops) {
      best_tflops = rate / 1e12;
      best_n = n;
    }
  }
  std::string library = "cblas_sgemm (library unknown)";
  if (openblas_get_config) library = openblas_get_config();
  const int threads = openblas_get_num_threads ? openblas_get_num_threads() : omp_get_max_threads();
  keep_blas_single_threaded();
  nlohmann::json method = {{"n", best_n}, {"threads", threads}, {"library", library}, {"tflops_by_n", by_n}};
  if (!skipped.empty()) method["skipped"] = skipped;
  return {{"tflops", best_tflops}, {"method", method}};
}

class cpu_backend final : public backend {
 public:
  cpu_backend() : llc_(last_level_cache()), evictor_(eviction_buffer_bytes(llc_)) { keep_blas_single_threaded(); }
  explicit cpu_backend(cpu_timing_hooks hooks) : cpu_backend() { hooks_ = std::move(hooks); }

  backend_kind kind() const override { return backend_kind::cpu; }

  nlohmann::json context(bool measure_ceilings) override {
    const std::string model = cpu_model_name();
    nlohmann::json c;
    c["device"] = model;
    c["device_info"] = {{"cpu_model", model},
                        {"threads", omp_get_max_threads()},
                        {"llc_bytes", llc_.bytes},
                        {"llc_source", llc_.source},
                        {"llc_eviction_bytes", evictor_.bytes()}};
    nlohmann::json ceilings = nlohmann::json::object();
    if (measure_ceilings) {
      const nlohmann::json sgemm = measure_sgemm();
      ceilings["measured"] = {{"bandwidth_gbps", measure_copy_gbps()},
                              {"tflops", {{"fp32", sgemm["tflops"]}}},
                              {"fp32_sgemm", sgemm["method"]}};
      ceilings["measured"].update(measure_exp_ceiling_cpu());  // the exp roof, ~0.15 s
    }
    c["ceilings"] = ceilings;
    return c;
  }

  std::int64_t free_memory_bytes() override { return host_available_bytes(); }
  bool manual_time() const override { return false; }
  bool evicts_llc() const override { return true; }
  std::string cache_flush(bool hot) const override {
    return hot ? "none (--hot)" : fmt::format("llc eviction per run ({} MiB buffer)", evictor_.bytes() >> 20);
  }

  // Hot: `batch` runs timed together. Cold: each run after its own LLC eviction, timed alone
  // (the clock starts after the eviction), the times summed.
  double timed_sample(runner& r, int batch, const timing_options& opt) override {
    const int n = std::max(batch, 1);
    if (opt.hot) {
      const double t0 = now();
      for (int i = 0; i < n; ++i) r.run();
      return (now() - t0) / n;
    }
    double seconds = 0;
    for (int i = 0; i < n; ++i) {
      if (hooks_.evict)
        hooks_.evict();
      else
        evictor_.evict();
      const double t0 = now();
      r.run();
      seconds += now() - t0;
    }
    return seconds / n;
  }

  void synchronize() override {}
  void range_push(const std::string&) override {}
  void range_pop() override {}

 private:
  double now() const {
    if (hooks_.now_s) return hooks_.now_s();
    return std::chrono::duration<double>(clock_type::now().time_since_epoch()).count();
  }

  llc_info llc_;
  llc_evictor evictor_;
  cpu_timing_hooks hooks_;
};

}  // namespace

std::unique_ptr<backend> make_cpu_backend() { return std::make_unique<cpu_backend>(); }
std::unique_ptr<backend> make_cpu_backend(cpu_timing_hooks hooks) {
  return std::make_unique<cpu_backend>(std::move(hooks));
}

}  // namespace attnbench

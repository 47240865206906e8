// The CPU backend: runners execute on the host (OpenMP threads inside each
// kernel). Google Benchmark times run() with real time; timed_sample() is
// used only by `attnbench run --repeat`. Ceilings are measured: a
// multithreaded copy of a 256 MiB buffer (bytes read + written) and OpenBLAS
// sgemm on 2048^3 (tflops.fp32).
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

double measure_sgemm_tflops() {
  const int n = 2048;
  std::vector<float> a(std::size_t(n) * n), b(a.size()), c(a.size());
  std::mt19937 gen(42);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (auto* m : {&a, &b})
    for (float& x : *m) x = dist(gen);
  double best = 1e30;
  for (int rep = 0; rep < 5; ++rep) {  // the first is the warm-up; best of the rest (shared machines)
    const auto t0 = clock_type::now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n,
                0.0f, c.data(), n);
    if (rep > 0) best = std::min(best, seconds_since(t0));
  }
  return 2.0 * n * double(n) * n / best / 1e12;
}

class cpu_backend final : public backend {
 public:
  backend_kind kind() const override { return backend_kind::cpu; }

  nlohmann::json context(bool measure_ceilings) override {
    const std::string model = cpu_model_name();
    nlohmann::json c;
    c["device"] = model;
    c["device_info"] = {{"cpu_model", model}, {"threads", omp_get_max_threads()}};
    nlohmann::json ceilings = nlohmann::json::object();
    if (measure_ceilings) {
      ceilings["measured"] = {{"bandwidth_gbps", measure_copy_gbps()},
                              {"tflops", {{"fp32", measure_sgemm_tflops()}}}};
    }
    c["ceilings"] = ceilings;
    return c;
  }

  std::int64_t free_memory_bytes() override { return host_available_bytes(); }
  bool manual_time() const override { return false; }

  double timed_sample(runner& r, int batch, const timing_options&) override {
    const auto t0 = clock_type::now();
    for (int i = 0; i < batch; ++i) r.run();
    return seconds_since(t0) / std::max(batch, 1);
  }

  void synchronize() override {}
  void range_push(const std::string&) override {}
  void range_pop() override {}
};

}  // namespace

std::unique_ptr<backend> make_cpu_backend() { return std::make_unique<cpu_backend>(); }

}  // namespace attnbench

// The cuda backend of the harness (harness/backend.hpp): device description,
// measured and theoretical ceilings, kernel resources, L2 flush + CUDA-event
// timing on cuda::stream(), NVTX ranges in the domain "attnbench".
//
// Host C++ (g++): nvcc 13 cannot compile fmt 9, and nothing here is device
// code; the copy and fill kernels live in ceiling_kernels.cu.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/module_abi.hpp"

#include <fmt/format.h>

#include "core/cuda/device_buffer.cuh"
#include "harness/backend.hpp"
#include "harness/cuda/ceiling_kernels.hpp"
#include "harness/cuda/device_check.hpp"
#include "harness/cuda/device_wait.hpp"
#include "harness/cuda_module.hpp"
#include "harness/datasheet.hpp"

namespace attnbench {

namespace cuda {
namespace {

// Dense per-SM operations per clock (an FMA is 2), by compute capability:
// fp32 on CUDA cores, tf32/fp16/bf16/fp8 on tensor cores with fp32 accumulation.
// Sources: NVIDIA A100 / A6000 / L40S / H100 datasheets divided by SMs x boost
// clock. GeForce parts (sm_86, sm_89) run fp32-accumulate tensor math at half
// this rate; the table describes the data-centre parts. fp8 (e4m3) is twice
// the bf16 rate on sm_89 and sm_90 and absent (0) before.
struct ops_per_clock {
  int major, minor;
  double fp32, tf32, fp16, bf16, fp8;
};
constexpr ops_per_clock peak_table[] = {
    {8, 0, 128, 1024, 2048, 2048, 0},
    {8, 6, 256, 512, 1024, 1024, 0},
    {8, 9, 256, 512, 1024, 1024, 2048},
    {9, 0, 256, 2048, 4096, 4096, 8192},
};

std::string version_text(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

int attr(cudaDeviceAttr a, int dev) {
  int v = 0;
  ATTN_CUDA_CHECK(cudaDeviceGetAttribute(&v, a, dev));
  return v;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

class event_pair {
 public:
  event_pair() {
    ATTN_CUDA_CHECK(cudaEventCreate(&start_));
    ATTN_CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~event_pair() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  event_pair(const event_pair&) = delete;
  event_pair& operator=(const event_pair&) = delete;
  void start(cudaStream_t s) { ATTN_CUDA_CHECK(cudaEventRecord(start_, s)); }
  // Seconds between start() and now on stream s: waits for the stream, polling against
  // the deadline of `launches` launches (harness/device_watchdog.hpp), never blocking.
  double stop(cudaStream_t s, const char* what, std::int64_t launches) {
    ATTN_CUDA_CHECK(cudaEventRecord(stop_, s));
    wait_event(stop_, what, launches);
    float ms = 0;
    ATTN_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return ms * 1e-3;
  }

 private:
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

class cuda_backend final : public backend {
 public:
  cuda_backend() {
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess)
      throw backend_error(std::string("no usable CUDA device: cudaGetDeviceCount: ") + cudaGetErrorString(e));
    if (n == 0) throw backend_error("no CUDA device present");
    ATTN_CUDA_CHECK(cudaGetDevice(&dev_));
    ATTN_CUDA_CHECK(cudaGetDeviceProperties(&prop_, dev_));
    l2_bytes_ = attr(cudaDevAttrL2CacheSize, dev_);
    // Flush buffer: at least twice the L2 (and 32 MiB where L2 is tiny).
    flush_ = device_buffer(std::max<std::size_t>(2 * static_cast<std::size_t>(l2_bytes_), 32u << 20));
    events_.emplace();
    domain_ = nvtxDomainCreateA("attnbench");
    stream();  // create the harness stream now, outside any timed region
  }
  ~cuda_backend() override {
    if (domain_) nvtxDomainDestroy(domain_);
  }

  backend_kind kind() const override { return backend_kind::cuda; }

  nlohmann::json context(bool measure_ceilings) override {
    nlohmann::json j;
    j["backend"] = "cuda";
    j["device"] = prop_.name;
    j["device_info"] = device_info();
    nlohmann::json ceil;
    ceil["theoretical"] = theoretical();
    if (measure_ceilings) ceil["measured"] = measured();
    j["ceilings"] = ceil;
    if (auto res = kernel_resources()) j["kernel_resources"] = *res;
    return j;
  }

  std::int64_t free_memory_bytes() override {
    std::size_t free = 0, total = 0;
    ATTN_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    // Keep a margin for cuBLAS workspaces, the context and fragmentation.
    const std::int64_t margin = std::int64_t(512) << 20;
    return std::max<std::int64_t>(0, static_cast<std::int64_t>(free) - margin);
  }

  bool manual_time() const override { return true; }
  std::string cache_flush(bool hot) const override { return hot ? "none (--hot)" : "per launch"; }

  // Cold: every launch after its own L2 flush, timed by its own event pair
  // (the start event is recorded after the flush), the times summed. Hot: one
  // event pair around `batch` launches.
  double timed_sample(runner& r, int batch, const timing_options& opt) override {
    const cudaStream_t s = stream();
    const int n = std::max(1, batch);
    // The NVTX range holds the launches, never the flush.
    auto timed = [&](int launches) {
      if (!opt.range.empty()) range_push(opt.range);
      events_->start(s);
      for (int i = 0; i < launches; ++i) r.run();
      const double t = events_->stop(s, "the timed launches", launches);
      if (!opt.range.empty()) range_pop();
      return t;
    };
    if (opt.hot) return timed(n) / n;
    double seconds = 0;
    for (int i = 0; i < n; ++i) {
      ATTN_CUDA_CHECK(cudaMemsetAsync(flush_.get(), flush_value_++ & 0xff, flush_.bytes(), s));
      seconds += timed(1);
    }
    return seconds / n;
  }

  // The harness's other waits (validation run, warm-up: at most 2 launches queued).
  void synchronize() override { wait_stream(stream(), "the queued launches (validation or warm-up)", 2); }

  void range_push(const std::string& name) override {
    nvtxEventAttributes_t a{};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = name.c_str();
    nvtxDomainRangePushEx(domain_, &a);
  }
  void range_pop() override { nvtxDomainRangePop(domain_); }

  // Every output of a device runner checked on the device (harness/cuda/device_check.hpp);
  // a runner that is not one (none today) is left to the harness's host check.
  std::optional<full_check> check_outputs(runner& r, const host_inputs& in, attention_math m,
                                          std::span<const std::uint8_t> rows_without_keys) override {
    const auto* dr = dynamic_cast<const device_runner*>(&r);
    if (!dr) return std::nullopt;
    return checker_.check(*dr, in, m, rows_without_keys, free_memory_bytes());
  }
  void keep_check_data(const problem& p) override { checker_.keep_only(p); }

 private:
  nlohmann::json device_info() const {
    int driver = 0, runtime = 0, cub_major = 0, cub_minor = 0, cub_patch = 0;
    ATTN_CUDA_CHECK(cudaDriverGetVersion(&driver));
    ATTN_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    cublasGetProperty(MAJOR_VERSION, &cub_major);
    cublasGetProperty(MINOR_VERSION, &cub_minor);
    cublasGetProperty(PATCH_LEVEL, &cub_patch);
    return {
        {"name", prop_.name},
        {"compute_capability", fmt::format("{}.{}", prop_.major, prop_.minor)},
        {"sm_count", prop_.multiProcessorCount},
        {"sm_clock_mhz", attr(cudaDevAttrClockRate, dev_) / 1000.0},
        {"mem_clock_mhz", attr(cudaDevAttrMemoryClockRate, dev_) / 1000.0},
        {"bus_width_bits", attr(cudaDevAttrGlobalMemoryBusWidth, dev_)},
        {"l2_bytes", l2_bytes_},
        {"mem_bytes", static_cast<std::int64_t>(prop_.totalGlobalMem)},
        {"driver_version", version_text(driver)},
        {"runtime_version", version_text(runtime)},
        {"cublas_version", fmt::format("{}.{}.{}", cub_major, cub_minor, cub_patch)},
    };
  }

  // The part's datasheet figures when the name is known (they assume the
  // tensor boost clock: 1830 MHz on H100/H200, not the 1980 MHz maximum that
  // cudaDevAttrClockRate reports, which would overstate the peak by ~8 %);
  // else ops/clock x SMs x that maximum clock, labelled so.
  nlohmann::json theoretical() const {
    nlohmann::json t;
    if (const datasheet_part* d = find_datasheet(prop_.name)) {
      t["bandwidth_gbps"] = d->bandwidth_gbps;
      t["tflops"] = datasheet_tflops(*d);  // e4m3: the datasheet's FP8 with sparsity / 2
      t["source"] = fmt::format("datasheet: {}", d->part);
      return t;
    }
    const double mem_hz = attr(cudaDevAttrMemoryClockRate, dev_) * 1e3;
    const double bus_bytes = attr(cudaDevAttrGlobalMemoryBusWidth, dev_) / 8.0;
    if (mem_hz > 0 && bus_bytes > 0) t["bandwidth_gbps"] = 2.0 * mem_hz * bus_bytes / 1e9;  // DDR
    const double sm_hz = attr(cudaDevAttrClockRate, dev_) * 1e3;
    for (const auto& row : peak_table) {
      if (row.major != prop_.major || row.minor != prop_.minor) continue;
      const double per_clk = prop_.multiProcessorCount * sm_hz / 1e12;
      t["tflops"] = {{"fp32", row.fp32 * per_clk},
                     {"tf32", row.tf32 * per_clk},
                     {"fp16", row.fp16 * per_clk},
                     {"bf16", row.bf16 * per_clk}};
      if (row.fp8 > 0) t["tflops"]["e4m3"] = row.fp8 * per_clk;
      t["source"] = fmt::format("ops/clock x {} SMs x max clock {:.0f} MHz (an upper bound)", prop_.multiProcessorCount,
                                sm_hz / 1e6);
    }
    return t;
  }

  // Measured once per process: a copy with 16-byte accesses (bytes read +
  // written) and cuBLAS GEMMs per dtype on random data, medians of repeats.
  nlohmann::json measured() {
    if (!measured_.is_null()) return measured_;
    nlohmann::json m;
    m["bandwidth_gbps"] = measure_copy_gbps();
    nlohmann::json tf;
    for (const char* which : {"fp32", "tf32", "fp16", "bf16"})
      if (auto v = measure_gemm_tflops(which)) tf[which] = *v;
    m["tflops"] = tf;
    measured_ = m;
    return m;
  }

  double measure_copy_gbps() {
    const cudaStream_t s = stream();
    std::size_t bytes = std::size_t(1) << 30;  // 1 GiB each way, well beyond any L2
    while (bytes > (std::size_t(64) << 20) && static_cast<std::int64_t>(2 * bytes) > free_memory_bytes()) bytes /= 2;
    device_buffer src(bytes), dst(bytes);
    fill_uniform(src.get(), dtype::fp32, static_cast<std::int64_t>(bytes / 4), 99, s);
    for (int i = 0; i < 3; ++i) launch_copy16(src.get(), dst.get(), bytes, s);
    std::vector<double> t;
    for (int i = 0; i < 20; ++i) {
      events_->start(s);
      launch_copy16(src.get(), dst.get(), bytes, s);
      t.push_back(events_->stop(s, "the copy-bandwidth ceiling's copy", 1));
    }
    return 2.0 * static_cast<double>(bytes) / median(t) / 1e9;
  }

  std::optional<double> measure_gemm_tflops(const std::string& which) {
    const cudaStream_t s = stream();
    const bool f32 = which == "fp32" || which == "tf32";
    const dtype t = f32 ? dtype::fp32 : (which == "fp16" ? dtype::fp16 : dtype::bf16);
    const cudaDataType ct = f32 ? CUDA_R_32F : (which == "fp16" ? CUDA_R_16F : CUDA_R_16BF);
    const cublasComputeType_t comp = which == "tf32" ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    const std::int64_t e = dtype_bytes(t);
    std::int64_t n = 8192;  // or the largest power of two that fits
    while (n > 1024 && 3 * n * n * e + (std::int64_t(256) << 20) > free_memory_bytes()) n /= 2;
    if (3 * n * n * e > free_memory_bytes()) return std::nullopt;
    device_buffer a(n * n * e), b(n * n * e), c(n * n * e);
    fill_uniform(a.get(), t, n * n, 1, s);
    fill_uniform(b.get(), t, n * n, 2, s);
    cublasHandle_t h = nullptr;
    ATTN_CUBLAS_CHECK(cublasCreate(&h));
    std::unique_ptr<cublasContext, void (*)(cublasHandle_t)> guard(h, [](cublasHandle_t x) { cublasDestroy(x); });
    ATTN_CUBLAS_CHECK(cublasSetStream(h, s));
    const float one = 1.f, zero = 0.f;
    const int ni = static_cast<int>(n);
    auto gemm = [&] {
      ATTN_CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, ni, ni, ni, &one, a.get(), ct, ni, b.get(), ct, ni,
                                     &zero, c.get(), ct, ni, comp, CUBLAS_GEMM_DEFAULT));
    };
    for (int i = 0; i < 3; ++i) gemm();
    std::vector<double> times;
    for (int i = 0; i < 10; ++i) {
      events_->start(s);
      gemm();
      times.push_back(events_->stop(s, "the GEMM ceiling's cuBLAS GEMM", 1));
    }
    return 2.0 * double(n) * double(n) * double(n) / median(times) / 1e12;
  }

  // The static check's report (scripts/kernel_resources.py), when present:
  // $ATTNBENCH_KERNEL_RESOURCES, else the build tree's kernel_resources.json.
  static std::optional<nlohmann::json> kernel_resources() {
    std::string path;
    if (const char* env = std::getenv("ATTNBENCH_KERNEL_RESOURCES")) path = env;
#ifdef ATTNBENCH_KERNEL_RESOURCES_JSON
    if (path.empty()) path = ATTNBENCH_KERNEL_RESOURCES_JSON;
#endif
    if (path.empty()) return std::nullopt;
    std::ifstream in(path);
    if (!in) return std::nullopt;
    try {
      nlohmann::json j = nlohmann::json::parse(in);
      if (j.is_object() && j.contains("kernels")) return j["kernels"];
      return j;
    } catch (const nlohmann::json::exception&) {
      return std::nullopt;
    }
  }

  int dev_ = 0;
  cudaDeviceProp prop_{};
  int l2_bytes_ = 0;
  device_buffer flush_;
  unsigned flush_value_ = 1;
  std::optional<event_pair> events_;  // created once a device is known
  nvtxDomainHandle_t domain_ = nullptr;
  nlohmann::json measured_;
  device_output_check checker_;  // keeps the fp32 reference of the last problem
};

}  // namespace
}  // namespace cuda

std::unique_ptr<backend> make_cuda_backend() { return std::make_unique<cuda::cuda_backend>(); }

namespace {
// Found by open_cuda_backend() once this part is linked in or loaded (harness/cuda_module.hpp).
const bool cuda_backend_registered = (register_cuda_backend_factory(&make_cuda_backend), true);
}  // namespace

}  // namespace attnbench

// The loader compares it with its own before reading any row of this module (core/module_abi.hpp).
extern "C" std::uint64_t attnbench_cuda_module_abi() { return attnbench::module_abi_stamp(); }

#include "harness/cuda_module.hpp"

#include <cstdint>
#include <cstdlib>
#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include "core/module_abi.hpp"
#include "kernels/registry.hpp"

namespace attnbench {

namespace {

std::unique_ptr<backend> (*cuda_backend_factory)() = nullptr;

#ifdef ATTNBENCH_CUDA_MODULE_NAME
// The module's path: $ATTNBENCH_CUDA_MODULE, else beside the running executable.
std::string module_path() {
  if (const char* p = std::getenv("ATTNBENCH_CUDA_MODULE"); p && *p) return p;
  std::string exe(4096, '\0');
  const ssize_t n = ::readlink("/proc/self/exe", exe.data(), exe.size() - 1);
  if (n <= 0) return ATTNBENCH_CUDA_MODULE_NAME;
  exe.resize(static_cast<std::size_t>(n));
  return exe.substr(0, exe.rfind('/') + 1) + ATTNBENCH_CUDA_MODULE_NAME;
}
#endif

}  // namespace

void register_cuda_backend_factory(std::unique_ptr<backend> (*make)()) { cuda_backend_factory = make; }

bool load_cuda_module(std::string* why) {
  if (cuda_backend_factory) return true;
#ifndef ATTNBENCH_CUDA_MODULE_NAME
  if (why) *why = "this attnbench was built without CUDA";
  return false;
#else
  static std::string error;  // one attempt per process
  static bool tried = false;
  if (!tried) {
    tried = true;
    const std::string path = module_path();
    if (::access(path.c_str(), R_OK) != 0) {
      error = fmt::format("the CUDA module {} is absent (build it: cmake --build build --target attnbench_cuda)", path);
    } else {
      const std::size_t providers = row_provider_count();
      // RTLD_GLOBAL: libattnbench_cudnn.so, which the cudnn_sdpa row loads on first use,
      // resolves its references into the CUDA part (device_runner, stream) against it.
      void* module = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
      const auto abi =
          module ? reinterpret_cast<std::uint64_t (*)()>(::dlsym(module, "attnbench_cuda_module_abi")) : nullptr;
      if (!module) {
        const char* e = ::dlerror();
        error = fmt::format("the CUDA module did not load: {}", e ? e : "unknown dlopen error");
      } else if (!abi || abi() != module_abi_stamp()) {
        // Its static initialisers only registered a factory and a row provider: forget both
        // before anything reads a row of another layout.
        drop_row_providers(providers);
        cuda_backend_factory = nullptr;
        error = fmt::format(
            "the CUDA module {} was built from other sources than this attnbench (layout stamp {}, expected "
            "{:016x}): rebuild it: cmake --build build --target attnbench_cuda",
            path, abi ? fmt::format("{:016x}", abi()) : std::string("absent"), module_abi_stamp());
      } else if (!cuda_backend_factory) {
        error = fmt::format("the CUDA module {} registered no backend", path);
      }
    }
  }
  if (!error.empty() && why) *why = error;
  return error.empty();
#endif
}

std::unique_ptr<backend> open_cuda_backend() {
  std::string why;
  if (!load_cuda_module(&why)) throw backend_error(why);
  return cuda_backend_factory();
}

bool cuda_driver_has_device(std::string* why) {
  auto fail = [&](std::string reason) {
    if (why) *why = std::move(reason);
    return false;
  };
  // Kept open once cuInit has run (the driver may have started threads); the module uses it.
  void* driver = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!driver) {
    const char* e = ::dlerror();
    return fail(fmt::format("no CUDA driver: {}", e ? e : "libcuda.so.1 did not load"));
  }
  using init_fn = int (*)(unsigned);
  using count_fn = int (*)(int*);
  auto cu_init = reinterpret_cast<init_fn>(::dlsym(driver, "cuInit"));
  auto cu_count = reinterpret_cast<count_fn>(::dlsym(driver, "cuDeviceGetCount"));
  int count = 0;
  if (!cu_init || !cu_count) {
    ::dlclose(driver);
    return fail("no CUDA driver: libcuda.so.1 lacks cuInit or cuDeviceGetCount");
  }
  if (const int e = cu_init(0); e != 0) {
    return fail(fmt::format("no usable CUDA driver: cuInit returned error {}", e));
  }
  if (const int e = cu_count(&count); e != 0 || count == 0) {
    return fail(e != 0 ? fmt::format("no usable CUDA device: cuDeviceGetCount returned error {}", e)
                       : std::string("no CUDA device present"));
  }
  return true;
}

backend_kind best_available_backend(std::string* why) {
  std::string reason;
#ifndef ATTNBENCH_CUDA_MODULE_NAME
  if (!cuda_backend_factory) {  // nothing to probe for
    if (why) *why = "attnbench was built without CUDA";
    return backend_kind::cpu;
  }
#endif
  if (!cuda_driver_has_device(&reason)) {
    if (why) *why = reason;
    return backend_kind::cpu;
  }
  try {
    if (open_cuda_backend()) return backend_kind::cuda;
    reason = "no CUDA backend";
  } catch (const std::exception& e) {
    reason = e.what();
  }
  if (why) *why = reason;
  return backend_kind::cpu;
}

}  // namespace attnbench

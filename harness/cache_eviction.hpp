// Cold-cache timing on the host: before each timed CPU run the harness writes a buffer of
// at least twice the last-level cache, as the cuda backend clears L2 before each launch, so
// no run reads what the one before it left in cache. Measured why: the quick preset's
// decode entries (naive, B1 H8 Hkv1 Nq1 Nkv4096 d128: 4 MB of K/V) reported up to 48.8
// GB/s of modeled traffic against a 27.9 GB/s copy ceiling while their K/V stayed cached.
// The LLC size comes from sysfs (the highest cache level of the CPUs this process may
// run on, summed over distinct instances, so two threads on two L3 slices evict both),
// else sysconf(_SC_LEVEL3_CACHE_SIZE), else an assumed 128 MiB, and `source` says which.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace attnbench {

struct llc_info {
  std::int64_t bytes = 0;  // all distinct LLC instances of the allowed CPUs together
  int level = 0;           // 0 when not read from sysfs
  int instances = 0;
  std::string source;  // "sysfs: 1 x 32 MiB L3 (cpus 0-1)", "sysconf ...", "assumed ..."
};

// Reads <sysfs_cpu_root>/cpuN/cache/index*/{level,type,size,shared_cpu_list} for the CPUs
// in `cpus` (empty: this process's affinity mask); falls back as described above.
llc_info last_level_cache(const std::string& sysfs_cpu_root = "/sys/devices/system/cpu", std::vector<int> cpus = {});

// The eviction buffer: twice the LLC, rounded up to whole MiB.
std::size_t eviction_buffer_bytes(const llc_info& llc);

// Writes its buffer (allocated on the first evict()) with every OpenMP thread, each its own
// slice, so each thread's cache is overwritten by the thread that runs there.
class llc_evictor {
 public:
  explicit llc_evictor(std::size_t bytes) : bytes_(bytes) {}
  void evict();
  std::size_t bytes() const { return bytes_; }

 private:
  std::size_t bytes_;
  std::vector<unsigned char> buffer_;
  unsigned char value_ = 1;
};

}  // namespace attnbench

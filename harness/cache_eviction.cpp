#include "harness/cache_eviction.hpp"

#include <algorithm>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <omp.h>
#include <sched.h>
#include <unistd.h>

namespace attnbench {

namespace {

bool read_line(const std::string& path, std::string& out) {
  std::ifstream f(path);
  return static_cast<bool>(std::getline(f, out));
}

// "32768K", "1M", "512" (bytes) -> bytes; -1 when malformed.
std::int64_t parse_size(const std::string& s) {
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(s, &used);
  } catch (const std::exception&) {
    return -1;
  }
  const std::string unit = s.substr(used);
  if (unit.empty()) return v;
  if (unit == "K") return v << 10;
  if (unit == "M") return v << 20;
  if (unit == "G") return v << 30;
  return -1;
}

std::vector<int> allowed_cpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

std::string mib(std::int64_t bytes) { return fmt::format("{:.0f} MiB", bytes / 1048576.0); }

}  // namespace

llc_info last_level_cache(const std::string& root, std::vector<int> cpus) {
  if (cpus.empty()) cpus = allowed_cpus();
  // Highest data/unified level per CPU; instances of that level keyed by shared_cpu_list.
  int top = 0;
  std::map<int, std::map<std::string, std::int64_t>> by_level;
  for (int cpu : cpus) {
    for (int i = 0; i < 16; ++i) {
      const std::string dir = fmt::format("{}/cpu{}/cache/index{}", root, cpu, i);
      std::string level, type, size, shared;
      if (!read_line(dir + "/level", level)) break;
      if (!read_line(dir + "/type", type) || !read_line(dir + "/size", size)) continue;
      if (type == "Instruction") continue;
      if (!read_line(dir + "/shared_cpu_list", shared)) shared = fmt::format("cpu{}", cpu);
      const std::int64_t bytes = parse_size(size);
      int lv = 0;
      try {
        lv = std::stoi(level);
      } catch (const std::exception&) {
        continue;
      }
      if (bytes <= 0 || lv <= 0) continue;
      by_level[lv][shared] = bytes;
      top = std::max(top, lv);
    }
  }
  llc_info llc;
  if (top > 0) {
    const auto& inst = by_level[top];
    std::vector<std::string> where;
    for (const auto& [shared, bytes] : inst) {
      llc.bytes += bytes;
      where.push_back(shared);
    }
    llc.level = top;
    llc.instances = static_cast<int>(inst.size());
    llc.source = fmt::format("sysfs: {} x {} L{} (cpus {})", llc.instances, mib(inst.begin()->second), top,
                             fmt::join(where, "; "));
    return llc;
  }
  if (const long l3 = ::sysconf(_SC_LEVEL3_CACHE_SIZE); l3 > 0) {
    llc.bytes = l3;
    llc.source = fmt::format("sysconf(_SC_LEVEL3_CACHE_SIZE): {} (no cache sizes under {})", mib(l3), root);
    return llc;
  }
  llc.bytes = std::int64_t{128} << 20;
  llc.source = fmt::format("assumed 128 MiB: neither {} nor sysconf gives a cache size", root);
  return llc;
}

std::size_t eviction_buffer_bytes(const llc_info& llc) {
  const std::int64_t mb = std::int64_t{1} << 20;
  return static_cast<std::size_t>((2 * std::max<std::int64_t>(llc.bytes, 1) + mb - 1) / mb * mb);
}

void llc_evictor::evict() {
  if (buffer_.size() != bytes_) buffer_.assign(bytes_, 0);
  const unsigned char v = value_++;
  unsigned char* p = buffer_.data();
  const std::size_t n = buffer_.size();
#pragma omp parallel
  {
    const std::size_t t = static_cast<std::size_t>(omp_get_thread_num());
    const std::size_t k = static_cast<std::size_t>(omp_get_num_threads());
    const std::size_t lo = n * t / k, hi = n * (t + 1) / k;
    std::memset(p + lo, v, hi - lo);
  }
}

}  // namespace attnbench

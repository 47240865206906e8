// Facts about the host the harness runs on (implemented in cpu_backend.cpp).
#pragma once

#include <cstdint>
#include <string>

namespace attnbench {

std::string cpu_model_name();
// MemAvailable from /proc/meminfo, bounded by the cgroup v2 memory limit.
std::int64_t host_available_bytes();

}  // namespace attnbench

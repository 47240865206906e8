// The progress line on stderr during sweeps: configurations done / total,
// elapsed time and an ETA weighted by each configuration's executed FLOPs.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace attnbench {

class progress {
 public:
  // cost[i]: relative cost of configuration i (0 for ones that will not run).
  progress(std::vector<double> cost, std::FILE* out = stderr);
  // Marks configuration i done and prints the line.
  void done(std::size_t i);
  // Erases the progress line on a terminal before other output.
  void clear();
  void finish();
  static std::string format_duration(double seconds);

 private:
  std::vector<double> cost_;
  double total_cost_ = 0, done_cost_ = 0;
  std::size_t done_ = 0;
  std::chrono::steady_clock::time_point start_;
  std::FILE* out_;
  bool tty_;
};

}  // namespace attnbench

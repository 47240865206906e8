#include "harness/progress.hpp"

#include <cmath>
#include <fmt/format.h>
#include <numeric>
#include <unistd.h>

namespace attnbench {

progress::progress(std::vector<double> cost, std::FILE* out)
    : cost_(std::move(cost)), start_(std::chrono::steady_clock::now()), out_(out) {
  total_cost_ = std::accumulate(cost_.begin(), cost_.end(), 0.0);
  tty_ = ::isatty(::fileno(out_)) != 0;
}

std::string progress::format_duration(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  const long t = std::lround(s);
  return t >= 3600 ? fmt::format("{}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60)
                   : fmt::format("{}:{:02}", t / 60, t % 60);
}

void progress::done(std::size_t i) {
  ++done_;
  if (i < cost_.size()) done_cost_ += cost_[i];
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double left = total_cost_ - done_cost_;
  const double eta = done_cost_ > 0 ? elapsed * left / done_cost_ : NAN;
  const std::string line = fmt::format("[{}/{}] elapsed {} ETA {}", done_, cost_.size(), format_duration(elapsed),
                                       left <= 0 ? "0:00" : format_duration(eta));
  if (tty_)
    fmt::print(out_, "\r{:<60}", line);
  else
    fmt::print(out_, "{}\n", line);
  std::fflush(out_);
}

void progress::clear() {
  if (tty_) fmt::print(out_, "\r\033[K");
  std::fflush(out_);
}

void progress::finish() {
  if (tty_) fmt::print(out_, "\n");
  std::fflush(out_);
}

}  // namespace attnbench

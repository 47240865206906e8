// Crash records: a configuration that crashes the process (SIGSEGV, SIGBUS,
// SIGILL, SIGFPE, SIGABRT: a host-side bug in a runner, an abort inside a CUDA library)
// still leaves its failed entry in the results log. Before each configuration the sweep
// arms the guard with that entry's line, in which "@SIGNAL@" stands for the signal; the
// handler (async-signal-safe: no allocation, only write and fsync) fills it in, appends
// it to the log's file descriptor (O_APPEND, one write, after a newline that ends any
// torn line), prints the armed message to stderr, and lets the signal kill the process
// as it would have (exit status 128 + signal), so scripts/resume_sweep.sh sees the
// crash, restarts with --resume, and the row is quarantined (row_quarantine.hpp).
// A SIGKILL or a power loss writes nothing: that configuration runs again on resume.
#pragma once

#include <string>

namespace attnbench {

inline constexpr const char* crash_signal_placeholder = "@SIGNAL@";

class crash_guard {
 public:
  // Installs the handlers (on an alternate stack, so a stack overflow is recorded too);
  // records go to `fd`. One guard at a time.
  explicit crash_guard(int fd);
  ~crash_guard();  // restores the previous handlers
  crash_guard(const crash_guard&) = delete;
  crash_guard& operator=(const crash_guard&) = delete;

  // `line`: the JSON entry (one line, newline included) holding crash_signal_placeholder
  // once; `message`: one line for stderr, with the placeholder too.
  void arm(const std::string& line, const std::string& message);
  void disarm();
};

// "11 (SIGSEGV)"; what the handler writes for the placeholder.
std::string signal_text(int sig);

}  // namespace attnbench

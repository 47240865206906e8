#include "harness/crash_guard.hpp"

#include <unistd.h>
#include <atomic>
#include <csignal>
#include <cstring>
#include <memory>
#include <vector>

namespace attnbench {

namespace {

constexpr int guarded_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};

const char* signal_name(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGILL: return "SIGILL";
    case SIGFPE: return "SIGFPE";
    case SIGABRT: return "SIGABRT";
    default: return "signal";
  }
}

// One armed record: the line and the message split at the placeholder, and room to
// compose them in the handler without allocating.
struct armed_record {
  std::string line_head, line_tail, msg_head, msg_tail;
  std::vector<char> buf;
};

std::atomic<armed_record*> g_armed{nullptr};
std::unique_ptr<armed_record> g_current, g_previous;  // the handler may still read the previous one
int g_fd = -1;
std::atomic_flag g_handling = ATOMIC_FLAG_INIT;
struct sigaction g_old[sizeof guarded_signals / sizeof guarded_signals[0]];
std::vector<char> g_alt_stack;
stack_t g_old_alt{};

// The signal as decimal text plus its name, into out (>= 32 bytes); its length.
std::size_t format_signal(int sig, char* out) {
  char digits[12];
  std::size_t n = 0;
  unsigned v = static_cast<unsigned>(sig);
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v && n < sizeof digits);
  std::size_t k = 0;
  while (n) out[k++] = digits[--n];
  const char* name = signal_name(sig);
  out[k++] = ' ';
  out[k++] = '(';
  for (std::size_t i = 0; name[i]; ++i) out[k++] = name[i];
  out[k++] = ')';
  return k;
}

void write_all_raw(int fd, const char* p, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return;
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

std::size_t compose(char* out, const std::string& head, const char* sig, std::size_t sig_n, const std::string& tail) {
  std::memcpy(out, head.data(), head.size());
  std::memcpy(out + head.size(), sig, sig_n);
  std::memcpy(out + head.size() + sig_n, tail.data(), tail.size());
  return head.size() + sig_n + tail.size();
}

void on_crash(int sig) {
  if (!g_handling.test_and_set()) {
    if (armed_record* r = g_armed.load(); r && g_fd >= 0) {
      char sig_text[48];
      const std::size_t sig_n = format_signal(sig, sig_text);
      const std::size_t n = compose(r->buf.data(), r->line_head, sig_text, sig_n, r->line_tail);
      write_all_raw(g_fd, r->buf.data(), n);
      ::fsync(g_fd);
      const std::size_t m = compose(r->buf.data(), r->msg_head, sig_text, sig_n, r->msg_tail);
      write_all_raw(STDERR_FILENO, r->buf.data(), m);
    }
  }
  // SA_RESETHAND restored the default action: the signal now ends the process as it would have.
  ::raise(sig);
}

}  // namespace

std::string signal_text(int sig) {
  char out[48];
  return {out, format_signal(sig, out)};
}

crash_guard::crash_guard(int fd) {
  g_fd = fd;
  g_alt_stack.assign(std::max<std::size_t>(64 * 1024, SIGSTKSZ), 0);
  stack_t st{};
  st.ss_sp = g_alt_stack.data();
  st.ss_size = g_alt_stack.size();
  ::sigaltstack(&st, &g_old_alt);
  struct sigaction sa {};
  sa.sa_handler = on_crash;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND | SA_NODEFER | SA_ONSTACK;
  for (std::size_t i = 0; i < std::size(guarded_signals); ++i) ::sigaction(guarded_signals[i], &sa, &g_old[i]);
}

crash_guard::~crash_guard() {
  disarm();
  for (std::size_t i = 0; i < std::size(guarded_signals); ++i) ::sigaction(guarded_signals[i], &g_old[i], nullptr);
  ::sigaltstack(&g_old_alt, nullptr);
  g_fd = -1;
}

void crash_guard::arm(const std::string& line, const std::string& message) {
  auto r = std::make_unique<armed_record>();
  const std::string_view ph = crash_signal_placeholder;
  const auto split = [&](const std::string& s, std::string& head, std::string& tail) {
    const auto at = s.find(ph);
    head = at == std::string::npos ? s : s.substr(0, at);
    tail = at == std::string::npos ? std::string() : s.substr(at + ph.size());
  };
  split("\n" + line, r->line_head, r->line_tail);  // the newline ends a torn line, if any
  split(message, r->msg_head, r->msg_tail);
  r->buf.resize(std::max(r->line_head.size() + r->line_tail.size(), r->msg_head.size() + r->msg_tail.size()) + 64);
  g_armed.store(r.get());
  g_previous = std::move(g_current);
  g_current = std::move(r);
}

void crash_guard::disarm() { g_armed.store(nullptr); }

}  // namespace attnbench

// The two kinds of failure every layer reports. Front ends turn input_error
// into exit status 2 and one line; backend_error into a failed entry (or, when
// sticky, the end of the process: exit 3, and `--resume` carries on).
#pragma once

#include <stdexcept>
#include <string>

namespace attnbench {

// Bad user input; the message is one line naming the bad value.
struct input_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A failure inside a backend call (CUDA/cuBLAS error text included). When
// `sticky` is set the context is unusable: the harness records the
// configuration as failed and ends the process.
struct backend_error : std::runtime_error {
  bool sticky = false;
  backend_error(const std::string& what, bool is_sticky = false) : std::runtime_error(what), sticky(is_sticky) {}
};

}  // namespace attnbench

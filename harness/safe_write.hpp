// Crash- and disk-full-safe file writes: the data goes to `<path>.tmp`, which
// is written, flushed, fsync'ed and closed (every return checked) and only
// then renamed over `path` (and the directory fsync'ed). On any failure the
// temp file is removed, the old `path` is left as it was, and io_error names
// the file and the OS error (a runtime failure: exit status 1).
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace attnbench {

// A runtime I/O failure (disk full, permission, device error): exit 1, not 2.
struct io_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Creates parent directories; `path` naming a directory is an input_error.
void write_file_atomically(const std::string& path, const std::vector<std::string_view>& parts);
inline void write_file_atomically(const std::string& path, std::string_view data) {
  write_file_atomically(path, std::vector<std::string_view>{data});
}

// Fails fast, before any work, when `path` cannot be written: creates its parent directories and
// a probe file beside it (removed again). A directory, a parent that cannot be created or a folder
// that refuses the probe is an input_error naming `what` and the path (exit 2), so a sweep never
// runs for minutes into an output it cannot write; a write that fails later is an io_error (exit 1).
void check_writable(const std::string& path, std::string_view what);

// Writes all of `data` to fd (retrying on EINTR and short writes); false with errno set on failure.
bool write_all(int fd, std::string_view data);

}  // namespace attnbench

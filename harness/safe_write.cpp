#include "harness/safe_write.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <unistd.h>

#include "core/errors.hpp"

namespace attnbench {

bool write_all(int fd, std::string_view data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (n == 0) {
      errno = EIO;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

namespace {

[[noreturn]] void fail(const std::string& path, const char* what, int err) {
  throw io_error(fmt::format("cannot write '{}': {}: {}", path, what, std::strerror(err)));
}

void make_parent(const std::string& path) {
  const auto parent = std::filesystem::path(path).parent_path();
  if (parent.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(parent, ec);
  if (ec) throw io_error(fmt::format("cannot create directory '{}' for '{}': {}", parent.string(), path, ec.message()));
}

void sync_dir(const std::string& path) {
  auto parent = std::filesystem::path(path).parent_path();
  if (parent.empty()) parent = ".";
  const int d = ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (d < 0) return;  // best effort: the rename itself has happened
  ::fsync(d);
  ::close(d);
}

}  // namespace

void check_writable(const std::string& path, std::string_view what) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw input_error(fmt::format("cannot write {} '{}': it is a directory", what, path));
  try {
    make_parent(path);
  } catch (const io_error& e) {
    throw input_error(fmt::format("{} '{}': {}", what, path, e.what()));
  }
  const std::string probe = fmt::format("{}.probe{}", path, ::getpid());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw input_error(fmt::format("cannot write {} '{}': {}", what, path, std::strerror(errno)));
  ::close(fd);
  ::unlink(probe.c_str());
}

void write_file_atomically(const std::string& path, const std::vector<std::string_view>& parts) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw input_error(fmt::format("cannot write '{}': it is a directory", path));
  make_parent(path);
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(path, "open", errno);
  auto abandon = [&](const char* what, int err, bool close_fd) {
    if (close_fd) ::close(fd);
    ::unlink(tmp.c_str());
    fail(path, what, err);
  };
  for (std::string_view p : parts)
    if (!write_all(fd, p)) abandon("write", errno, true);
  if (::fsync(fd) != 0) abandon("fsync", errno, true);
  if (::close(fd) != 0) abandon("close", errno, false);
  if (::rename(tmp.c_str(), path.c_str()) != 0) abandon("rename", errno, false);
  sync_dir(path);
}

}  // namespace attnbench

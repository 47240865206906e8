#include "harness/results_log.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/errors.hpp"
#include "harness/entry_schema.hpp"
#include "harness/json_read.hpp"
#include "harness/safe_write.hpp"

namespace attnbench {

using nlohmann::json;

std::string log_path_for(const std::string& out_json) { return out_json + ".log.jsonl"; }

log_identity sweep_identity(const std::vector<std::string>& names, const std::string& git_commit) {
  std::vector<std::string> sorted = names;
  std::sort(sorted.begin(), sorted.end());
  std::uint64_t h = 14695981039346656037ull;  // FNV-1a 64
  auto eat = [&](std::string_view s) {
    for (unsigned char ch : s) h = (h ^ ch) * 1099511628211ull;
  };
  for (const auto& n : sorted) {
    eat(n);
    eat("\n");
  }
  eat("commit:");
  eat(git_commit);
  return {fmt::format("fnv1a64:{:016x}", h), static_cast<std::int64_t>(names.size()), git_commit};
}

std::string header_line(const log_identity& id, const json& context) {
  json c = context.is_object() ? context : json::object();
  c["attnbench_log"] = {
      {"sweep_id", id.sweep_id}, {"configurations", id.configurations}, {"git_commit", id.git_commit}};
  return json{{"context", c}}.dump() + "\n";
}

namespace {

std::optional<log_identity> as_header(const json& j) {
  if (!j.is_object() || j.contains("name") || !j.contains("context") || !j["context"].is_object()) return {};
  const json& c = j["context"];
  if (!c.contains("attnbench_log") || !c["attnbench_log"].is_object()) return {};
  const json& h = c["attnbench_log"];
  log_identity id;
  if (h.contains("sweep_id") && h["sweep_id"].is_string()) id.sweep_id = h["sweep_id"];
  if (h.contains("configurations") && h["configurations"].is_number_integer()) id.configurations = h["configurations"];
  if (h.contains("git_commit") && h["git_commit"].is_string()) id.git_commit = h["git_commit"];
  return id;
}

std::string describe(const log_identity& id) {
  return fmt::format("{}, {} configurations, commit {}", id.sweep_id.empty() ? "no id" : id.sweep_id, id.configurations,
                     id.git_commit.empty() ? "unknown" : id.git_commit.substr(0, 12));
}

}  // namespace

log_contents read_results_log(const std::string& path) {
  log_contents c;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return c;
  if (!std::filesystem::is_regular_file(path, ec))
    throw input_error(fmt::format("results log '{}' is not a regular file", path));
  std::ifstream f(path, std::ios::binary);
  if (!f) throw io_error(fmt::format("cannot read results log '{}': {}", path, std::strerror(errno)));
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::size_t pos = 0;
  bool first = true;
  while (pos < text.size()) {
    const auto nl = text.find('\n', pos);
    if (nl == std::string::npos) {  // torn tail: never reached its newline
      ++c.torn_lines;
      break;
    }
    const std::string_view line(text.data() + pos, nl - pos);
    pos = nl + 1;
    if (line.empty()) continue;
    json j = parse_json_text(line);
    const bool was_first = std::exchange(first, false);
    if (j.is_discarded()) {
      ++c.torn_lines;
      continue;
    }
    if (auto h = as_header(j)) {
      if (was_first) {
        c.header = std::move(h);
        c.header_context = j["context"];
      } else {
        ++c.invalid_lines;
      }
      continue;
    }
    if (!j.is_object() || !j.contains("name") || !j["name"].is_string()) {
      if (c.first_invalid.empty()) c.first_invalid = "a line is not an entry with a string 'name'";
      ++c.invalid_lines;
      continue;
    }
    c.names.insert(j["name"].get<std::string>());
    c.entries.push_back(std::move(j));
  }
  return c;
}

void results_log::lock() {
  const std::string lock_path = path_ + ".lock";
  // The lock file is removed when a run ends normally (close()): a process that opened it
  // just before may then hold the flock of an unlinked file while a third creates a new
  // one. So the flock counts only on the file the path still names; otherwise retry.
  for (int attempt = 0;; ++attempt) {
    lock_fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock_fd_ < 0) throw io_error(fmt::format("cannot open lock file '{}': {}", lock_path, std::strerror(errno)));
    if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      std::string pid;
      std::ifstream(lock_path) >> pid;
      ::close(lock_fd_);
      lock_fd_ = -1;
      if (err == EWOULDBLOCK)
        throw io_error(fmt::format("results log '{}' is in use by another attnbench (pid {}, lock file '{}')", path_,
                                   pid.empty() ? "unknown" : pid, lock_path));
      throw io_error(fmt::format("cannot lock '{}': {}", lock_path, std::strerror(err)));
    }
    struct stat held {
    }, named{};
    if (::fstat(lock_fd_, &held) == 0 && ::stat(lock_path.c_str(), &named) == 0 && held.st_dev == named.st_dev &&
        held.st_ino == named.st_ino)
      break;
    ::close(lock_fd_);  // removed (or replaced) since we opened it
    lock_fd_ = -1;
    if (attempt >= 100) throw io_error(fmt::format("cannot lock '{}': it keeps being replaced", lock_path));
  }
  const std::string me = std::to_string(::getpid()) + "\n";
  if (::ftruncate(lock_fd_, 0) != 0 || ::pwrite(lock_fd_, me.data(), me.size(), 0) < 0)
    throw io_error(fmt::format("cannot write lock file '{}': {}", lock_path, std::strerror(errno)));
}

// Drops what is not a finished entry of this sweep; refuses another sweep's log.
void results_log::keep_valid(const log_options& opt) {
  log_contents& c = existing_;
  const bool has_content = c.header || !c.entries.empty();
  if (opt.identity && has_content && !opt.append) {
    if (!c.header)
      throw input_error(
          fmt::format("results log '{}' has no sweep header (an older attnbench or not a log): "
                      "add --append to keep its entries, or start afresh without --resume",
                      path_));
    if (c.header->sweep_id != opt.identity->sweep_id)
      throw input_error(
          fmt::format("results log '{}' belongs to a different sweep ({}; this sweep: {}): "
                      "add --append to add to it, or use another --out",
                      path_, describe(*c.header), describe(*opt.identity)));
  }
  std::vector<json> kept;
  std::set<std::string> names;
  for (auto& e : c.entries) {
    std::string why = entry_schema_error(e);
    const std::string name = e["name"].get<std::string>();
    if (why.empty() && opt.known_names && !opt.append && !opt.known_names->count(name))
      why = fmt::format("'{}' is no configuration of this sweep", name);
    if (!why.empty()) {
      if (c.first_invalid.empty()) c.first_invalid = why;
      ++c.invalid_lines;
      continue;
    }
    names.insert(name);
    kept.push_back(std::move(e));
  }
  c.entries = std::move(kept);
  c.names = std::move(names);
}

results_log::results_log(const std::string& path, const log_options& opt) : path_(path) {
  try {
    open(opt);
  } catch (...) {  // no destructor runs: release the lock here
    if (lock_fd_ >= 0) ::close(lock_fd_);
    lock_fd_ = -1;
    throw;
  }
}

void results_log::open(const log_options& opt) {
  const std::string& path = path_;
  const auto parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (ec) throw io_error(fmt::format("cannot create directory '{}': {}", parent.string(), ec.message()));
  lock();
  std::optional<log_identity> header = opt.identity;
  bool rewrite = true;
  bool own_header = true;  // false: --append keeps the log's header line as it was (context included)
  if (opt.resume) {
    existing_ = read_results_log(path);
    const bool had_content = existing_.header || !existing_.entries.empty();
    keep_valid(opt);
    for (const auto& e : existing_.entries) entries_.put(e);
    // --append keeps the log's own header (or its lack of one): the log stays
    // another sweep's, so a later plain --resume of this sweep is refused too.
    if (opt.append && had_content) {
      header = existing_.header;
      own_header = false;
    }
    const bool same_header = header.has_value() == existing_.header.has_value() &&
                             (!header || header->sweep_id == existing_.header->sweep_id);
    // A header whose context lacks what this run records there (ceilings first measured now).
    bool context_differs = false;
    if (own_header && existing_.header_context.is_object() && opt.header_context.is_object())
      for (const auto& [k, v] : opt.header_context.items())
        context_differs = context_differs || !existing_.header_context.contains(k) || existing_.header_context[k] != v;
    rewrite = existing_.torn_lines > 0 || existing_.invalid_lines > 0 || !same_header || context_differs;
  }
  const json head_context = own_header                             ? opt.header_context
                            : existing_.header_context.is_object() ? existing_.header_context
                                                                   : json::object();
  const std::string head = header ? header_line(*header, head_context) : std::string();
  if (rewrite) {  // atomically: on failure the old log stays as it was
    std::string text = head;
    for (const auto& e : existing_.entries) text += e.dump() + "\n";
    write_file_atomically(path, text);
  }
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) throw io_error(fmt::format("cannot open results log '{}': {}", path, std::strerror(errno)));
}

results_log::~results_log() {
  if (fd_ >= 0) ::close(fd_);
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the lock; the file stays (a killed run's does too)
}

void results_log::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (lock_fd_ >= 0) {
    ::unlink((path_ + ".lock").c_str());  // while still holding the flock: see lock()
    ::close(lock_fd_);
  }
  lock_fd_ = -1;
}

void results_log::append(const nlohmann::json& entry) {
  const std::string line = entry.dump() + "\n";
  const off_t before = ::lseek(fd_, 0, SEEK_END);
  if (!write_all(fd_, line) || ::fsync(fd_) != 0) {
    const int err = errno;
    if (before >= 0 && ::ftruncate(fd_, before) == 0) ::fsync(fd_);  // no partial line left behind
    throw io_error(fmt::format("cannot append to results log '{}': {}", path_, std::strerror(err)));
  }
  entries_.put(entry);
}

}  // namespace attnbench

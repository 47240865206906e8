#include "harness/results_log.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <unistd.h>

namespace attnbench {

std::string log_path_for(const std::string& out_json) { return out_json + ".log.jsonl"; }

log_contents read_results_log(const std::string& path) {
  log_contents c;
  std::ifstream f(path, std::ios::binary);
  if (!f) return c;
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::size_t pos = 0;
  bool prefix_ok = true;
  while (pos < text.size()) {
    const auto nl = text.find('\n', pos);
    if (nl == std::string::npos) {  // torn tail: never reached its newline
      ++c.torn_lines;
      break;
    }
    const std::string_view line(text.data() + pos, nl - pos);
    pos = nl + 1;
    if (line.empty()) {
      if (prefix_ok) c.valid_bytes = pos;
      continue;
    }
    nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object() || !j.contains("name") || !j["name"].is_string()) {
      ++c.torn_lines;
      prefix_ok = false;
      continue;
    }
    if (prefix_ok) c.valid_bytes = pos;
    c.names.insert(j["name"].get<std::string>());
    c.entries.push_back(std::move(j));
  }
  return c;
}

results_log::results_log(const std::string& path, bool resume) : path_(path) {
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  if (resume) {
    existing_ = read_results_log(path);
    for (const auto& e : existing_.entries) entries_.put(e);
    // Rewrite when lines in the middle were bad; else cut a torn tail off.
    if (existing_.torn_lines > 0) {
      std::string keep;
      for (const auto& e : existing_.entries) keep += e.dump() + "\n";
      const std::string tmp = path + ".tmp";
      {
        std::ofstream o(tmp, std::ios::binary | std::ios::trunc);
        o << keep;
        if (!o) throw std::runtime_error(fmt::format("cannot write '{}'", tmp));
      }
      std::filesystem::rename(tmp, path);
    }
  }
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (resume ? 0 : O_TRUNC), 0644);
  if (fd_ < 0)
    throw std::runtime_error(fmt::format("cannot open results log '{}': {}", path, std::strerror(errno)));
}

results_log::~results_log() {
  if (fd_ >= 0) ::close(fd_);
}

void results_log::append(const nlohmann::json& entry) {
  const std::string line = entry.dump() + "\n";
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(fmt::format("cannot append to '{}': {}", path_, std::strerror(errno)));
    }
    done += static_cast<std::size_t>(n);
  }
  ::fsync(fd_);
  entries_.put(entry);
}

}  // namespace attnbench

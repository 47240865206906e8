// The results log: `<out>.log.jsonl`, one finished benchmark entry (a JSON
// object with "name") per line, appended and fsync'ed as soon as it finishes,
// so a killed sweep loses at most the entry being written. A torn last line
// (no newline, or not valid JSON) is ignored on reading and cut off before the
// next append, so that configuration simply runs again. The open log also
// keeps every entry in memory, so the final file needs no re-read.
#pragma once

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "harness/entry_set.hpp"

namespace attnbench {

struct log_contents {
  std::vector<nlohmann::json> entries;  // in file order, valid lines only
  std::set<std::string> names;
  std::size_t valid_bytes = 0;  // length of the prefix holding only complete, valid lines
  int torn_lines = 0;           // lines ignored (torn or invalid)
};

// Missing file: empty contents.
log_contents read_results_log(const std::string& path);

class results_log {
 public:
  // resume: keep the valid entries (truncating a torn tail); otherwise start empty.
  // Creates parent directories. Throws std::runtime_error on I/O failure.
  results_log(const std::string& path, bool resume);
  ~results_log();
  results_log(const results_log&) = delete;
  results_log& operator=(const results_log&) = delete;

  // What the file held when opened (resume); empty otherwise.
  const log_contents& existing() const { return existing_; }
  // Appends one line (entry.dump() + '\n'), then fsyncs.
  void append(const nlohmann::json& entry);
  const std::string& path() const { return path_; }
  // The valid entries read on resume, then every appended one: one per name, in
  // the order of first appearance, the last of a name winning (assemble_results'
  // rule). Equal to deduplicating a fresh read_results_log(path()).entries.
  const std::vector<nlohmann::json>& entries() const { return entries_.entries(); }

 private:
  std::string path_;
  int fd_ = -1;
  log_contents existing_;
  entry_set entries_;
};

// "<out>.log.jsonl"
std::string log_path_for(const std::string& out_json);

}  // namespace attnbench

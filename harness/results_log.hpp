// The results log: `<out>.log.jsonl`. Its first line is a header,
// {"context": {"attnbench_log": {"sweep_id", "configurations", "git_commit"}}},
// recording the sweep's identity (a hash of its configuration names and the
// build's commit; the report's loader reads it as a context line). Then one
// finished benchmark entry per line, appended and fsync'ed as soon as it
// finishes, so a killed sweep loses at most the entry being written.
//
// On resume every line is checked: a torn or unparsable line, and an entry
// that fails the schema (entry_schema.hpp) or names no configuration of the
// sweep, is not a finished result (that configuration runs again); the log is
// then rewritten atomically (safe_write.hpp) without them. A log whose header
// names another sweep (or has none) is refused (input_error) unless `append`
// is set, which keeps the log's own header: a mixed log needs --append each time.
// A lock (flock on `<log>.lock`, which holds the writer's pid) admits one
// writer: a second fails at once naming the holder's pid (io_error, exit 1).
// close() (a run that ends normally) removes the lock file; one left by a killed
// run holds no flock and is taken over as stale. The open log keeps every entry
// in memory, so the final file needs no re-read.
// The header's context may carry more than the identity (header_context): the
// sweep puts its device and ceilings there, so a resumed sweep reuses the
// ceilings instead of measuring them again.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/entry_set.hpp"

namespace attnbench {

struct log_identity {
  std::string sweep_id;  // "fnv1a64:<16 hex digits>"
  std::int64_t configurations = 0;
  std::string git_commit;
};
// The identity of a sweep of these configuration names (any order) built at `git_commit`.
log_identity sweep_identity(const std::vector<std::string>& names, const std::string& git_commit);
// With its newline; `context` (an object, may be empty) joins attnbench_log in the header's context.
std::string header_line(const log_identity& id, const nlohmann::json& context = nlohmann::json::object());

struct log_contents {
  std::optional<log_identity> header;   // the first line, when it is a header
  nlohmann::json header_context;        // that line's whole context object (null without a header)
  std::vector<nlohmann::json> entries;  // in file order: objects with a string "name"
  std::set<std::string> names;
  int torn_lines = 0;         // lines ignored: torn, not JSON, or too deep
  int invalid_lines = 0;      // JSON lines that are not finished entries (on resume: schema, name)
  std::string first_invalid;  // why the first invalid line was refused
};

// Missing file: empty contents. Reads raw lines; resume applies the schema.
log_contents read_results_log(const std::string& path);

struct log_options {
  bool resume = false;
  bool append = false;                                 // resume a log written by another sweep, keeping its entries
  std::optional<log_identity> identity;                // written as the header and checked on resume
  const std::set<std::string>* known_names = nullptr;  // resume keeps only these names (null: any)
  nlohmann::json header_context = nlohmann::json::object();  // written beside attnbench_log (header_line)
};

class results_log {
 public:
  // resume: keep the valid entries (rewriting the file without the others);
  // otherwise start empty. Creates parent directories. Throws io_error on I/O
  // failure or when another process holds the lock, input_error for another sweep's log.
  results_log(const std::string& path, const log_options& opt);
  results_log(const std::string& path, bool resume) : results_log(path, log_options{.resume = resume}) {}
  ~results_log();
  results_log(const results_log&) = delete;
  results_log& operator=(const results_log&) = delete;

  // The valid entries read on resume (and the counts of refused lines); empty otherwise.
  const log_contents& existing() const { return existing_; }
  // Appends one line (entry.dump() + '\n'), then fsyncs; on failure cuts the
  // partial line off again and throws io_error.
  void append(const nlohmann::json& entry);
  const std::string& path() const { return path_; }
  // The log's file descriptor (O_APPEND): crash_guard writes a crashed configuration's entry to it.
  int fd() const { return fd_; }
  // Ends a run that finished normally: closes the log and removes the lock file (safe:
  // a process that opened the old lock file finds it unlinked and retries). The
  // destructor only releases the lock.
  void close();
  // The valid entries read on resume, then every appended one: one per name, in
  // the order of first appearance, the last of a name winning (assemble_results'
  // rule). Equal to deduplicating a fresh read_results_log(path()).entries.
  const std::vector<nlohmann::json>& entries() const { return entries_.entries(); }

 private:
  void open(const log_options& opt);
  void lock();
  void keep_valid(const log_options& opt);
  std::string path_;
  int fd_ = -1, lock_fd_ = -1;
  log_contents existing_;
  entry_set entries_;
};

// "<out>.log.jsonl"
std::string log_path_for(const std::string& out_json);

}  // namespace attnbench

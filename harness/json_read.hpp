// Reading user-supplied JSON files safely: only regular files (a directory is
// named as one), at most max_json_file_bytes, nesting at most max_json_depth
// (checked while parsing, so a 1,000,000-deep file cannot exhaust the stack).
// Every failure is an input_error naming the file.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace attnbench {

inline constexpr int max_json_depth = 64;
inline constexpr std::uintmax_t max_json_file_bytes = std::uintmax_t{1} << 30;  // 1 GiB

// `what` names the kind of file in messages ("results file", "sweep file").
nlohmann::json read_json_file(const std::string& path, std::string_view what);
// The same limits for JSON text (one log line); a discarded value when invalid or too deep.
nlohmann::json parse_json_text(std::string_view text);

}  // namespace attnbench

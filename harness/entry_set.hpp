// The one rule that makes result files hold one entry per name: entries keep
// the position of a name's first appearance and the value of its last.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <vector>

namespace attnbench {

class entry_set {
 public:
  void put(nlohmann::json entry);  // keyed by entry["name"] ("" when absent)
  const std::vector<nlohmann::json>& entries() const { return list_; }

 private:
  std::vector<nlohmann::json> list_;
  std::unordered_map<std::string, std::size_t> where_;
};

}  // namespace attnbench

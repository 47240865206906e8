#include "harness/entry_set.hpp"

namespace attnbench {

void entry_set::put(nlohmann::json entry) {
  std::string name = entry.value("name", "");
  if (const auto it = where_.find(name); it != where_.end()) {
    list_[it->second] = std::move(entry);
    return;
  }
  where_.emplace(std::move(name), list_.size());
  list_.push_back(std::move(entry));
}

}  // namespace attnbench

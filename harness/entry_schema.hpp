// The benchmark entry schema of docs/json_schema.md, checked on every entry
// read back from a results log (--resume) or a result file (merge): a line or
// entry that fails is not a finished result.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace attnbench {

// Empty when `e` is a valid entry; else what is wrong, naming the field
// ("field 'status' is \"weird\", expected ok, skipped or failed").
std::string entry_schema_error(const nlohmann::json& e);

}  // namespace attnbench

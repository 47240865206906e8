// The items of the variant axis: a row name, or `tag:<tag>` for every row of
// the backend carrying that tag (core/variant.hpp), in registry order. Names
// and tags mix; the first mention of a row decides its place.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/variant.hpp"

namespace attnbench {

// "tag:<tag>" -> the tag; throws input_error naming the item and listing the tags.
tag parse_tag_item(std::string_view item);

// Checks an item's form (a tag must exist); names are checked by select_variants,
// which sees the rows. Returns the item.
std::string parse_variant_item(std::string_view item);

// The rows of `backend` the items select; no items: every row of the backend but the
// scans (tag scan: they run where a group names them).
// A name no row has (on any backend) throws input_error; a name only other
// backends have selects nothing, so one sweep serves every backend.
std::vector<const variant*> select_variants(const std::vector<std::string>& items, const std::vector<variant>& rows,
                                            backend_kind backend);

}  // namespace attnbench

// User block layouts of the `layout:b:PATH` mask term (docs/masks.md): a .npy
// array of 0/1 (dtype bool, uint8 or int8), shape (rows, cols) or (heads, rows,
// cols), which says which b x b blocks of (query block i / b, key block j / b)
// are visible. Loaded once per path per process and kept for the process's
// life, so a mask_spec refers to one by id and points at its bits without
// owning them (problem stays trivially copyable for the device).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attnbench {

struct block_layout {
  std::string path;
  std::int64_t heads = 1, rows = 0, cols = 0;
  std::vector<std::uint8_t> bits;  // C order, each 0 or 1
};

// Loads (or finds) the layout at `path`; throws input_error naming the file
// and what is wrong (missing, not .npy, dtype, rank, a value other than 0/1).
// Returns its id.
std::int32_t load_block_layout(const std::string& path);
const block_layout& block_layout_by_id(std::int32_t id);

// Parses a .npy byte string (tests); the same checks as load_block_layout.
block_layout parse_block_layout_npy(const std::string& bytes, const std::string& path);
// A .npy of uint8 with the given shape (tests, tools; the inverse of the parser).
std::string block_layout_npy(const std::vector<std::int64_t>& shape, const std::vector<std::uint8_t>& bits);

}  // namespace attnbench

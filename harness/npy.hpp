// Minimal .npy reader/writer for float32, little-endian, C-order arrays
// (format versions 1.0, 2.0 and 3.0). Strict: any other dtype, Fortran order,
// a malformed header or a size that does not match the shape throws
// input_error naming the file and the problem.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attnbench {

struct npy_array {
  std::vector<std::int64_t> shape;
  std::vector<float> data;  // C order
};

npy_array read_npy(const std::string& path);
// Writes version 1.0 (2.0 if the header would not fit), atomically (safe_write.hpp:
// io_error naming the file on I/O failure, the old file kept).
void write_npy(const std::string& path, const std::vector<std::int64_t>& shape,
               const std::vector<float>& data);

// "(2, 3, 4)" for messages.
std::string shape_string(const std::vector<std::int64_t>& shape);

}  // namespace attnbench

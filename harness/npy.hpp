// Minimal .npy reader/writer for little-endian, C-order arrays (format
// versions 1.0, 2.0 and 3.0): float32 read and written; float16 read (widened
// to float32, exactly); uint8 read (raw bytes: e4m3 codes for `attnbench
// run --dtype e4m3`) and written (`attnbench mask`). Strict: any other dtype, Fortran order, a malformed
// header or a size that does not match the shape throws input_error naming
// the file and the problem.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attnbench {

enum class npy_dtype { float32, float16, uint8 };

struct npy_array {
  std::vector<std::int64_t> shape;
  std::vector<float> data;          // C order; float32 and float16 files (empty for uint8)
  std::vector<std::uint8_t> bytes;  // C order; uint8 files only
  npy_dtype type = npy_dtype::float32;
};

// "float32" ('<f4'), "float16" ('<f2'), "uint8" ('|u1').
const char* to_string(npy_dtype t);
// The float32 value of an IEEE binary16 bit pattern (exact: subnormals, inf, NaN kept).
float half_to_float(std::uint16_t h);

npy_array read_npy(const std::string& path);
// Writes version 1.0 (2.0 if the header would not fit), atomically (safe_write.hpp:
// io_error naming the file on I/O failure, the old file kept).
void write_npy(const std::string& path, const std::vector<std::int64_t>& shape, const std::vector<float>& data);
void write_npy(const std::string& path, const std::vector<std::int64_t>& shape, const std::vector<std::uint8_t>& data);

// "(2, 3, 4)" for messages.
std::string shape_string(const std::vector<std::int64_t>& shape);

}  // namespace attnbench

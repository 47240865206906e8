#include "harness/npy.hpp"

#include "harness/safe_write.hpp"

#include <bit>
#include <cctype>
#include <cmath>
#include <charconv>
#include <cstring>
#include <fmt/format.h>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/problem.hpp"

namespace attnbench {

static_assert(std::endian::native == std::endian::little, "npy I/O assumes a little-endian host");

std::string shape_string(const std::vector<std::int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) s += ",";
  return s + ")";
}

namespace {

// The header is a Python dict literal; numpy always writes the three keys
// 'descr', 'fortran_order', 'shape'. We parse exactly that grammar.
class header_parser {
 public:
  header_parser(std::string_view text, const std::string& path) : s_(text), path_(path) {}

  void parse(std::string& descr, bool& fortran, std::vector<std::int64_t>& shape) {
    bool got_descr = false, got_order = false, got_shape = false;
    expect('{');
    while (true) {
      skip_ws();
      if (peek() == '}') {
        ++i_;
        break;
      }
      const std::string key = quoted();
      expect(':');
      if (key == "descr") {
        descr = quoted();
        got_descr = true;
      } else if (key == "fortran_order") {
        skip_ws();
        if (s_.substr(i_, 5) == "False") {
          fortran = false;
          i_ += 5;
        } else if (s_.substr(i_, 4) == "True") {
          fortran = true;
          i_ += 4;
        } else
          fail("bad fortran_order");
        got_order = true;
      } else if (key == "shape") {
        shape = tuple();
        got_shape = true;
      } else {
        fail(fmt::format("unexpected header key '{}'", key));
      }
      skip_ws();
      if (peek() == ',') ++i_;
    }
    if (!got_descr || !got_order || !got_shape) fail("header lacks descr, fortran_order or shape");
  }

 private:
  [[noreturn]] void fail(const std::string& why) {
    throw input_error(fmt::format("{}: not a valid .npy file ({})", path_, why));
  }
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void skip_ws() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  void expect(char c) {
    skip_ws();
    if (peek() != c) fail(fmt::format("expected '{}' in header", c));
    ++i_;
  }
  std::string quoted() {
    skip_ws();
    const char q = peek();
    if (q != '\'' && q != '"') fail("expected a quoted string in header");
    const auto end = s_.find(q, i_ + 1);
    if (end == std::string_view::npos) fail("unterminated string in header");
    std::string out(s_.substr(i_ + 1, end - i_ - 1));
    i_ = end + 1;
    return out;
  }
  std::vector<std::int64_t> tuple() {
    std::vector<std::int64_t> dims;
    expect('(');
    while (true) {
      skip_ws();
      if (peek() == ')') {
        ++i_;
        break;
      }
      std::int64_t v = 0;
      auto [ptr, ec] = std::from_chars(s_.data() + i_, s_.data() + s_.size(), v);
      if (ec != std::errc() || v < 0) fail("bad shape");
      i_ = ptr - s_.data();
      dims.push_back(v);
      skip_ws();
      if (peek() == ',')
        ++i_;
      else if (peek() != ')')
        fail("bad shape");
    }
    return dims;
  }

  std::string_view s_;
  const std::string& path_;
  std::size_t i_ = 0;
};

}  // namespace

const char* to_string(npy_dtype t) {
  switch (t) {
    case npy_dtype::float32: return "float32";
    case npy_dtype::float16: return "float16";
    case npy_dtype::uint8: return "uint8";
  }
  return "?";
}

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const int e = (h >> 10) & 0x1F;
  const std::uint32_t m = h & 0x3FFu;
  if (e == 0x1F) return std::bit_cast<float>(sign | 0x7F800000u | (m << 13));  // inf, NaN (payload kept)
  const float a = e == 0 ? std::ldexp(static_cast<float>(m), -24)              // subnormal: m x 2^-24
                         : std::ldexp(static_cast<float>(1024 + m), e - 25);   // 1.m x 2^(e-15)
  return sign ? -a : a;
}

npy_array read_npy(const std::string& path) {
  // Only regular files: a directory, a device (/dev/zero) or a pipe is refused
  // before anything is read, and the size is known before the data is.
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(st))
    throw input_error(fmt::format("cannot read '{}': {}", path, ec ? ec.message() : "no such file"));
  if (std::filesystem::is_directory(st))
    throw input_error(fmt::format("cannot read '{}': it is a directory (a .npy file is expected)", path));
  if (!std::filesystem::is_regular_file(st))
    throw input_error(fmt::format("'{}' is not a regular file (a .npy file is expected)", path));
  const std::uintmax_t file_size = std::filesystem::file_size(path, ec);
  if (ec) throw input_error(fmt::format("cannot read '{}': {}", path, ec.message()));
  std::ifstream f(path, std::ios::binary);
  if (!f) throw input_error(fmt::format("cannot read '{}': {}", path, std::strerror(errno)));
  auto read_exactly = [&](std::string& buf, std::size_t n, const char* what) {
    buf.resize(n);
    if (n && !f.read(buf.data(), static_cast<std::streamsize>(n)))
      throw input_error(fmt::format("{}: truncated .npy {}", path, what));
  };
  std::string pre;
  if (file_size < 10) throw input_error(fmt::format("{}: not a .npy file (bad magic)", path));
  read_exactly(pre, 10, "header");
  if (pre.compare(0, 6, "\x93NUMPY") != 0) throw input_error(fmt::format("{}: not a .npy file (bad magic)", path));
  const int major = static_cast<unsigned char>(pre[6]);
  auto byte = [](const std::string& b, std::size_t i) {
    return static_cast<std::size_t>(static_cast<unsigned char>(b[i]));
  };
  std::size_t header_len = 0, offset = 0;
  if (major == 1) {
    header_len = byte(pre, 8) | byte(pre, 9) << 8;
    offset = 10;
  } else if (major == 2 || major == 3) {
    std::string more;
    if (file_size < 12) throw input_error(fmt::format("{}: truncated .npy header", path));
    read_exactly(more, 2, "header");
    pre += more;
    header_len = byte(pre, 8) | byte(pre, 9) << 8 | byte(pre, 10) << 16 | byte(pre, 11) << 24;
    offset = 12;
  } else {
    throw input_error(fmt::format("{}: unsupported .npy version {}", path, major));
  }
  // numpy writes headers of a few hundred bytes; 1 MiB bounds what is read before the shape is known.
  constexpr std::size_t max_header = std::size_t{1} << 20;
  if (header_len > max_header)
    throw input_error(fmt::format("{}: .npy header of {} bytes exceeds {}", path, header_len, max_header));
  if (offset + header_len > file_size) throw input_error(fmt::format("{}: truncated .npy header", path));
  std::string header;
  read_exactly(header, header_len, "header");
  std::string descr;
  bool fortran = false;
  npy_array a;
  header_parser(header, path).parse(descr, fortran, a.shape);
  if (descr == "<f4")
    a.type = npy_dtype::float32;
  else if (descr == "<f2")
    a.type = npy_dtype::float16;
  else if (descr == "|u1")
    a.type = npy_dtype::uint8;
  else
    throw input_error(
        fmt::format("{}: dtype '{}' is not float32, float16 or uint8 ('<f4', '<f2', '|u1')", path, descr));
  const std::uint64_t item = a.type == npy_dtype::float32 ? 4 : a.type == npy_dtype::float16 ? 2 : 1;
  if (fortran) throw input_error(fmt::format("{}: Fortran-order arrays are not supported", path));
  // Element count with overflow checks, compared with the file before allocating.
  const std::uintmax_t data_bytes = file_size - (offset + header_len);
  std::uint64_t n = 1;
  for (auto dim : a.shape)
    if (__builtin_mul_overflow(n, static_cast<std::uint64_t>(dim), &n) || n > (std::uint64_t{1} << 60))
      throw input_error(fmt::format("{}: shape {} has more elements than any file holds", path, shape_string(a.shape)));
  if (data_bytes != n * item)
    throw input_error(
        fmt::format("{}: {} data bytes for shape {} (expected {})", path, data_bytes, shape_string(a.shape), n * item));
  auto read_data = [&](void* to) {
    if (n && !f.read(static_cast<char*>(to), static_cast<std::streamsize>(n * item)))
      throw input_error(fmt::format("{}: truncated .npy data", path));
  };
  if (a.type == npy_dtype::float32) {
    a.data.resize(n);
    read_data(a.data.data());
  } else if (a.type == npy_dtype::float16) {
    std::vector<std::uint16_t> h(n);
    read_data(h.data());
    a.data.resize(n);
    for (std::uint64_t i = 0; i < n; ++i) a.data[i] = half_to_float(h[i]);
  } else {
    a.bytes.resize(n);
    read_data(a.bytes.data());
  }
  return a;
}

namespace {

void write_npy_bytes(const std::string& path, const std::vector<std::int64_t>& shape, const char* descr,
                     std::string_view payload, std::size_t elem) {
  std::int64_t n = 1;
  for (auto dim : shape) n *= dim;
  if (static_cast<std::size_t>(n) * elem != payload.size())
    throw std::logic_error("write_npy: shape does not match the data size");
  std::string dict =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descr, shape_string(shape));
  // Pad with spaces and a newline so the data starts at a multiple of 64 bytes.
  const bool v2 = dict.size() + 1 + 10 > 65535;
  const std::size_t pre = v2 ? 12 : 10;
  dict.append((64 - (pre + dict.size() + 1) % 64) % 64, ' ');
  dict += '\n';
  std::string head = "\x93NUMPY";
  head += static_cast<char>(v2 ? 2 : 1);
  head += '\0';
  const std::size_t len = dict.size();
  head += static_cast<char>(len & 0xFF);
  head += static_cast<char>((len >> 8) & 0xFF);
  if (v2) {
    head += static_cast<char>((len >> 16) & 0xFF);
    head += static_cast<char>((len >> 24) & 0xFF);
  }
  write_file_atomically(path, {head, dict, payload});
}

}  // namespace

void write_npy(const std::string& path, const std::vector<std::int64_t>& shape, const std::vector<float>& data) {
  write_npy_bytes(path, shape, "<f4", {reinterpret_cast<const char*>(data.data()), data.size() * 4}, 4);
}

void write_npy(const std::string& path, const std::vector<std::int64_t>& shape, const std::vector<std::uint8_t>& data) {
  write_npy_bytes(path, shape, "|u1", {reinterpret_cast<const char*>(data.data()), data.size()}, 1);
}

}  // namespace attnbench

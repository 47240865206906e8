#include "core/block_layout.hpp"

#include <charconv>
#include <deque>
#include <fmt/format.h>
#include <fstream>
#include <iterator>
#include <mutex>
#include <sstream>

#include "core/errors.hpp"

namespace attnbench {

namespace {

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

// The value of 'key' in numpy's header dict, as written by numpy.save.
std::string header_value(const std::string& h, const std::string& key, const std::string& path) {
  const auto k = h.find("'" + key + "'");
  if (k == std::string::npos) throw input_error(fmt::format("layout file '{}': .npy header lacks '{}'", path, key));
  auto v = h.find(':', k);
  if (v == std::string::npos) throw input_error(fmt::format("layout file '{}': bad .npy header", path));
  ++v;
  while (v < h.size() && h[v] == ' ') ++v;
  std::size_t end = v;
  if (h[v] == '(')
    end = h.find(')', v) + 1;
  else if (h[v] == '\'')
    end = h.find('\'', v + 1) + 1;
  else
    while (end < h.size() && h[end] != ',' && h[end] != '}') ++end;
  if (end == 0 || end > h.size()) throw input_error(fmt::format("layout file '{}': bad .npy header", path));
  return h.substr(v, end - v);
}

}  // namespace

block_layout parse_block_layout_npy(const std::string& bytes, const std::string& path) {
  auto bad = [&](const std::string& why) { return input_error(fmt::format("layout file '{}': {}", path, why)); };
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) throw bad("not a .npy file");
  const int major = static_cast<unsigned char>(bytes[6]);
  std::size_t header_len = 0, start = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw bad("truncated .npy header");
    for (int b = 3; b >= 0; --b) header_len = (header_len << 8) | static_cast<unsigned char>(bytes[8 + b]);
    start = 12;
  } else {
    throw bad(fmt::format(".npy format version {} (expected 1, 2 or 3)", major));
  }
  if (bytes.size() < start + header_len) throw bad("truncated .npy header");
  const std::string h = bytes.substr(start, header_len);
  const std::string descr = header_value(h, "descr", path);
  if (descr != "'|u1'" && descr != "'|b1'" && descr != "'|i1'")
    throw bad(fmt::format("dtype {} (expected 0/1 as bool, uint8 or int8: '|b1', '|u1', '|i1')", descr));
  if (header_value(h, "fortran_order", path) != "False") throw bad("Fortran order (expected C order)");
  const std::string shape_s = header_value(h, "shape", path);
  std::vector<std::int64_t> shape;
  for (std::size_t i = 1; i + 1 < shape_s.size();) {
    while (i < shape_s.size() && (shape_s[i] == ' ' || shape_s[i] == ',')) ++i;
    if (i + 1 >= shape_s.size()) break;
    std::int64_t v = 0;
    auto [p, ec] = std::from_chars(shape_s.data() + i, shape_s.data() + shape_s.size() - 1, v);
    if (ec != std::errc() || v < 0) throw bad(fmt::format("bad shape {}", shape_s));
    shape.push_back(v);
    i = p - shape_s.data();
  }
  if (shape.size() != 2 && shape.size() != 3)
    throw bad(fmt::format("shape {} (expected (rows, cols) or (heads, rows, cols))", shape_text(shape)));
  std::int64_t n = 1;
  for (auto v : shape) {
    if (v <= 0 || v > (std::int64_t{1} << 24))
      throw bad(fmt::format("shape {} has an empty or too large axis", shape_text(shape)));
    n *= v;
  }
  const std::size_t data = start + header_len;
  if (bytes.size() - data != static_cast<std::size_t>(n))
    throw bad(fmt::format("{} data bytes for shape {} (expected {})", bytes.size() - data, shape_text(shape), n));
  block_layout out;
  out.path = path;
  out.heads = shape.size() == 3 ? shape[0] : 1;
  out.rows = shape[shape.size() - 2];
  out.cols = shape.back();
  out.bits.assign(bytes.begin() + data, bytes.end());
  for (std::int64_t e = 0; e < n; ++e)
    if (out.bits[e] > 1)
      throw bad(
          fmt::format("value {} at flat index {} (expected 0 or 1)", int(static_cast<std::int8_t>(out.bits[e])), e));
  return out;
}

std::string block_layout_npy(const std::vector<std::int64_t>& shape, const std::vector<std::uint8_t>& bits) {
  std::string h = "{'descr': '|u1', 'fortran_order': False, 'shape': " + shape_text(shape) + ", }";
  while ((10 + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(h.size() & 0xff);
  out += static_cast<char>(h.size() >> 8);
  out += h;
  out.append(bits.begin(), bits.end());
  return out;
}

namespace {
std::mutex table_mutex;
std::deque<block_layout>& table() {  // deque: references stay valid as it grows
  static std::deque<block_layout> t;
  return t;
}
}  // namespace

std::int32_t load_block_layout(const std::string& path) {
  std::lock_guard lock(table_mutex);
  auto& t = table();
  for (std::size_t i = 0; i < t.size(); ++i)
    if (t[i].path == path) return static_cast<std::int32_t>(i);
  std::ifstream f(path, std::ios::binary);
  if (!f) throw input_error(fmt::format("layout file '{}' cannot be opened", path));
  const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  t.push_back(parse_block_layout_npy(bytes, path));
  return static_cast<std::int32_t>(t.size() - 1);
}

const block_layout& block_layout_by_id(std::int32_t id) {
  std::lock_guard lock(table_mutex);
  if (id < 0 || static_cast<std::size_t>(id) >= table().size())
    throw input_error(fmt::format("no block layout with id {}", id));
  return table()[id];
}

}  // namespace attnbench

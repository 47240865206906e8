#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <tuple>

#include "harness/npy.hpp"
#include "core/problem.hpp"

using namespace attnbench;

namespace {

std::string path_of(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / "attnbench_test_npy";
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

// A file in numpy's layout with the given version, header dict and data bytes.
std::string raw_npy(const std::string& name, int major, std::string dict, std::size_t data_bytes) {
  const std::size_t pre = major == 1 ? 10 : 12;
  dict.append((64 - (pre + dict.size() + 1) % 64) % 64, ' ');
  dict += '\n';
  std::string s = "\x93NUMPY";
  s += static_cast<char>(major);
  s += '\0';
  const std::size_t n = dict.size();
  s += static_cast<char>(n & 0xFF);
  s += static_cast<char>(n >> 8);
  if (major != 1) s += std::string(2, '\0');
  s += dict;
  s += std::string(data_bytes, '\0');
  const std::string p = path_of(name);
  std::ofstream(p, std::ios::binary) << s;
  return p;
}

}  // namespace

TEST(npy, round_trip) {
  std::vector<float> data(2 * 3 * 5 * 8);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = 0.5f * static_cast<float>(i) - 3.0f;
  const std::string p = path_of("rt.npy");
  write_npy(p, {2, 3, 5, 8}, data);
  const npy_array a = read_npy(p);
  EXPECT_EQ(a.shape, (std::vector<std::int64_t>{2, 3, 5, 8}));
  EXPECT_EQ(a.data, data);
  EXPECT_EQ(std::filesystem::file_size(p) % 64, (data.size() * 4) % 64);  // header padded to 64
  write_npy(p, {7}, std::vector<float>(7, 1.0f));
  EXPECT_EQ(read_npy(p).shape, std::vector<std::int64_t>{7});
}

TEST(npy, reads_versions_1_2_3_as_numpy_writes_them) {
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  for (int v : {1, 2, 3}) {
    const npy_array a = read_npy(raw_npy("v" + std::to_string(v) + ".npy", v, dict, 24));
    EXPECT_EQ(a.shape, (std::vector<std::int64_t>{2, 3})) << v;
  }
  EXPECT_EQ(
      read_npy(raw_npy("scalar.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 4)).data.size(), 1u);
}

TEST(npy, rejects_bad_files_naming_the_problem) {
  auto fails_with = [](const std::string& p, const std::string& part) {
    try {
      read_npy(p);
      ADD_FAILURE() << p << " was accepted";
    } catch (const input_error& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  fails_with(raw_npy("f8.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", 16), "'<f8'");
  fails_with(raw_npy("be.npy", 1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8), "'>f4'");
  fails_with(raw_npy("fo.npy", 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 16), "Fortran");
  fails_with(raw_npy("short.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", 12), "data bytes");
  fails_with(raw_npy("long.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", 20), "data bytes");
  fails_with(raw_npy("noshape.npy", 1, "{'descr': '<f4', 'fortran_order': False, }", 4), "shape");
  fails_with(raw_npy("v9.npy", 9, "{}", 0), "version 9");
  const std::string junk = path_of("junk.npy");
  std::ofstream(junk) << "hello, not numpy";
  fails_with(junk, "bad magic");
  fails_with(path_of("does-not-exist.npy"), "cannot read");
  // A header claiming 2^61 x 8 x 8 elements with no data, a shape
  // whose product wraps, a directory and an endless device stream.
  fails_with(
      raw_npy("huge.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2305843009213693952, 1, 8, 8), }", 0),
      "more elements than any file holds");
  fails_with(raw_npy("wrap.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", 0),
             "more elements than any file holds");
  fails_with(raw_npy("bigish.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1073741824, 8), }", 16),
             "16 data bytes for shape (1073741824, 8) (expected 34359738368)");
  fails_with(std::filesystem::temp_directory_path().string(), "it is a directory");
  fails_with("/dev/zero", "is not a regular file");
}

namespace {

// raw_npy with the given data bytes.
std::string npy_with_data(const std::string& name, const std::string& descr, const std::string& shape,
                          const std::string& data) {
  const std::string p =
      raw_npy(name, 1, "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }", 0);
  std::ofstream(p, std::ios::binary | std::ios::app) << data;
  return p;
}

}  // namespace

TEST(npy, float16_widens_exactly) {
  // Every binary16 pattern against the definition written with std::pow.
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    const float got = half_to_float(static_cast<std::uint16_t>(h));
    if (e == 31) {
      ASSERT_EQ(std::isnan(got), m != 0) << h;
      ASSERT_EQ(std::isinf(got), m == 0) << h;
    } else {
      const double mag = e == 0 ? std::pow(2.0, -24) * m : std::pow(2.0, e - 15) * (1 + m / 1024.0);
      ASSERT_EQ(static_cast<double>(got), s ? -mag : mag) << h;
    }
    ASSERT_EQ(std::signbit(got), s == 1) << h;
  }
  const std::uint16_t bits[] = {0x3C00, 0xC000, 0x7BFF, 0x0001, 0x8000, 0x7C00};
  const std::string p = npy_with_data("f2.npy", "<f2", "(2, 3)", std::string(reinterpret_cast<const char*>(bits), 12));
  const npy_array a = read_npy(p);
  EXPECT_EQ(a.type, npy_dtype::float16);
  EXPECT_EQ(a.shape, (std::vector<std::int64_t>{2, 3}));
  ASSERT_EQ(a.data.size(), 6u);
  EXPECT_EQ(a.data[0], 1.0f);
  EXPECT_EQ(a.data[1], -2.0f);
  EXPECT_EQ(a.data[2], 65504.0f);
  EXPECT_EQ(a.data[3], std::ldexp(1.0f, -24));
  EXPECT_TRUE(std::signbit(a.data[4]) && a.data[4] == 0.0f);
  EXPECT_TRUE(std::isinf(a.data[5]));
  EXPECT_TRUE(a.bytes.empty());
}

TEST(npy, uint8_is_read_as_bytes) {
  std::string all(256, '\0');
  for (int i = 0; i < 256; ++i) all[i] = static_cast<char>(i);
  const npy_array a = read_npy(npy_with_data("u1.npy", "|u1", "(4, 64)", all));
  EXPECT_EQ(a.type, npy_dtype::uint8);
  ASSERT_EQ(a.bytes.size(), 256u);
  for (int i = 0; i < 256; ++i) EXPECT_EQ(a.bytes[i], i);
  EXPECT_TRUE(a.data.empty());
  EXPECT_EQ(read_npy(npy_with_data("f4.npy", "<f4", "(1,)", std::string(4, '\0'))).type, npy_dtype::float32);
  // The byte count follows the item size: 2 (float16) and 1 (uint8).
  for (auto [descr, bytes, want] :
       {std::tuple{"<f2", 6, "6 data bytes for shape (4,) (expected 8)"},
        std::tuple{"|u1", 3, "3 data bytes for shape (4,) (expected 4)"},
        std::tuple{"<u1", 4, "'<u1' is not float32, float16 or uint8"}, std::tuple{"<i1", 4, "'<i1'"}}) {
    try {
      read_npy(npy_with_data("bad.npy", descr, "(4,)", std::string(bytes, '\0')));
      ADD_FAILURE() << descr << " accepted";
    } catch (const input_error& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
  }
}

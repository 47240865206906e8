#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

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
  EXPECT_EQ(read_npy(raw_npy("scalar.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 4)).data.size(), 1u);
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
  // Issue 12: a header claiming 2^61 x 8 x 8 elements with no data, a shape
  // whose product wraps, a directory and an endless device stream.
  fails_with(raw_npy("huge.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2305843009213693952, 1, 8, 8), }", 0),
             "more elements than any file holds");
  fails_with(raw_npy("wrap.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", 0),
             "more elements than any file holds");
  fails_with(raw_npy("bigish.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1073741824, 8), }", 16),
             "16 data bytes for shape (1073741824, 8) (expected 34359738368)");
  fails_with(std::filesystem::temp_directory_path().string(), "it is a directory");
  fails_with("/dev/zero", "is not a regular file");
}

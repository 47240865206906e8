// Crash- and disk-full-safe writes (harness/safe_write.hpp): the old file
// survives any failure and no temp file is left. A full disk is simulated
// with RLIMIT_FSIZE (write fails with EFBIG), which needs no root.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sys/resource.h>

#include "core/errors.hpp"
#include "harness/json_output.hpp"
#include "harness/npy.hpp"
#include "harness/safe_write.hpp"

using namespace attnbench;

namespace {

std::string path_of(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / "attnbench_test_safe_write";
  std::filesystem::create_directories(dir);
  std::filesystem::remove_all(dir / name);
  std::filesystem::remove_all(dir / (name + ".tmp"));
  return (dir / name).string();
}

std::string slurp(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// Files may grow to `bytes` while alive (as on a nearly full disk).
struct file_size_limit {
  rlimit old{};
  explicit file_size_limit(rlim_t bytes) {
    std::signal(SIGXFSZ, SIG_IGN);
    ::getrlimit(RLIMIT_FSIZE, &old);
    rlimit r = old;
    r.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &r);
  }
  ~file_size_limit() { ::setrlimit(RLIMIT_FSIZE, &old); }
};

template <class F>
void expect_kept(const std::string& p, F write) {
  { std::ofstream(p) << "old contents\n"; }
  try {
    file_size_limit lim(4096);
    write();
    ADD_FAILURE() << "the write to " << p << " succeeded";
  } catch (const io_error& e) {
    EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("File too large"), std::string::npos) << e.what();
  }
  EXPECT_EQ(slurp(p), "old contents\n");
  EXPECT_FALSE(std::filesystem::exists(p + ".tmp"));
}

}  // namespace

TEST(safe_write, replaces_the_file_whole) {
  const std::string p = path_of("sub/dir/a.txt");
  write_file_atomically(p, "one\n");
  write_file_atomically(p, std::vector<std::string_view>{"tw", "o\n"});
  EXPECT_EQ(slurp(p), "two\n");
  EXPECT_FALSE(std::filesystem::exists(p + ".tmp"));
  EXPECT_THROW(write_file_atomically(std::filesystem::temp_directory_path().string(), "x"), input_error);
}

TEST(safe_write, a_full_disk_keeps_the_old_file_and_no_temp) {
  const std::string big(1 << 16, 'x');
  const std::string r = path_of("raw.txt");
  expect_kept(r, [&] { write_file_atomically(r, big); });
  const std::string j = path_of("r.json");
  expect_kept(j, [&] { write_json_file(j, nlohmann::json{{"context", {}}, {"benchmarks", {big}}}); });
  const std::string n = path_of("o.npy");
  expect_kept(n, [&] { write_npy(n, {1 << 14}, std::vector<float>(1 << 14)); });
}

// Parsing of the attnbench command line, and `attnbench run` driven as a
// process (ATTNBENCH_BIN): correct output on .npy inputs, exit status 2 and
// one error line for bad ones.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <sys/wait.h>
#include <algorithm>
#include <fmt/format.h>
#include <fstream>

#include "harness/cli.hpp"
#include "harness/npy.hpp"
#include "harness/tensors.hpp"
#include "kernels/reference/attention_reference.hpp"

using namespace attnbench;

namespace {

std::vector<std::string> words(std::initializer_list<const char*> l) { return {l.begin(), l.end()}; }

struct proc_result {
  int status = -1;
  std::string out, err;
};

// One folder per test and process: ctest -j runs these tests concurrently.
std::string dir() {
  const auto* t = ::testing::UnitTest::GetInstance()->current_test_info();
  const auto d = std::filesystem::temp_directory_path() / "attnbench_test_cli" /
                 (std::string(t ? t->name() : "none") + "_" + std::to_string(::getpid()));
  std::filesystem::create_directories(d);
  return d.string();
}

proc_result run_bin(const std::string& args) {
  const std::string err_file = dir() + "/stderr.txt";
  const std::string cmd = std::string(ATTNBENCH_BIN) + " " + args + " 2>" + err_file;
  proc_result r;
  FILE* p = ::popen(cmd.c_str(), "r");
  std::array<char, 512> buf{};
  while (std::fgets(buf.data(), buf.size(), p)) r.out += buf.data();
  const int st = ::pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  FILE* e = std::fopen(err_file.c_str(), "r");
  while (e && std::fgets(buf.data(), buf.size(), e)) r.err += buf.data();
  if (e) std::fclose(e);
  return r;
}

void expect_bad_input(const std::string& args, const std::string& names) {
  const proc_result r = run_bin(args);
  EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
  EXPECT_TRUE(r.err.starts_with("attnbench: error: ")) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(names), std::string::npos) << "message should name '" << names << "': " << r.err;
}

}  // namespace

TEST(cli, parses_sweep_options) {
  const sweep_cli c = parse_sweep_cli(words({"--preset", "quick", "--seq=512,1024", "--mask", "none,local:255,0",
                                             "--kv-heads", "H,H/4,1", "--block", "64x64,128x64", "--shard", "1/4",
                                             "--resume", "--reps", "7", "--backend", "cpu", "--variant", "flash2,naive",
                                             "--filter", "causal", "--hot", "--no-ceilings"}));
  EXPECT_EQ(c.preset, "quick");
  EXPECT_EQ(c.overrides.seq.size(), 2u);
  EXPECT_EQ(c.overrides.mask.size(), 2u);
  EXPECT_EQ(c.overrides.kv_heads.size(), 3u);
  EXPECT_EQ(c.overrides.block.size(), 2u);
  EXPECT_EQ(c.shard.index, 1);
  EXPECT_TRUE(c.sharded && c.resume && c.hot && c.no_ceilings);
  EXPECT_EQ(c.reps, 7);
  EXPECT_EQ(c.backend, backend_choice::cpu);
  EXPECT_EQ(c.overrides.variant, (std::vector<std::string>{"flash2", "naive"}));
}

TEST(cli, resolves_the_sweep) {
  EXPECT_EQ(resolve_sweep(parse_sweep_cli({})).name, "quick");
  const sweep_spec custom = resolve_sweep(parse_sweep_cli(words({"--seq", "256", "--variant", "flash2"})));
  EXPECT_EQ(custom.name, "custom");
  ASSERT_EQ(custom.groups.size(), 1u);
  EXPECT_EQ(expand(custom, registry(), backend_kind::cpu).size(), 1u);
  EXPECT_EQ(resolve_sweep(parse_sweep_cli(words({"--preset", "decode"}))).name, "decode");
}

TEST(cli, bad_sweep_options_throw_input_error) {
  for (auto args : {words({"--frob"}), words({"--seq", "512,,1024"}), words({"--seq"}), words({"--shard", "4/4"}),
                    words({"--dtype", "fp64"}), words({"--mask", "local:5"}), words({"--preset", "huge"}),
                    words({"--preset", "quick", "--sweep-file", "x.json"}), words({"--reps", "0"}),
                    words({"--rep-time", "-1"}), words({"--resume=yes"}), words({"stray"}),
                    words({"--benchmark_out=x.json"}), words({"--block", "64*64"})})
    EXPECT_THROW(parse_sweep_cli(args), input_error) << args[0];
  EXPECT_THROW(parse_run_cli(words({"--variant", "flash2"})), input_error);
  EXPECT_THROW(parse_merge_cli(words({"a.json"})), input_error);
  EXPECT_THROW(parse_merge_cli(words({"--out", "x.json"})), input_error);
  EXPECT_EQ(parse_merge_cli(words({"--out", "x.json", "a.json", "b.json"})).inputs.size(), 2u);
  EXPECT_THROW(parse_backend_choice("tpu"), input_error);
}

TEST(cli, run_matches_the_reference_and_times) {
  problem p;
  p.B = 1;
  p.H = 4;
  p.Hkv = 2;
  p.Nq = 33;
  p.Nkv = 70;
  p.d = 32;
  p.mask = parse_mask("causal");
  const host_inputs in = make_inputs(p, 99);
  const std::string d = dir();
  write_npy(d + "/q.npy", {p.B, p.H, p.Nq, p.d}, in.q);
  write_npy(d + "/k.npy", {p.B, p.Hkv, p.Nkv, p.d}, in.k);
  write_npy(d + "/v.npy", {p.B, p.Hkv, p.Nkv, p.d}, in.v);
  const proc_result r = run_bin(fmt::format("run --variant flash2 --backend cpu --q {0}/q.npy --k {0}/k.npy "
                                            "--v {0}/v.npy --out {0}/o.npy --mask causal --block 32x32 --repeat 3",
                                            d));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with("median_ms=")) << r.out;
  const npy_array o = read_npy(d + "/o.npy");
  ASSERT_EQ(o.shape, (std::vector<std::int64_t>{1, 4, 33, 32}));
  const auto rows = all_rows(p);
  const reference_rows ref = reference_softmax(in, rows);
  const error_report e = compare_rows(p, o.data, {}, rows, ref.o, {});
  EXPECT_LT(e.rel_l2, 1e-5);
}

TEST(cli, run_rejects_bad_tensors_with_exit_2) {
  const std::string d = dir();
  write_npy(d + "/q4.npy", {1, 4, 16, 32}, std::vector<float>(4 * 16 * 32));
  write_npy(d + "/k3.npy", {1, 3, 16, 32}, std::vector<float>(3 * 16 * 32));
  write_npy(d + "/k2.npy", {1, 2, 16, 32}, std::vector<float>(2 * 16 * 32));
  write_npy(d + "/k2d16.npy", {1, 2, 16, 16}, std::vector<float>(2 * 16 * 16));
  write_npy(d + "/q3d.npy", {4, 16, 32}, std::vector<float>(4 * 16 * 32));
  {
    std::ofstream f(d + "/f8.npy", std::ios::binary);
    std::string dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 4, 16, 32), }";
    dict.append((64 - (10 + dict.size() + 1) % 64) % 64, ' ');
    dict += '\n';
    f << std::string("\x93NUMPY\x01\x00", 8) << static_cast<char>(dict.size()) << '\0' << dict
      << std::string(8 * 4 * 16 * 32, '\0');
  }
  const std::string base = "run --variant flash2 --backend cpu --out " + d + "/o.npy";
  expect_bad_input(base + " --q " + d + "/f8.npy --k " + d + "/k2.npy --v " + d + "/k2.npy", "'<f8'");
  expect_bad_input(base + " --q " + d + "/q4.npy --k " + d + "/k3.npy --v " + d + "/k3.npy", "Hkv=3");
  expect_bad_input(base + " --q " + d + "/q3d.npy --k " + d + "/k2.npy --v " + d + "/k2.npy", "(4, 16, 32)");
  expect_bad_input(base + " --q " + d + "/q4.npy --k " + d + "/k2d16.npy --v " + d + "/k2d16.npy", "(1, 2, 16, 16)");
  expect_bad_input(base + " --q " + d + "/q4.npy --k " + d + "/k2.npy --v " + d + "/k2d16.npy", "V shape");
  expect_bad_input(base + " --q " + d + "/missing.npy --k " + d + "/k2.npy --v " + d + "/k2.npy", "missing.npy");
  expect_bad_input("run --variant nope --backend cpu --out " + d + "/o.npy --q " + d + "/q4.npy --k " + d +
                       "/k2.npy --v " + d + "/k2.npy",
                   "'nope'");
  expect_bad_input(base + " --q " + d + "/q4.npy --k " + d + "/k2.npy --v " + d + "/k2.npy --block 64x48", "Bc=48");
}

TEST(cli, help_lists_every_axis_of_the_table) {
  const proc_result r = run_bin("--help");
  ASSERT_EQ(r.status, 0) << r.err;
  for (const sweep_axis* a : sweep_axis_table())
    EXPECT_NE(r.out.find(a->flag() + " " + std::string(a->help())), std::string::npos) << a->flag();
}

TEST(cli, sweep_selects_variants_by_tag) {
  const proc_result r = run_bin("sweep --backend cpu --dry-run --seq 64 --variant naive,tag:tiled,flash2");
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<std::string> rows;
  for (std::size_t at = 0; at < r.out.size();) {
    const auto end = r.out.find('\n', at);
    rows.push_back(r.out.substr(at, r.out.find('/', at) - at));
    at = end == std::string::npos ? r.out.size() : end + 1;
  }
  EXPECT_EQ(rows, (std::vector<std::string>{"naive", "flash1", "flash2", "sparse"}));
  expect_bad_input("sweep --backend cpu --dry-run --variant naive,tag:frob", "'tag:frob'");
  expect_bad_input("sweep --backend cpu --dry-run --variant naive,nope", "'nope'");
}

TEST(cli, run_lse_with_a_variant_that_writes_none_fails_before_writing) {
  const std::string d = dir();
  write_npy(d + "/q.npy", {1, 2, 16, 32}, std::vector<float>(2 * 16 * 32));
  write_npy(d + "/k.npy", {1, 2, 16, 32}, std::vector<float>(2 * 16 * 32));
  std::filesystem::remove(d + "/o.npy");
  expect_bad_input("run --variant naive --backend cpu --q " + d + "/q.npy --k " + d + "/k.npy --v " + d +
                       "/k.npy --out " + d + "/o.npy --lse " + d + "/lse.npy",
                   "writes no log-sum-exp");
  EXPECT_FALSE(std::filesystem::exists(d + "/o.npy")) << "o.npy was written before the refusal";
  EXPECT_FALSE(std::filesystem::exists(d + "/lse.npy"));
}

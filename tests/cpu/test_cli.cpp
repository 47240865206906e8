// Parsing of the attnbench command line, and `attnbench run` driven as a
// process (ATTNBENCH_BIN): correct output on .npy inputs (float32, float16,
// e4m3 codes with --scales), exit status 2 and one error line for bad ones.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <bit>
#include <cstdio>
#include <filesystem>
#include <sys/wait.h>
#include <algorithm>
#include <fmt/format.h>
#include <fstream>

#include "core/fp8.hpp"
#include "harness/cli.hpp"
#include "harness/cli/args.hpp"
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
  const sweep_cli c = parse_sweep_cli(words(
      {"--preset",     "quick",        "--seq=512,1024", "--mask",       "none,local:255,0", "--kv-heads", "H,H/4,1",
       "--block",      "64x64,128x64", "--shard",        "1/4",          "--resume",         "--reps",     "7",
       "--backend",    "cpu",          "--variant",      "flash2,naive", "--filter",         "causal",     "--hot",
       "--no-ceilings"}));
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
  for (auto args :
       {words({"--frob"}), words({"--seq", "512,,1024"}), words({"--seq"}), words({"--shard", "4/4"}),
        words({"--dtype", "fp64"}), words({"--mask", "local:5"}), words({"--preset", "huge"}),
        words({"--preset", "quick", "--sweep-file", "x.json"}), words({"--reps", "0"}), words({"--rep-time", "-1"}),
        words({"--resume=yes"}), words({"stray"}), words({"--benchmark_out=x.json"}), words({"--block", "64*64"})})
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
  const proc_result r =
      run_bin(fmt::format("run --variant flash2 --backend cpu --q {0}/q.npy --k {0}/k.npy "
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

namespace {

// A .npy of raw bytes in numpy's layout: descr '|u1' (e4m3 codes) or '<f2'.
void write_raw_npy(const std::string& path, const char* descr, const std::vector<std::int64_t>& shape,
                   const std::string& data) {
  std::string dict =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descr, shape_string(shape));
  dict.append((64 - (10 + dict.size() + 1) % 64) % 64, ' ');
  dict += '\n';
  std::ofstream f(path, std::ios::binary);
  f << std::string("\x93NUMPY\x01\x00", 8) << static_cast<char>(dict.size() & 0xFF)
    << static_cast<char>(dict.size() >> 8) << dict << data;
}

std::string codes_of(const std::vector<float>& x, float scale) {
  std::string s(x.size(), '\0');
  for (std::size_t i = 0; i < x.size(); ++i) s[i] = static_cast<char>(e4m3_from_float(x[i] / scale));
  return s;
}

// The first CPU row that declares e4m3, or null.
const variant* cpu_e4m3_row() {
  for (const variant& v : registry())
    if (v.backend == backend_kind::cpu && v.math == attention_math::softmax &&
        std::ranges::find(v.caps.dtypes, dtype::e4m3) != v.caps.dtypes.end())
      return &v;
  return nullptr;
}

struct e4m3_files {
  problem p;
  host_inputs in;  // make_inputs(p): quantised, with scales
  std::string dir;
};

// q/k/v.npy (float32 originals) and q/k/v_codes.npy (their e4m3 codes).
e4m3_files write_e4m3_inputs() {
  e4m3_files f{make_problem(1, 4, 2, 33, 70, 32, dtype::e4m3, "causal"), {}, dir()};
  const host_inputs orig = make_original_inputs(f.p, 99);
  f.in = make_inputs(f.p, 99);
  write_npy(f.dir + "/q.npy", {1, 4, 33, 32}, orig.q);
  write_npy(f.dir + "/k.npy", {1, 2, 70, 32}, orig.k);
  write_npy(f.dir + "/v.npy", {1, 2, 70, 32}, orig.v);
  write_raw_npy(f.dir + "/q_codes.npy", "|u1", {1, 4, 33, 32}, codes_of(orig.q, f.in.scales.q));
  write_raw_npy(f.dir + "/k_codes.npy", "|u1", {1, 2, 70, 32}, codes_of(orig.k, f.in.scales.k));
  write_raw_npy(f.dir + "/v_codes.npy", "|u1", {1, 2, 70, 32}, codes_of(orig.v, f.in.scales.v));
  return f;
}

}  // namespace

TEST(cli, parses_e4m3_scales) {
  const auto o = cli::parse_run_options(words({"--variant", "x", "--q", "q", "--k", "k", "--v", "v", "--out", "o",
                                               "--dtype", "e4m3", "--scales", "0.5,0.0078125,3e-3"}));
  ASSERT_TRUE(o.scales);
  EXPECT_EQ(*o.scales, (input_scales{0.5f, 0.0078125f, 3e-3f}));
  EXPECT_EQ(o.cli.type, dtype::e4m3);
  EXPECT_FALSE(cli::parse_run_options(
                   words({"--variant", "x", "--q", "q", "--k", "k", "--v", "v", "--out", "o", "--dtype", "e4m3"}))
                   .scales);
  const auto base = words({"--variant", "x", "--q", "q", "--k", "k", "--v", "v", "--out", "o"});
  const std::pair<std::vector<std::string>, std::string> bad[] = {
      {{"--scales", "1,1,1"}, "not --dtype fp32"},
      {{"--dtype", "bf16", "--scales", "1,1,1"}, "not --dtype bf16"},
      {{"--dtype", "e4m3", "--scales", "1,1"}, "got 2"},
      {{"--dtype", "e4m3", "--scales", "1,1,1,1"}, "got 4"},
      {{"--dtype", "e4m3", "--scales", "0,1,1"}, "q scale '0'"},
      {{"--dtype", "e4m3", "--scales", "1,-2,1"}, "k scale '-2'"},
      {{"--dtype", "e4m3", "--scales", "1,1,nan"}, "v scale 'nan'"},
      {{"--dtype", "e4m3", "--scales", "inf,1,1"}, "q scale 'inf'"},
      {{"--dtype", "e4m3", "--scales", "1,abc,1"}, "k scale 'abc'"},
      {{"--dtype", "e4m3", "--scales", "1,,1"}, "k scale ''"},
      {{"--dtype", "e4m3", "--scales", "1e-50,1,1"}, "q scale '1e-50'"},  // 0 in float32
      {{"--dtype", "e4m3", "--scales", "1,1,1e39"}, "v scale '1e39'"},    // inf in float32
      {{"--dtype", "e4m3", "--scales", "1,1,2x"}, "v scale '2x'"},
  };
  for (const auto& [extra, why] : bad) {
    auto args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    try {
      parse_run_cli(args);
      ADD_FAILURE() << extra.back() << " accepted";
    } catch (const input_error& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  }
}

TEST(cli, run_e4m3_bad_codes_and_scales_exit_2) {
  const e4m3_files f = write_e4m3_inputs();
  const std::string d = f.dir;
  std::string nan_codes = codes_of(make_original_inputs(f.p, 99).v, f.in.scales.v);
  nan_codes[100] = '\x7F';
  write_raw_npy(d + "/v_nan7f.npy", "|u1", {1, 2, 70, 32}, nan_codes);
  nan_codes[100] = '\x00';
  nan_codes[7] = '\xFF';
  write_raw_npy(d + "/v_nanff.npy", "|u1", {1, 2, 70, 32}, nan_codes);
  const std::string codes = fmt::format("--q {0}/q_codes.npy --k {0}/k_codes.npy", d);
  const std::string base = "run --variant flash2 --backend cpu --out " + d + "/o.npy ";
  expect_bad_input(base + codes + " --v " + d + "/v_codes.npy --dtype e4m3", "need --scales q,k,v");
  expect_bad_input(base + codes + " --v " + d + "/v_codes.npy --dtype bf16", "need --dtype e4m3");
  expect_bad_input(base + codes + " --v " + d + "/v_nan7f.npy --dtype e4m3 --scales 1,1,1",
                   "v_nan7f.npy: element 100 is 0x7F");
  expect_bad_input(base + codes + " --v " + d + "/v_nanff.npy --dtype e4m3 --scales 1,1,1",
                   "v_nanff.npy: element 7 is 0xFF");
  expect_bad_input(base + codes + " --v " + d + "/v.npy --dtype e4m3 --scales 1,1,1", "v.npy: float32 while");
  expect_bad_input(base + fmt::format("--q {0}/q.npy --k {0}/k.npy --v {0}/v.npy --dtype e4m3 --scales 1,1,1", d),
                   "quantises itself");
  expect_bad_input(base + codes + " --v " + d + "/v_codes.npy --dtype e4m3 --scales 1,0,1", "k scale '0'");
}

TEST(cli, run_e4m3_inputs_reach_the_row) {
  // Both input forms get past every input check to the row; flash2 (fp32 on the CPU) then
  // refuses the dtype, or, where a CPU row runs e4m3, the run succeeds and prints the scales.
  const e4m3_files f = write_e4m3_inputs();
  const std::string d = f.dir;
  for (const std::string inputs : {fmt::format("--q {0}/q.npy --k {0}/k.npy --v {0}/v.npy", d),
                                   fmt::format("--q {0}/q_codes.npy --k {0}/k_codes.npy --v {0}/v_codes.npy "
                                               "--scales {1:.9g},{2:.9g},{3:.9g}",
                                               d, f.in.scales.q, f.in.scales.k, f.in.scales.v)}) {
    const proc_result r =
        run_bin("run --variant flash2 --backend cpu --dtype e4m3 --mask causal --out " + d + "/o.npy " + inputs);
    if (r.status == 0) {
      EXPECT_NE(r.out.find(
                    fmt::format("e4m3 scales q={:.9g} k={:.9g} v={:.9g}", f.in.scales.q, f.in.scales.k, f.in.scales.v)),
                std::string::npos)
          << r.out;
    } else {
      EXPECT_EQ(r.status, 2) << r.err;
      EXPECT_NE(r.err.find("flash2 does not support this problem"), std::string::npos) << r.err;
      EXPECT_NE(r.err.find("e4m3"), std::string::npos) << r.err;
    }
  }
}

TEST(cli, run_e4m3_matches_the_quantised_reference) {
  const variant* row = cpu_e4m3_row();
  if (!row) GTEST_SKIP() << "no CPU row runs e4m3 in this build (the CUDA e4m3 row is tested in tests/gpu)";
  const e4m3_files f = write_e4m3_inputs();
  const std::string d = f.dir;
  host_inputs ref_in = f.in;
  ref_in.p.mask = parse_mask("causal");
  const auto rows = all_rows(ref_in.p);
  const reference_rows ref = reference_softmax(ref_in, rows);
  for (const std::string inputs : {fmt::format("--q {0}/q.npy --k {0}/k.npy --v {0}/v.npy", d),
                                   fmt::format("--q {0}/q_codes.npy --k {0}/k_codes.npy --v {0}/v_codes.npy "
                                               "--scales {1:.9g},{2:.9g},{3:.9g}",
                                               d, f.in.scales.q, f.in.scales.k, f.in.scales.v)}) {
    const proc_result r = run_bin(fmt::format(
        "run --variant {} --backend cpu --dtype e4m3 --mask causal --out {}/o.npy {}", row->name, d, inputs));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(r.out.starts_with(
        fmt::format("e4m3 scales q={:.9g} k={:.9g} v={:.9g}", f.in.scales.q, f.in.scales.k, f.in.scales.v)))
        << r.out;
    const npy_array o = read_npy(d + "/o.npy");
    for (float x : o.data) ASSERT_EQ(x, round_to(dtype::bf16, x)) << "O of e4m3 is bf16";
    EXPECT_LT(compare_rows(ref_in.p, o.data, {}, rows, ref.o, {}).rel_l2, sweep_tolerance(dtype::e4m3));
  }
}

TEST(cli, run_reads_float16_inputs) {
  // float16 .npy inputs are widened exactly: the O of an fp32 run equals the reference on
  // those values.
  problem p = make_problem(1, 2, 2, 16, 24, 32, dtype::fp32, "none");
  host_inputs in = make_inputs(p, 3);
  const std::string d = dir();
  const std::pair<std::vector<float>*, const char*> t[] = {{&in.q, "q"}, {&in.k, "k"}, {&in.v, "v"}};
  for (auto [x, n] : t) {
    std::string bytes;
    for (float& v : *x) {
      v = round_to(dtype::fp16, v);
      // binary16 bits of a value that fp16 represents: sign, exponent, 10 mantissa bits (normal range here).
      const std::uint32_t u = std::bit_cast<std::uint32_t>(v);
      const int e = static_cast<int>((u >> 23) & 0xFF) - 127 + 15;
      std::uint16_t h = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
      if (v != 0) h |= static_cast<std::uint16_t>((e << 10) | ((u >> 13) & 0x3FF));
      ASSERT_GT(e, 0);
      ASSERT_EQ(half_to_float(h), v);
      bytes.append(reinterpret_cast<const char*>(&h), 2);
    }
    write_raw_npy(fmt::format("{}/{}.npy", d, n), "<f2", {1, 2, n[0] == 'q' ? 16 : 24, 32}, bytes);
  }
  const proc_result r =
      run_bin(fmt::format("run --variant flash2 --backend cpu --q {0}/q.npy --k {0}/k.npy "
                          "--v {0}/v.npy --out {0}/o.npy",
                          d));
  ASSERT_EQ(r.status, 0) << r.err;
  const auto rows = all_rows(p);
  const reference_rows ref = reference_softmax(in, rows);
  EXPECT_LT(compare_rows(p, read_npy(d + "/o.npy").data, {}, rows, ref.o, {}).rel_l2, 1e-5);
}

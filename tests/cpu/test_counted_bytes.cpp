// Bytes the CPU kernels count while they run equal each variant's model
// (kernels/models/models.cpp) exactly, over a grid of shapes with ragged lengths,
// Nq != Nkv both ways, every mask kind, GQA and several tile shapes, at every
// dtype the row claims (flash2 and sparse: fp32, bf16 and e4m3: 1-byte Q, K,
// V and a bf16 O).
#include <gtest/gtest.h>

#include <set>

#include "kernels/registry.hpp"
#include "harness/tensors.hpp"

using namespace attnbench;

namespace {

std::vector<std::string> cpu_variant_names() {
  std::vector<std::string> names;
  for (const variant& v : registry())  // the scans: tests/cpu/test_scan_rows.cpp
    if (v.backend == backend_kind::cpu && !is_scan(v.math)) names.push_back(v.name);
  return names;
}

class counted_bytes : public ::testing::TestWithParam<std::string> {};

TEST_P(counted_bytes, equal_the_model) {
  const variant& v = *find_variant(GetParam(), backend_kind::cpu);
  int checked = 0;
  std::set<dtype> types;
  for (dtype t : v.caps.dtypes)
    for (const char* mask :
         {"none", "causal", "local:5,0", "local:2,40", "global:4", "causal+global:20", "local:0,0+global:1"})
      for (auto [nq, nkv] : {std::pair{33, 33}, {16, 64}, {100, 17}, {5, 130}, {64, 64}})
        for (auto [br, bc] : {std::pair{16, 16}, {32, 16}, {16, 64}})
          for (auto [h, hkv] : {std::pair{2, 2}, {4, 1}}) {
            problem p;
            p.B = 2;
            p.H = h;
            p.Hkv = hkv;
            p.Nq = nq;
            p.Nkv = nkv;
            p.d = 8;
            p.Br = br;
            p.Bc = bc;
            p.mask = parse_mask(mask);
            p.type = t;
            if (!v.supports(p).ok) continue;
            auto r = v.make(p);
            r->set_inputs(make_inputs(p, 3));
            r->run();
            r->run();  // counters restart with every run
            ASSERT_EQ(r->counted_bytes(), static_cast<std::int64_t>(v.model(p).bytes)) << v.benchmark_name(p);
            ++checked;
            types.insert(t);
          }
  EXPECT_GE(checked, 30 * static_cast<int>(v.caps.dtypes.size())) << v.name;
  EXPECT_EQ(types.size(), v.caps.dtypes.size()) << v.name;
}

INSTANTIATE_TEST_SUITE_P(registry, counted_bytes, ::testing::ValuesIn(cpu_variant_names()),
                         [](const auto& info) { return info.param; });

// flash2 claims e4m3 (the grid above then checks its 1-byte counts); control:
// its counted bytes at e4m3 differ from those at fp32 and bf16 on one shape,
// so the grid is not checking the same number three times.
TEST(counted_bytes_model, e4m3_counts_one_byte_inputs_and_a_bf16_output) {
  const variant& v = *find_variant("flash2", backend_kind::cpu);
  problem p;
  p.Nq = p.Nkv = 64;
  p.d = 64;
  std::vector<std::int64_t> counted;
  for (dtype t : {dtype::fp32, dtype::bf16, dtype::e4m3}) {
    p.type = t;
    ASSERT_TRUE(v.supports(p).ok) << to_string(t);
    auto r = v.make(p);
    r->set_inputs(make_inputs(p, 3));
    r->run();
    counted.push_back(r->counted_bytes());
  }
  // One 64 x 64 tile: Q, K, V at 4 / 2 / 1 bytes, O at 4 / 2 / 2, lse 4.
  const std::int64_t n = 64 * 64, lse = 4 * 64;
  EXPECT_EQ(counted, (std::vector<std::int64_t>{16 * n + lse, 8 * n + lse, 5 * n + lse}));
}

// At fp16 the model scales Q, K, V, O by 2 bytes, S/P/lse/state stay 4.
TEST(counted_bytes_model, element_size_follows_dtype) {
  problem p;
  p.Nq = p.Nkv = 64;
  p.d = 64;
  const variant& v = *find_variant("flash2", backend_kind::cpu);
  const double b32 = v.model(p).bytes;
  p.type = dtype::fp16;
  const double b16 = v.model(p).bytes;
  // flash2 at Br = Bc = 64, one tile: Q + O + K + V elements, lse rows in fp32.
  EXPECT_EQ(b32, 4.0 * 64 * 64 * 4 + 4 * 64);
  EXPECT_EQ(b16, 2.0 * 64 * 64 * 4 + 4 * 64);
}

}  // namespace

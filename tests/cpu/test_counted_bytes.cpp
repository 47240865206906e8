// Bytes the CPU kernels count while they run equal each variant's model
// (kernels/models/models.cpp) exactly, over a grid of shapes with ragged lengths,
// Nq != Nkv both ways, every mask kind, GQA and several tile shapes.
#include <gtest/gtest.h>

#include "kernels/registry.hpp"
#include "harness/tensors.hpp"

using namespace attnbench;

namespace {

std::vector<std::string> cpu_variant_names() {
  std::vector<std::string> names;
  for (const variant& v : registry())
    if (v.backend == backend_kind::cpu) names.push_back(v.name);
  return names;
}

class counted_bytes : public ::testing::TestWithParam<std::string> {};

TEST_P(counted_bytes, equal_the_model) {
  const variant& v = *find_variant(GetParam(), backend_kind::cpu);
  int checked = 0;
  for (const char* mask : {"none", "causal", "local:5,0", "local:2,40", "global:4",
                           "causal+global:20", "local:0,0+global:1"})
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
          if (!v.supports(p).ok) continue;
          auto r = v.make(p);
          r->set_inputs(make_inputs(p, 3));
          r->run();
          r->run();  // counters restart with every run
          ASSERT_EQ(r->counted_bytes(), static_cast<std::int64_t>(v.model(p).bytes)) << v.benchmark_name(p);
          ++checked;
        }
  EXPECT_GE(checked, 30) << v.name;
}

INSTANTIATE_TEST_SUITE_P(registry, counted_bytes, ::testing::ValuesIn(cpu_variant_names()),
                         [](const auto& info) { return info.param; });

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

// Inputs generated in parallel blocks (values independent of the thread count,
// the seed rule of tensors.hpp) and the fp32 originals shared across the dtypes of a shape.
#include <gtest/gtest.h>

#include <omp.h>
#include <cmath>
#include <random>

#include "harness/tensors.hpp"

namespace attnbench {
namespace {

problem shape(std::int64_t N, std::int64_t d, dtype t = dtype::fp32) {
  return make_problem(1, 4, 2, N, N + 7, d, t, "none");
}

TEST(input_generation, values_do_not_depend_on_the_thread_count) {
  const problem p = shape(1000, 64);  // 256,000 Q values: four blocks, plus K and V
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const host_inputs one = make_original_inputs(p, 42);
  omp_set_num_threads(std::max(threads, 3));
  const host_inputs many = make_original_inputs(p, 42);
  omp_set_num_threads(threads);
  EXPECT_EQ(one.q, many.q);
  EXPECT_EQ(one.k, many.k);
  EXPECT_EQ(one.v, many.v);
  // The control: another seed gives other values, so the equality above can fail.
  EXPECT_NE(make_original_inputs(p, 43).q, one.q);
}

TEST(input_generation, the_seed_rule) {
  const problem p = shape(1000, 64);
  const host_inputs in = make_original_inputs(p, 7);
  // Element i of tensor t: block i / input_block_elems, its own generator (tensors.hpp).
  for (int t = 0; t < 3; ++t) {
    const std::vector<float>& x = t == 0 ? in.q : t == 1 ? in.k : in.v;
    for (const std::int64_t block : {std::int64_t{0}, std::int64_t{1}}) {
      std::mt19937_64 gen(input_block_seed(7, t, block));
      std::normal_distribution<float> dist(0.0f, 1.0f);
      for (std::int64_t j = 0; j < 100; ++j)
        ASSERT_EQ(x[static_cast<std::size_t>(block * input_block_elems + j)], dist(gen))
            << t << " " << block << " " << j;
    }
  }
  EXPECT_NE(in.q[0], in.k[0]);  // tensors and blocks draw from different generators
  EXPECT_NE(in.q[0], in.q[static_cast<std::size_t>(input_block_elems)]);
  // N(0, 1): mean and variance of 256,000 draws within 5 standard errors.
  double s = 0, s2 = 0;
  for (float v : in.q) s += v, s2 += double(v) * v;
  const double n = static_cast<double>(in.q.size()), mean = s / n, var = s2 / n - mean * mean;
  EXPECT_LT(std::fabs(mean), 5 / std::sqrt(n));
  EXPECT_LT(std::fabs(var - 1), 5 * std::sqrt(2 / n));
}

TEST(input_generation, originals_are_generated_once_per_shape_and_shared_across_dtypes) {
  // A sweep's order: dtype outermost, so each shape comes back once per dtype.
  const std::vector<problem> order = {shape(64, 32, dtype::bf16), shape(96, 32, dtype::bf16),
                                      shape(64, 32, dtype::fp16), shape(96, 32, dtype::fp16),
                                      shape(64, 32, dtype::e4m3)};
  originals_store store(order, std::int64_t{1} << 30, 1234);
  std::vector<host_inputs> got;
  for (std::size_t i = 0; i < order.size(); ++i) {
    store.at(i);
    got.push_back(store.originals(order[i]));
    EXPECT_EQ(got.back().p.type, order[i].type);
  }
  EXPECT_EQ(store.generated(), 2);   // two shapes, five dtype x shape positions
  EXPECT_EQ(store.kept_bytes(), 0);  // each handed over at its last use
  EXPECT_EQ(got[0].q, got[2].q);
  EXPECT_EQ(got[0].v, got[4].v);
  EXPECT_EQ(got[1].k, got[3].k);
  EXPECT_EQ(got[0].q, make_original_inputs(order[0], 1234).q);  // what the cache made before
  // The control: with no room to keep anything every position generates again, same values.
  originals_store tight(order, 0, 1234);
  for (std::size_t i = 0; i < order.size(); ++i) {
    tight.at(i);
    EXPECT_EQ(tight.originals(order[i]).q, got[i].q);
  }
  EXPECT_EQ(tight.generated(), 5);
}

TEST(input_generation, rounding_per_dtype_is_the_originals_rounded) {
  const problem p32 = shape(300, 64);
  const host_inputs orig = make_original_inputs(p32, 5);
  for (dtype t : {dtype::bf16, dtype::fp16}) {
    host_inputs in = orig;
    in.p.type = t;
    round_inputs(in);  // parallel over the elements
    for (std::size_t i = 0; i < orig.q.size(); i += 97) ASSERT_EQ(in.q[i], round_to(t, orig.q[i])) << i;
  }
}

}  // namespace
}  // namespace attnbench

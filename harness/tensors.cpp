#include "harness/tensors.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <set>

#include <fmt/format.h>

#include "core/fp8.hpp"
#include "core/tiles.hpp"

namespace attnbench {

float round_to(dtype t, float x) {
  if (t == dtype::e4m3) return e4m3_round(x);  // before the finite check: inf saturates to 448 as on the device
  if (t == dtype::fp32 || !std::isfinite(x)) return x;
  if (t == dtype::bf16) {
    std::uint32_t u = std::bit_cast<std::uint32_t>(x);
    u += 0x7FFFu + ((u >> 16) & 1u);  // round to nearest even on the dropped 16 bits
    return std::bit_cast<float>(u & 0xFFFF0000u);
  }
  // fp16: 10 mantissa bits, exponent range [-14, 15]; subnormals below 2^-14.
  const float a = std::fabs(x);
  if (a >= 65520.0f) return std::copysign(INFINITY, x);
  int e = 0;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  const int exp = std::max(e - 1, -14);
  const float ulp = std::ldexp(1.0f, exp - 10);
  return std::copysign(std::nearbyint(a / ulp) * ulp, x);
}

namespace {

// splitmix64's finaliser (Steele, Lea, Flood 2014): a bijection of 64-bit words that
// spreads nearby inputs (seed, tensor, block) over unrelated generator seeds.
std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

std::uint64_t input_block_seed(std::uint64_t seed, int tensor, std::int64_t block) {
  return splitmix64(splitmix64(splitmix64(seed) ^ static_cast<std::uint64_t>(tensor)) ^
                    static_cast<std::uint64_t>(block));
}

host_inputs make_original_inputs(const problem& p, std::uint64_t seed) {
  host_inputs in{p, std::vector<float>(p.q_elems()), std::vector<float>(p.kv_elems()),
                 std::vector<float>(p.kv_elems())};
  std::vector<float>* tensors[3] = {&in.q, &in.k, &in.v};
  // Blocks of the three tensors in one list, so every thread has work even for a
  // decode shape's single-block Q.
  std::vector<std::pair<int, std::int64_t>> blocks;
  for (int t = 0; t < 3; ++t) {
    const auto n = static_cast<std::int64_t>(tensors[t]->size());
    for (std::int64_t b = 0; b * input_block_elems < n; ++b) blocks.emplace_back(t, b);
  }
  const auto count = static_cast<std::int64_t>(blocks.size());
#pragma omp parallel for schedule(dynamic, 4) if (count > 1)
  for (std::int64_t i = 0; i < count; ++i) {
    const auto [t, b] = blocks[static_cast<std::size_t>(i)];
    std::vector<float>& x = *tensors[t];
    std::mt19937_64 gen(input_block_seed(seed, t, b));
    std::normal_distribution<float> dist(0.0f, 1.0f);
    const std::int64_t lo = b * input_block_elems;
    const std::int64_t hi = std::min<std::int64_t>(lo + input_block_elems, static_cast<std::int64_t>(x.size()));
    for (std::int64_t j = lo; j < hi; ++j) x[static_cast<std::size_t>(j)] = dist(gen);
  }
  return in;
}

std::vector<float> make_grad_output(const problem& p, std::uint64_t seed) {
  std::vector<float> x(static_cast<std::size_t>(p.q_elems()));
  const std::int64_t blocks = ceil_div(p.q_elems(), input_block_elems);
  const dtype t = output_dtype(p.type);
#pragma omp parallel for schedule(dynamic, 4) if (blocks > 1)
  for (std::int64_t b = 0; b < blocks; ++b) {
    std::mt19937_64 gen(input_block_seed(seed, 3, b));
    std::normal_distribution<float> dist(0.0f, 1.0f);
    const std::int64_t lo = b * input_block_elems, hi = std::min(lo + input_block_elems, p.q_elems());
    for (std::int64_t j = lo; j < hi; ++j) x[static_cast<std::size_t>(j)] = round_to(t, dist(gen));
  }
  return x;
}

void round_inputs(host_inputs& in) {
  const dtype t = in.p.type;
  if (t == dtype::e4m3) {
    in.scales = {quantize_e4m3(in.q), quantize_e4m3(in.k), quantize_e4m3(in.v)};
    return;
  }
  in.scales = {};
  if (t == dtype::fp32) return;
  for (auto* v : {&in.q, &in.k, &in.v}) {
    float* x = v->data();
    const auto n = static_cast<std::int64_t>(v->size());
#pragma omp parallel for schedule(static) if (n > input_block_elems)
    for (std::int64_t i = 0; i < n; ++i) x[i] = round_to(t, x[i]);
  }
}

host_inputs make_inputs(const problem& p, std::uint64_t seed) {
  host_inputs in = make_original_inputs(p, seed);
  round_inputs(in);
  return in;
}

originals_store::shape_key originals_store::key_of(const problem& p) { return {p.B, p.H, p.Hkv, p.Nq, p.Nkv, p.d}; }

originals_store::originals_store(const std::vector<problem>& in_order, std::int64_t max_kept_bytes, std::uint64_t seed)
    : max_kept_bytes_(max_kept_bytes), seed_(seed) {
  for (std::size_t i = 0; i < in_order.size(); ++i) uses_[key_of(in_order[i])].push_back(i);
}

void originals_store::at(std::size_t index) {
  position_ = index;
  for (auto it = kept_.begin(); it != kept_.end();) {
    const std::vector<std::size_t>& u = uses_[it->first];
    if (u.empty() || u.back() < index) {
      kept_bytes_ -= 4 * static_cast<std::int64_t>(it->second.q.size() + it->second.k.size() + it->second.v.size());
      it = kept_.erase(it);
    } else {
      ++it;
    }
  }
}

host_inputs originals_store::originals(const problem& p) {
  const shape_key key = key_of(p);
  const std::vector<std::size_t>& u = uses_[key];
  const bool used_later = !u.empty() && u.back() > position_;
  if (auto it = kept_.find(key); it != kept_.end()) {
    host_inputs out;
    if (used_later) {
      out = it->second;
    } else {  // its last use: hand the kept copy over
      out = std::move(it->second);
      kept_bytes_ -= 4 * static_cast<std::int64_t>(out.q.size() + out.k.size() + out.v.size());
      kept_.erase(it);
    }
    out.p = p;
    return out;
  }
  host_inputs out = make_original_inputs(p, seed_);
  ++generated_;
  const std::int64_t bytes = 4 * static_cast<std::int64_t>(out.q.size() + out.k.size() + out.v.size());
  if (used_later && kept_bytes_ + bytes <= max_kept_bytes_) {
    kept_.emplace(key, out);
    kept_bytes_ += bytes;
  }
  return out;
}

float quantize_e4m3(std::span<float> x) {
  const float s = e4m3_scale_for(x);
  float* v = x.data();
  const auto n = static_cast<std::int64_t>(x.size());
#pragma omp parallel for schedule(static) if (n > input_block_elems)
  for (std::int64_t i = 0; i < n; ++i) v[i] = e4m3_round(v[i] / s) * s;
  return s;
}

std::vector<float> dequantize_e4m3(std::span<const std::uint8_t> codes, float scale, std::string_view what) {
  std::vector<float> out(codes.size());
  for (std::size_t i = 0; i < codes.size(); ++i) {
    if ((codes[i] & 0x7Fu) == 0x7Fu)
      throw input_error(
          fmt::format("{}: element {} is 0x{:02X}, the e4m3 NaN code (inputs must be finite)", what, i, codes[i]));
    out[i] = e4m3_to_float(codes[i]) * scale;
  }
  return out;
}

std::vector<std::int64_t> all_rows(const problem& p) {
  std::vector<std::int64_t> rows(p.rows());
  for (std::int64_t r = 0; r < p.rows(); ++r) rows[r] = r;
  return rows;
}

std::vector<std::int64_t> sample_rows(const problem& p, std::int64_t max_rows, std::uint64_t seed) {
  if (p.rows() <= max_rows) return all_rows(p);
  std::set<std::int64_t> picked;
  std::mt19937_64 gen(seed);
  const std::int64_t heads = p.B * p.H;
  const std::int64_t sampled_heads = std::min<std::int64_t>(heads, std::max<std::int64_t>(1, max_rows / 8));
  for (std::int64_t s = 0; s < sampled_heads; ++s) {
    const std::int64_t bh = sampled_heads == heads ? s : std::uniform_int_distribution<std::int64_t>(0, heads - 1)(gen);
    picked.insert(bh * p.Nq);
    picked.insert(bh * p.Nq + p.Nq - 1);
    for (std::int64_t i = 1; i < std::min(p.mask.global, p.Nq - 1) && i < 4; ++i) picked.insert(bh * p.Nq + i);
  }
  std::uniform_int_distribution<std::int64_t> any(0, p.rows() - 1);
  while (static_cast<std::int64_t>(picked.size()) < max_rows) picked.insert(any(gen));
  return {picked.begin(), picked.end()};
}

}  // namespace attnbench

// naive_gqa_expand (CPU): the GQA baseline that frameworks without native
// grouped-query support run. Idea: copy K and V from Hkv to H heads
// (repeat_interleave: query head h gets KV head h / (H / Hkv)), then run the
// naive algorithm with Hkv = H. Changed from naive: only the expansion pass,
// which reads and writes B * H * Nkv * d elements of K and of V and holds
// the expanded copies in memory. Expected bottleneck: memory, as naive, plus
// the expansion copy whose cost grows with the group size H / Hkv;
// flash2's native GQA reads the Hkv heads directly.
#include <vector>

#include "kernels/cpu/naive_loop.hpp"

namespace attnbench::cpu {

namespace {

class naive_gqa_expand_runner final : public cpu_runner {
 public:
  naive_gqa_expand_runner(const problem& p, bool writes_lse)
      : cpu_runner(p, writes_lse),
        pe_(expanded(p)),
        ke_(pe_.kv_elems()),
        ve_(pe_.kv_elems()),
        s_(p.B * p.H * p.Nq * p.Nkv),
        pm_(s_.size()) {}

  void run() override {
    reset_counters();
    expand();
    naive_forward(pe_, q_.data(), ke_.data(), ve_.data(), o_.data(), s_.data(), pm_.data(), bytes_, exps_);
  }

 private:
  static problem expanded(problem p) {
    p.Hkv = p.H;
    return p;
  }

  // One task per (key tile, batch, query head): copy the tile of its KV head.
  void expand() {
    const problem& p = p_;
    const std::int64_t d = p.d, tasks = num_kv_tiles(p) * p.B * p.H;
#pragma omp parallel if (worth_threads(p))
    {
      std::vector<float> tile(p.Bc * d);
#pragma omp for schedule(static)
      for (std::int64_t t = 0; t < tasks; ++t) {
        const std::int64_t kt = t / (p.B * p.H), b = (t / p.H) % p.B, h = t % p.H;
        const std::int64_t n = kv_tile_cols(p, kt) * d, c0 = kt * p.Bc;
        for (auto [src, dst] : {std::pair{k_.data(), ke_.data()}, std::pair{v_.data(), ve_.data()}}) {
          load(tile.data(), src + kv_offset(p, b, p.kv_head(h), c0), n, bytes_);
          store(dst + kv_offset(pe_, b, h, c0), tile.data(), n, bytes_);
        }
      }
    }
  }

  problem pe_;                  // the problem with Hkv = H
  std::vector<float> ke_, ve_;  // K, V expanded to [B, H, Nkv, d]
  std::vector<float> s_, pm_;   // S and P, [B, H, Nq, Nkv]
};

}  // namespace

std::unique_ptr<runner> make_naive_gqa_expand_runner(const problem& p, bool writes_lse) {
  return std::make_unique<naive_gqa_expand_runner>(p, writes_lse);
}

}  // namespace attnbench::cpu

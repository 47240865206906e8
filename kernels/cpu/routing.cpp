// routing (CPU): the Routing Transformer (Roy et al. 2021), its balanced form without the
// k-means updates. Idea: a query attends only to the keys that fall in the same cluster of
// a fixed set of c ~ sqrt(n) centroids, so attention costs c w_q w_k ~ n^1.5 pairs instead
// of n^2. Balanced routing (kernels/reference/approx_params.hpp): each cluster takes its top
// w_q = ceil(Nq / c) queries and top w_k = ceil(Nkv / c) keys by the dot product with its
// unit-norm centroid (fp64: an fp32 score would flip the top-w boundary against the fp64
// reference's, whose neighbours are ~1/n of the score range apart), ties to the lower
// position. Changed from flash2: two phases. Routing, per (batch, KV head) for the keys and
// per (batch, head) for the queries: scores against every centroid, each cluster's top w
// (nth_element), written as index lists. Attention, per (batch, head): per cluster the
// routed queries, keys and values gathered into tiles, dense softmax attention between them
// (causal on the original positions), each output row added into the head's accumulator
// (on chip: Nq d floats) with a count; then the scatter-mean: the sum over the clusters a
// row was routed to and saw a key in, divided by their number, zeros for a row in none
// (a token may be routed to several clusters or to none). run() times the two phases
// (runner::phase_times) so the entry splits its time without a second timing loop.
// Expected bottleneck: routing, 2 d c FLOPs per token in fp64 (a dgemm) plus a selection over
// all n tokens per cluster, against 4 d w_q w_k per cluster in fp32 products: at n = 512
// (c = 23, w = 23) the FLOPs are of the same size, and routing takes 82 % of the time (one
// thread); at the decoder step (Nq 1, Nkv 2048) 90 %.
#include <algorithm>
#include <cblas.h>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "kernels/cpu/cpu_common.hpp"
#include "kernels/reference/approx_params.hpp"

namespace attnbench::cpu {

namespace {

using clock_type = std::chrono::steady_clock;

class routing_runner final : public cpu_runner {
 public:
  routing_runner(const problem& p, bool writes_lse, planted_defect defect)
      : cpu_runner(p, writes_lse),
        wrong_cluster_(defect == planted_defect::routing_wrong_cluster),
        rs_(routing_shape_of(p)),
        centroids_(make_routing_centroids(rs_.clusters, p.d)),
        key_idx_(p.B * p.Hkv * rs_.clusters * rs_.wk),
        query_idx_(p.B * p.H * rs_.clusters * rs_.wq) {}

  void run() override {
    reset_counters();
    blas_single_thread blas;
    const auto t0 = clock_type::now();
    routing_pass();
    const auto t1 = clock_type::now();
    attention_pass();
    const auto t2 = clock_type::now();
    routing_s_ += std::chrono::duration<double>(t1 - t0).count();
    attention_s_ += std::chrono::duration<double>(t2 - t1).count();
  }

  std::vector<phase_time> phase_times() const override {
    return {{"routing", routing_s_}, {"attention", attention_s_}};
  }

 private:
  // Each cluster's top w of the n rows of x into idx[cl * w + t], positions ascending. The
  // scores S = X mu^T [n x c] in one fp64 GEMM (OpenBLAS dgemm; one thread, Nq 1, Nkv 2048, H 4,
  // c 45 on the loaded 2-core VM: the routing phase 36 ms with scalar loops, 13 ms with it).
  void route(const float* x, std::int64_t n, const float* mu, std::int64_t w, std::int32_t* idx, std::vector<double>& s,
             std::vector<double>& work, std::vector<std::int64_t>& order) {
    const std::int64_t d = p_.d, c = rs_.clusters;
    s.resize(static_cast<std::size_t>(n * c));
    work.resize(static_cast<std::size_t>(d * c + n * d));
    order.resize(static_cast<std::size_t>(n));
    double* mu_t = work.data();
    double* xd = mu_t + d * c;
    for (std::int64_t cl = 0; cl < c; ++cl)
      for (std::int64_t e = 0; e < d; ++e) mu_t[e * c + cl] = mu[cl * d + e];
    std::copy_n(x, n * d, xd);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(n), int(c), int(d), 1.0, xd, int(d), mu_t, int(c), 0.0,
                s.data(), int(c));
    for (std::int64_t cl = 0; cl < c; ++cl) {
      const double* sc = s.data() + cl;  // column cl, stride c
      std::iota(order.begin(), order.end(), 0);
      const auto before = [&](std::int64_t a, std::int64_t b) {
        return sc[a * c] > sc[b * c] || (sc[a * c] == sc[b * c] && a < b);
      };
      std::nth_element(order.begin(), order.begin() + (w - 1), order.end(), before);
      std::sort(order.begin(), order.begin() + w);
      for (std::int64_t t = 0; t < w; ++t) idx[cl * w + t] = static_cast<std::int32_t>(order[t]);
    }
    bytes_.add(4 * c * w);  // the index lists written
  }

  void routing_pass() {
    const problem& p = p_;
    const std::int64_t d = p.d, c = rs_.clusters, key_tasks = p.B * p.Hkv, tasks = key_tasks + p.B * p.H;
#pragma omp parallel if (worth_threads(p))
    {
      std::vector<float> mu(static_cast<std::size_t>(c * d));
      std::vector<double> s, mu_t;
      std::vector<std::int64_t> order;
#pragma omp for schedule(dynamic, 1)
      for (std::int64_t t = 0; t < tasks; ++t) {
        load(mu.data(), centroids_.data(), c * d, bytes_);
        if (t < key_tasks) {
          const float* k = read_tile(k_.data() + t * p.Nkv * d, p.Nkv * d, bytes_);
          route(k, p.Nkv, mu.data(), rs_.wk, key_idx_.data() + t * c * rs_.wk, s, mu_t, order);
        } else {
          const std::int64_t bh = t - key_tasks;
          const float* q = read_tile(q_.data() + bh * p.Nq * d, p.Nq * d, bytes_);
          route(q, p.Nq, mu.data(), rs_.wq, query_idx_.data() + bh * c * rs_.wq, s, mu_t, order);
        }
      }
    }
  }

  void attention_pass() {
    const problem& p = p_;
    const std::int64_t d = p.d, c = rs_.clusters, wq = rs_.wq, wk = rs_.wk, tasks = p.B * p.H;
    const float qk_scale = 1.0f / std::sqrt(static_cast<float>(d));
    constexpr float neg_inf = -std::numeric_limits<float>::infinity();
#pragma omp parallel if (worth_threads(p))
    {
      std::vector<float> buf(static_cast<std::size_t>(2 * wq * d + 2 * wk * d + wq * wk + p.Nq * d));
      float* qg = buf.data();
      float* kg = qg + wq * d;
      float* vg = kg + wk * d;
      float* sc = vg + wk * d;
      float* oc = sc + wq * wk;
      float* acc = oc + wq * d;
      std::vector<std::int32_t> count(static_cast<std::size_t>(p.Nq));
      std::vector<std::uint8_t> seen(static_cast<std::size_t>(wq));
#pragma omp for schedule(dynamic, 1)
      for (std::int64_t t = 0; t < tasks; ++t) {
        const std::int64_t b = t / p.H, h = t % p.H, hkv = p.kv_head(h);
        std::fill(acc, acc + p.Nq * d, 0.0f);
        std::fill(count.begin(), count.end(), 0);
        for (std::int64_t cl = 0; cl < c; ++cl) {
          const std::int64_t kcl = wrong_cluster_ ? (cl + 1) % c : cl;
          const std::int32_t* qi = query_idx_.data() + (t * c + cl) * wq;
          const std::int32_t* kj = key_idx_.data() + ((b * p.Hkv + hkv) * c + kcl) * wk;
          bytes_.add(4 * (wq + wk));  // the two index lists read
          for (std::int64_t r = 0; r < wq; ++r) load(qg + r * d, q_.data() + q_offset(p, b, h, qi[r]), d, bytes_);
          for (std::int64_t u = 0; u < wk; ++u) {
            load(kg + u * d, k_.data() + kv_offset(p, b, hkv, kj[u]), d, bytes_);
            load(vg + u * d, v_.data() + kv_offset(p, b, hkv, kj[u]), d, bytes_);
          }
          gemm_nt(wq, wk, d, qk_scale, qg, d, kg, d, 0.0f, sc, wk);  // S = Q_c K_c^T / sqrt(d)
          for (std::int64_t r = 0; r < wq; ++r) {
            float* row = sc + r * wk;
            if (p.mask.kind == mask_kind::causal)
              for (std::int64_t u = 0; u < wk; ++u)
                if (!is_visible(p, h, qi[r], kj[u])) row[u] = neg_inf;
            const float m = row_max(row, wk);
            seen[r] = m != neg_inf;
            // A row that sees no key of the cluster still runs its exps (all 0): counts stay shape-only.
            const float l = exp_sub_sum(row, wk, seen[r] ? m : 0.0f, exps_);
            if (seen[r]) scale(row, wk, 1.0f / l);
          }
          gemm_nn(wq, d, wk, 1.0f, sc, wk, vg, d, 0.0f, oc, d);  // O_c = P V_c
          for (std::int64_t r = 0; r < wq; ++r) {
            if (!seen[r]) continue;
            float* o = acc + qi[r] * d;
            for (std::int64_t e = 0; e < d; ++e) o[e] += oc[r * d + e];
            ++count[qi[r]];
          }
        }
        for (std::int64_t i = 0; i < p.Nq; ++i)  // scatter-mean; zeros for a row routed nowhere
          scale(acc + i * d, d, count[i] > 0 ? 1.0f / static_cast<float>(count[i]) : 0.0f);
        store(o_.data() + q_offset(p, b, h, 0), acc, p.Nq * d, bytes_);
      }
    }
  }

  bool wrong_cluster_;
  routing_shape rs_;
  std::vector<float> centroids_;
  std::vector<std::int32_t> key_idx_, query_idx_;  // [B, Hkv | H, c, w_k | w_q] workspace
  double routing_s_ = 0, attention_s_ = 0;
};

}  // namespace

std::unique_ptr<runner> make_routing_runner(const problem& p, bool writes_lse, planted_defect defect) {
  return std::make_unique<routing_runner>(p, writes_lse, defect);
}

}  // namespace attnbench::cpu

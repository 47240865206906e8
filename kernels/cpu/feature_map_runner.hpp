// The passes every feature-map linear attention runs on the CPU (`linear` with elu + 1,
// `performer` with FAVOR+ random features): O_i = phi(q_i)^T S / phi(q_i)^T z with
// S = sum_j phi(k_j) v_j^T (F x d) and z = sum_j phi(k_j) over the keys visible to i.
// Non-causal: a state pass per (batch, KV head) reads K and V once and writes S and z;
// an output pass per (query tile, batch, head) reads the state and its Q tile and writes
// O. Causal (bottom-right aligned, i' = i + Nkv - Nq; chunk = Bc): the state pass writes,
// for every key chunk c that holds some i', the exclusive prefix state of chunks
// 0 .. c-1 (the last chunk feeds none); the output pass, per (chunk, batch, head), adds
// the inter-chunk part phi(q)^T S_c to the masked intra-chunk block phi(Q) phi(K_c)^T
// (keys j <= i') times V_c. Rows with no visible key (i' < 0) are zeros. A row supplies
// the feature map (F features a row) and any per-(batch, KV head) set-up.
#pragma once

#include <vector>

#include "kernels/cpu/cpu_common.hpp"

namespace attnbench::cpu {

class feature_map_runner : public cpu_runner {
 public:
  void run() override;

 protected:
  // `scratch`: floats per thread the map keeps beside its features (map_scratch()).
  feature_map_runner(const problem& p, bool writes_lse, std::int64_t features, std::int64_t scratch);

  // Per (batch, KV head) of the state pass, before its chunks; u has room for Bc rows of
  // features (a pre-pass over the keys may use it).
  virtual void begin_state(std::int64_t b, std::int64_t hkv, float* scratch, float* u) = 0;
  // Per task of an output pass (its batch and KV head), before any map_queries / map_keys.
  virtual void begin_output(std::int64_t b, std::int64_t hkv, float* scratch) = 0;
  // phi of `rows` rows of d values at `global` (Q or K as laid out) into u (rows x F),
  // counting the bytes read and the exps.
  virtual void map_queries(const float* global, std::int64_t rows, float* u, float* scratch) = 0;
  virtual void map_keys(const float* global, std::int64_t rows, float* u, float* scratch) = 0;

  const bool causal_;
  const std::int64_t features_;

 private:
  std::int64_t state_elems() const { return features_ * p_.d + features_; }
  float* state(std::int64_t b, std::int64_t hkv, std::int64_t c);
  void state_pass();
  void output_pass();
  void causal_output_pass();

  std::int64_t scratch_;
  std::int64_t first_chunk_;      // causal: first key chunk holding some i'
  std::int64_t states_per_head_;  // causal: one prefix state per chunk from first_chunk_
  std::vector<float> state_;      // [B, Hkv, states_per_head, F*d + F] fp32
};

}  // namespace attnbench::cpu

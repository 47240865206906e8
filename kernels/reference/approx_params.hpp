// The fixed, seeded parameters of the approximate attention rows (docs/approximations.md):
// Linformer's projections E and F, Performer's random features, the Routing Transformer's
// centroids; and those of
// Bahdanau's additive score (W, U, v). The CPU kernels and
// the fp64 references take the same float values from here, so a reference evaluates the
// same approximation the kernel computes, and the distance to exact softmax attention
// is the approximation's alone. Drawn from splitmix64 (no standard-library
// distribution, whose output differs between libraries), once per runner, outside the
// timed region.
#pragma once

#include <cstdint>
#include <vector>

#include "core/problem.hpp"

namespace attnbench {

// Linformer's projected length: k = min(256, Nkv) (the paper's k = 256 for n up to 4096;
// projecting up past Nkv would only add work).
inline constexpr std::int64_t linformer_default_k = 256;
std::int64_t linformer_k(const problem& p);

// E and F, each [n x k] row-major (K-bar = E^T K, V-bar = F^T V), entries uniform in
// [-1/sqrt(k), 1/sqrt(k)) as lucidrains/linformer initialises them; separate seeds for
// E and F, shared by every batch element and head.
struct linformer_projections {
  std::int64_t n = 0, k = 0;
  std::vector<float> e, f;
};
linformer_projections make_linformer_projections(std::int64_t n, std::int64_t k);

// Performer's random features: m = 256 (the Performer paper's default for d = 64) rows
// omega_f of dimension d, block-orthogonal: blocks of d rows orthogonalised (Gram-Schmidt
// in fp64) from a seeded Gaussian matrix, each row scaled to the norm of an independent
// Gaussian d-vector (fast_attention.py's gaussian_orthogonal_random_matrix, scaling 0).
// Drawn once, never redrawn. [m x d] row-major.
inline constexpr std::int64_t performer_default_features = 256;
std::int64_t performer_features(const problem& p);
std::vector<float> make_performer_features(std::int64_t m, std::int64_t d);

// Bahdanau's additive score e_ij = v^T tanh(W q_i + U k_j): W and U [a x d], v [a], with the
// attention width a = d; entries uniform in [-1/sqrt(d), 1/sqrt(d)) (W, U: nn.Linear's
// initialisation) and [-1/sqrt(a), 1/sqrt(a)) (v), from fixed seeds.
struct additive_params {
  std::int64_t a = 0, d = 0;
  std::vector<float> w, u, v;
};
std::int64_t additive_width(const problem& p);
additive_params make_additive_params(std::int64_t a, std::int64_t d);

// The Routing Transformer's balanced routing (docs/approximations.md): c = max(1, round(sqrt(Nkv)))
// clusters, each taking its top w_q = ceil(Nq / c) queries and top w_k = ceil(Nkv / c) keys by the
// dot product with its centroid (computed in fp64, ties to the lower position), so a token may
// sit in several clusters or in none. Centroids: c unit-norm d-vectors (normalised seeded
// Gaussians) shared by every batch element and head, fixed (no k-means updates).
struct routing_shape {
  std::int64_t clusters = 0, wq = 0, wk = 0;
};
routing_shape routing_shape_of(const problem& p);
std::vector<float> make_routing_centroids(std::int64_t c, std::int64_t d);  // [c x d] row-major

}  // namespace attnbench

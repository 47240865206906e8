// The work behind the CPU exp ceiling (harness/exp_ceiling.cpp times it): the
// kernels' own exp (kernels/cpu/exp_approx.hpp: exp_approx16 on AVX-512, as tile_softmax
// runs it, else exp_approx vectorised by the compiler) in independent chains x <- -exp(x)
// on every OpenMP thread, each thread's chains in registers, so the measured rate is
// that of the exp itself (no loads or stores in the loop).
#pragma once

#include <cstdint>
#include <string>

namespace attnbench::cpu {

// Chains per thread: 8 vectors of 16 lanes (the AVX-512 path holds 8 independent
// exp_approx16 in flight, enough to cover its latency).
inline constexpr int exp_chain_lanes = 128;

struct exp_chains_result {
  std::int64_t exps = 0;  // exponentials executed (threads x lanes x steps)
  int threads = 0;
  std::int64_t first_wrong = -1;  // first (thread * lanes + lane) whose final value is off; -1: all right
  std::string path;               // which exp ran: "exp_approx16 (AVX-512)" or "exp_approx (compiler-vectorised)"
};

// Lane c starts at exp_chain_start(c) and runs `steps` steps on each of `threads` threads
// (0: all OpenMP threads); every final value is checked against the same chain computed
// with the scalar exp_approx (every chain converges to x = -exp(x), -0.5671, after ~60
// steps: a lane that skipped steps or never ran is seen).
exp_chains_result run_exp_chains(std::int64_t steps, int threads = 0);
float exp_chain_start(int lane);
// The check: the index of the first value in `finals` (threads x exp_chain_lanes, lane-major
// per thread) off its lane's chain after `steps` steps by more than 1e-5, or -1.
std::int64_t exp_chains_first_wrong(const float* finals, std::int64_t n, std::int64_t steps);

}  // namespace attnbench::cpu

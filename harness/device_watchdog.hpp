// Deadlines on device waits. A hung kernel must cost one deadline, not the
// rest of a GPU lease: every wait of the harness on the device polls (cudaEventQuery /
// cudaStreamQuery, harness/cuda/device_wait.hpp) against a deadline derived from the
// configuration being run,
//
//   deadline = max(floor, factor x the row's model bound at the datasheet peak x launches)
//
// (floor 10 s and factor 50 by default; `sweep --wait-timeout S` or
// $ATTNBENCH_WAIT_TIMEOUT_S sets the floor). When it passes, device_wait_expired() runs
// the handler the sweep installed (it logs the configuration as failed with reason
// `timeout`, writes the JSON so far and ends the process with exit status 3, without
// unwinding: a cudaFree behind a hung kernel would block forever) or, without one, prints
// the reason and ends the process with status 3.
//
// The polling loop is a header-only template so the GPU tests' utilities (also compiled
// against the host emulator) share it without linking the harness.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "core/variant.hpp"

namespace attnbench {

enum class poll_state { done, pending };

// The clock and the pause between polls, replaceable in tests (a fake clock).
struct wait_clock {
  std::function<double()> now_s;
  std::function<void(double)> sleep_s;
};

inline wait_clock steady_wait_clock() {
  return {[] { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); },
          [](double s) {
            if (s > 0)
              std::this_thread::sleep_for(std::chrono::duration<double>(s));
            else
              std::this_thread::yield();
          }};
}

// Polls before the first pause: a query costs ~1-2 us (cudaEventQuery), so ~2-4 ms of polling
// in which a short kernel's end is seen at once, as cudaEventSynchronize's spin would see it;
// the timed samples of a sweep (tens of us to ms each) then pay no pause.
inline constexpr int wait_spin_polls = 2000;

// Polls `query` until it reports done (true) or `limit_s` seconds have passed since the
// call (false; the query is asked once more at the deadline, so a wait that ends just
// then is not a timeout). After wait_spin_polls polls (yielding in between) it pauses
// 20 us, doubling up to 1 ms: a long wait costs ~1000 polls per second and ends at most
// ~1 ms after the work. The query throws on a device error; that propagates.
template <class Query>
bool poll_until_done(Query&& query, double limit_s, const wait_clock& clock = steady_wait_clock()) {
  const double start = clock.now_s();
  double pause = 20e-6;
  for (int polls = 1;; ++polls) {
    if (query() == poll_state::done) return true;
    const double now = clock.now_s();
    if (now - start >= limit_s) return query() == poll_state::done;
    if (polls < wait_spin_polls) {
      clock.sleep_s(0);  // a yield
      continue;
    }
    clock.sleep_s(std::min(pause, std::max(0.0, start + limit_s - now)));
    pause = std::min(2 * pause, 1e-3);
  }
}

inline constexpr double default_wait_floor_s = 10;  // no kernel of a sweep runs this long on an H200
inline constexpr double default_wait_factor = 50;

// The deadline of one configuration's device waits.
struct device_deadline {
  double floor_s = default_wait_floor_s;
  double factor = default_wait_factor;
  double bound_s = 0;  // the model's bound at the peaks (0: unknown, the floor alone)
  // Seconds a wait covering `launches` launches may take.
  double for_launches(std::int64_t launches) const {
    return std::max(floor_s, factor * bound_s * static_cast<double>(std::max<std::int64_t>(launches, 1)));
  }
  std::string describe(std::int64_t launches) const;  // "max(10 s, 50 x 0.12 ms x 2 launches) = 10 s"
};

// The wait floor: $ATTNBENCH_WAIT_TIMEOUT_S when set (a positive number; input_error naming
// it otherwise), else default_wait_floor_s.
double wait_floor_from_env();

// The model's bound at the peaks: max(flops_executed / peak FLOP/s of the dtype, bytes /
// peak bandwidth), from a context's ceilings.theoretical ({"tflops": {dtype: T}, "bandwidth_gbps": G}).
// A dtype without a peak takes the smallest listed (the longest bound); 0 when nothing is known.
double model_bound_s(const model_figures& m, dtype t, const nlohmann::json& theoretical);

// The deadline of the configuration being run (set by the sweep; read by every device wait).
void set_current_deadline(const device_deadline& d);
const device_deadline& current_deadline();

// What runs when a deadline passes: `what` names the wait, `waited_s` how long it waited,
// `limit` its deadline text. Must not return.
using wait_expired_handler = std::function<void(const std::string& message)>;
// Installs `h` (empty: the default, which prints the message and ends the process with status 3).
void set_wait_expired_handler(wait_expired_handler h);
// Builds the message "timeout: <what> did not complete within <limit>" and runs the handler.
[[noreturn]] void device_wait_expired(const std::string& what, double waited_s, const std::string& limit);

// The message of a timeout entry starts with this (the row is then quarantined: row_quarantine.hpp).
inline constexpr const char* timeout_prefix = "timeout: ";

}  // namespace attnbench

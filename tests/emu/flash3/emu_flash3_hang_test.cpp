// A hang costs one deadline, not the GPU lease: a flash3 kernel that waits on an mbarrier phase that never completes,
// run by the host emulator as a GPU would run it (emu settings::deadlock_hangs: the deadlocked launch reports nothing
// and the device stays busy), seen by the harness's CUDA wait (harness/cuda/device_wait.hpp: cudaStreamQuery polled
// against a deadline) and by the deadline-expiry path the sweep uses (device_wait_expired).
//
//   attnbench_emu_flash3_hang control   no fault: the wait reports the launch done
//   attnbench_emu_flash3_hang hang      the fault: the wait gives up at its deadline (0.3 s)
//   attnbench_emu_flash3_hang expire    the fault through wait_stream: the expiry handler runs
//                                       with "timeout: ... did not complete within 300 ms"
//   attnbench_emu_flash3_hang blocking  the fault, then cudaStreamSynchronize: the wait
//                                       attnbench no longer makes, which on a GPU never
//                                       returns (the emulator ends the process: "EMU HANG")
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/mask.hpp"
#include "harness/cuda/device_wait.hpp"
#include "harness/tensors.hpp"
#include "kernels/cuda/flash3/flash3_plan.hpp"
#include "tests/emu/emu_control.hpp"
#include "tests/emu/emu_rows_check.hpp"

namespace attnbench {
namespace {

// The fault: consumers wait for the K stage's full barrier one phase late, so the
// first wait is for a phase no producer will ever complete.
constexpr cuda::flash3_fault kHangFault = cuda::flash3_fault::wrong_phase;

struct launch_buffers {
  std::vector<std::uint8_t> q, k, v;
  std::vector<std::uint16_t> o;
  std::vector<float> lse;
};

// flash3 bf16 d 64 on a ragged shape whose keys wrap the ring (as emu.flash3_main's
// ring_wrap_none), launched as the runner launches it.
void launch_flash3(cuda::flash3_fault fault, launch_buffers& b) {
  problem p;
  p.B = 1, p.H = 1, p.Hkv = 1, p.Nq = 64, p.Nkv = 530, p.d = 64, p.type = dtype::bf16;
  p.mask = parse_mask("none");
  p = cuda::flash3_resolve(p);
  validate(p);
  const host_inputs in = make_inputs(p, 1234);
  auto bytes_of = [&](const std::vector<float>& x) {
    const std::vector<std::uint16_t> u = emu_rows::to_bits(p.type, x);
    std::vector<std::uint8_t> out(u.size() * 2);
    std::memcpy(out.data(), u.data(), out.size());
    return out;
  };
  b.q = bytes_of(in.q), b.k = bytes_of(in.k), b.v = bytes_of(in.v);
  b.o.assign(static_cast<std::size_t>(p.rows() * p.d), 0xFFFF);
  b.lse.assign(static_cast<std::size_t>(p.rows()), 0.f);
  const cuda::flash3_config* cfg = cuda::find_flash3_config(static_cast<int>(p.d), p.type);
  if (!cfg) throw std::runtime_error("no flash3 instantiation for d 64 bf16");
  cuda::flash3_params prm = cuda::make_flash3_params(p, in.scales);
  prm.o = b.o.data();
  prm.lse = b.lse.data();
  prm.fault = fault;
  emu::set_readable({{b.q.data(), b.q.size()}, {b.k.data(), b.k.size()}, {b.v.data(), b.v.size()}});
  cuda::encode_flash3_maps(prm, b.q.data(), b.k.data(), b.v.data());
  cfg->launch(prm, nullptr);
}

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

int run(const std::string& mode) {
  emu::config().deadlock_hangs = true;
  emu::reset_errors();
  launch_buffers b;
  launch_flash3(mode == "control" ? cuda::flash3_fault::none : kHangFault, b);
  if (mode == "control" || mode == "hang") {
    const double t0 = now_s();
    const bool done = cuda::wait_stream_for(nullptr, 0.3);
    const double waited = now_s() - t0;
    if (mode == "control") {
      std::printf("%s control: the launch without the fault completed (wait %.3f s, hung %d)\n",
                  done && !emu::device_hung() ? "OK" : "FAIL", waited, emu::device_hung());
      return done && !emu::device_hung() ? 0 : 1;
    }
    const bool ok = !done && emu::device_hung() && waited >= 0.3 && waited < 1.0;
    std::printf("%s hang: the wait %s after %.3f s (deadline 0.3 s)\n", ok ? "OK" : "FAIL",
                done ? "reported the hung launch done" : "gave up", waited);
    return ok ? 0 : 1;
  }
  if (mode == "expire") {
    set_current_deadline({0.3, 50, 0});
    set_wait_expired_handler([](const std::string& message) {
      std::printf("EXPIRED: %s\n", message.c_str());
      std::fflush(stdout);
      std::_Exit(0);
    });
    cuda::wait_stream(nullptr, "the flash3 launch", 1);
    std::printf("FAIL expire: wait_stream returned on a hung device\n");
    return 1;
  }
  if (mode == "blocking") {
    cudaStreamSynchronize(nullptr);
    std::printf("FAIL blocking: cudaStreamSynchronize returned on a hung device\n");
    return 1;
  }
  std::fprintf(stderr, "unknown mode '%s' (control, hang, expire, blocking)\n", mode.c_str());
  return 2;
}

}  // namespace
}  // namespace attnbench

int main(int argc, char** argv) {
  try {
    return attnbench::run(argc > 1 ? argv[1] : "hang");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}

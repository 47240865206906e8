#include "harness/admission.hpp"

#include <fmt/format.h>

#include "harness/host_info.hpp"

namespace attnbench {

namespace {

std::string gib(double bytes) { return fmt::format("{:.2f} GiB", bytes / double(1 << 30)); }

}  // namespace

memory_need memory_need_of(const configuration& c) {
  const problem& p = c.p;
  memory_need n;
  // Host fp32 copies: inputs (twice when rounded to bf16/fp16/e4m3: validation keeps the
  // unrounded originals for the end-to-end reference), O and lse of the run and the reference.
  const double inputs = double(p.q_elems() + 2 * p.kv_elems()) * (p.type == dtype::fp32 ? 1 : 2);
  n.host_bytes = 4.0 * (inputs + double(2 * p.o_elems() + p.rows()));
  n.run_bytes = c.row->memory_bytes ? double(c.row->memory_bytes(p)) : 0.0;
  return n;
}

support admit(backend& be, const configuration& c) {
  const memory_need n = memory_need_of(c);
  if (be.kind() == backend_kind::cpu) {
    const double need = n.run_bytes + n.host_bytes, have = double(be.free_memory_bytes());
    if (need > have) return support::no(fmt::format("needs {}, {} free", gib(need), gib(have)));
    return support::yes();
  }
  const double have = double(be.free_memory_bytes()), host = double(host_available_bytes());
  if (n.run_bytes > have)
    return support::no(fmt::format("needs {} of device memory, {} free", gib(n.run_bytes), gib(have)));
  if (n.host_bytes > host)
    return support::no(fmt::format("needs {} of host memory, {} free", gib(n.host_bytes), gib(host)));
  return support::yes();
}

}  // namespace attnbench

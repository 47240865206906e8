// A stand-in for libattnbench_cuda.so (tests/cli.cmake, cli_module_abi_*): built with
// ATTNBENCH_PROBE_STALE it answers the loader with another layout stamp, as a module left from
// older sources does; without it, with the executable's own stamp (the control: the loader then
// reports that no backend was registered). It registers nothing either way.
#include <cstdint>

#include "core/module_abi.hpp"

extern "C" std::uint64_t attnbench_cuda_module_abi() {
#ifdef ATTNBENCH_PROBE_STALE
  return attnbench::module_abi_stamp() ^ 1u;
#else
  return attnbench::module_abi_stamp();
#endif
}

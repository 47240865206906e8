// What the flash2 emulator test (emu_test.cpp) can set and read back; plain
// C++, no CUDA stand-ins, so the test itself compiles against the real
// harness headers.
#pragma once

#include <cstddef>
#include <functional>
#include <initializer_list>
#include <string>

namespace attnbench::emu {

// Deliberate defects injected at one instruction, each equivalent to a
// plausible kernel bug, so the test can prove it notices them.
enum class fault {
  none,
  ldmatrix_swap_mid,  // non-.trans ldmatrix returns matrices 1 and 2 swapped (wrong K/Q fragment order)
  drop_trans,         // ldmatrix .trans loads untransposed (V fragments wrong)
  wait_one_less,      // cp.async.wait_group N retires one group fewer (reads a tile still in flight)
  no_zero_fill,       // cp.async with src_bytes 0 leaves shared memory untouched (ragged rows see poison)
};
const char* to_string(fault f);

struct settings {
  bool early_copy = false;  // cp.async copies at issue (default: at wait_group, the latest legal time)
  fault inject = fault::none;
  // A deadlocked launch hangs the device, as on a GPU, instead of failing with
  // cudaErrorLaunchFailure: the launch reports nothing, cudaStreamQuery / cudaEventQuery
  // answer cudaErrorNotReady from then on, and cudaStreamSynchronize / cudaEventSynchronize /
  // cudaDeviceSynchronize, which would block forever, end the process with status 124
  // ("EMU HANG"). reset_errors() clears the hang.
  bool deadlock_hangs = false;
};
settings& config();
bool device_hung();  // a deadlock hung the device (deadlock_hangs)

// Emulator errors of the last launch (bad addresses, outstanding groups, ...).
long errors();
void reset_errors();

// Runs fn once per CUDA thread of every CTA of the grid, CTA after CTA, one
// OS thread per CUDA thread; dynamic shared memory (smem_bytes) is filled
// with NaN bytes before each CTA. `reads` are the byte ranges cp.async may
// read (the Q, K, V tensors).
struct byte_range {
  const void* lo;
  std::size_t bytes;
};
void set_readable(std::initializer_list<byte_range> reads);

}  // namespace attnbench::emu

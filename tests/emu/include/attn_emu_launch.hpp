// The seam header kernels/cuda/flash2/flash2_kernel.cuh includes under ATTN_EMULATE.
#pragma once
#include "tests/emu/emu_launch.hpp"

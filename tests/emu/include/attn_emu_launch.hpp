// The seam header kernels/cuda/flash2/flash2_kernel.cuh includes under ATTN_FLASH2_EMULATE.
#pragma once
#include "tests/emu/emu_launch.hpp"

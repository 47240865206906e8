// The seam header kernels/cuda/flash2/flash2_ptx.cuh includes under ATTN_FLASH2_EMULATE.
#pragma once
#include "tests/emu/emu_ptx.hpp"

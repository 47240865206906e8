// The seam core/cuda/launch.cuh includes under ATTN_EMULATE.
#pragma once
#include "tests/emu/emu_kernel_launch.hpp"

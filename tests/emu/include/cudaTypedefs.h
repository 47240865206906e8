// Host stand-in for <cudaTypedefs.h> (tests/emu): the PFN types live in the
// stand-in <cuda.h>.
#pragma once

#include <cuda.h>

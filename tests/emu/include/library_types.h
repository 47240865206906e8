// Host stand-in for <library_types.h> (tests/emu): the data types cuBLAS takes.
#pragma once

typedef enum cudaDataType_t {
  CUDA_R_16F = 2,
  CUDA_R_32F = 0,
  CUDA_R_64F = 1,
  CUDA_R_16BF = 14,
} cudaDataType;

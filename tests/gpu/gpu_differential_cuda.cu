// The differential properties (gpu_differential_test.cpp) compiled by nvcc
// against the CUDA build of the GPU implementation.
#include "gpu_differential_test.cpp"

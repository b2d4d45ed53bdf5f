// The benchmarks (pack_bench.cpp) compiled by nvcc against the CUDA build;
// the memcpy baseline is a device-to-device copy there.
#include "pack_bench.cpp"

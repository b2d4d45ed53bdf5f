// The GPU implementation built for Thrust's OMP (OpenMP host) backend.
#include "pack.cu"

// The GPU implementation built for Thrust's OMP (OpenMP host) backend.
#define SEQPACK_GPU_OMP 1  // pack.cu: no streaming stores across threads
#include "pack.cu"

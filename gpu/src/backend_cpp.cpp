// The GPU implementation built for Thrust's CPP (sequential host) backend.
#include "pack.cu"

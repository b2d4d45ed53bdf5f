// The GPU implementation as a protocol Implementation
// (gpu_implementation.cpp), one per Thrust host backend: gpu_port serves its
// backend's, and the seqpack command line links both to run
// `seqpack exhaustive` in process. The header names no gpu type, so that a
// program can hold both backends' builds (each compiled with its own
// SEQPACK_GPU_BACKEND).
#pragma once

#include "seqpack/protocol/protocol.hpp"

namespace seqpack::ports {

/// "seqpack gpu (thrust cpp)": every view of the oracle.
const protocol::Implementation& gpu_cpp_implementation();
/// "seqpack gpu (thrust omp)".
const protocol::Implementation& gpu_omp_implementation();

}  // namespace seqpack::ports

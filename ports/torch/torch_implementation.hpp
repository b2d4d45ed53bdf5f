// The LibTorch binding as a protocol Implementation
// (torch_implementation.cpp): torch_port serves it, and the command line's
// LibTorch helper (`seqpack exhaustive`) runs it in process. The header names
// no LibTorch type, so that only the implementation's unit includes them.
#pragma once

#include "seqpack/protocol/protocol.hpp"

namespace seqpack::ports {

/// "seqpack LibTorch binding (CPU tensors)": every view of the oracle.
const protocol::Implementation& torch_implementation();

}  // namespace seqpack::ports

// Test support of the GPU implementation.
#pragma once

#include "seqpack/gpu/types.hpp"

namespace seqpack::gpu {
inline namespace SEQPACK_GPU_BACKEND {

/// Fills every output buffer allocated afterwards with `byte` (0-255) before
/// it is written, so that a row the implementation forgets to write differs
/// from the reference; -1 (the default) turns it off.
void set_poison(int byte);

/// Builds metadata arrays with the scan (true; the CUDA build's default) or
/// split by split (false; the host backends' default), so that the
/// differential tests check both expansions on every backend.
void set_scan_expansion(bool scan);

}  // namespace SEQPACK_GPU_BACKEND
}  // namespace seqpack::gpu

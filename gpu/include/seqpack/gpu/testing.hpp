// Test support of the GPU implementation.
#pragma once

#include "seqpack/gpu/types.hpp"

namespace seqpack::gpu {
inline namespace SEQPACK_GPU_BACKEND {

/// Fills every output buffer allocated afterwards with `byte` (0-255) before
/// it is written, so that a row the implementation forgets to write differs
/// from the reference; -1 (the default) turns it off.
void set_poison(int byte);

}  // namespace SEQPACK_GPU_BACKEND
}  // namespace seqpack::gpu

// Test support of the GPU implementation.
#pragma once

#include <cstddef>
#include <string>

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

/// Moves rows with the device's chunked row copy (true; the CUDA build's,
/// the only one there) or one memcpy per row (false; the host backends'
/// default), so that the differential tests check the device's copy on the
/// host backends too.
void set_chunked_row_copy(bool chunked);

/// Turns the synchronising check at the end of every entry point on or off
/// (CUDA: the entry point waits for its stream and reports a fault of its
/// work as DeviceError). Default: on in debug builds or when the environment
/// sets SEQPACK_GPU_SYNC_CHECK to anything but 0.
void set_sync_check(bool on);

/// Makes the device check at the end of entry point `entry` ("build_pack",
/// "to_host", ...) throw DeviceError, on every backend, so that tests can
/// check what a device error does; "" turns it off.
void inject_device_error(std::string entry);

/// OMP build: entry points that touch fewer than `bytes` bytes run their
/// Thrust calls on the calling thread (0: always on the OpenMP team; SIZE_MAX:
/// always serial). No effect on the CPP and CUDA builds. The differential
/// tests pick it at random so that both paths are checked.
void set_serial_threshold(std::size_t bytes);

/// The threshold in force (the build's default until set_serial_threshold).
std::size_t serial_threshold();

}  // namespace SEQPACK_GPU_BACKEND
}  // namespace seqpack::gpu

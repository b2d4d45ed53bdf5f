// Padded stream lengths (the original's _get_padded_size).
#pragma once

#include <cstdint>

namespace seqpack::reference {

/// The least multiple of lcm(alignment, bucket(n) if pad_for_cuda_graphs,
/// cp_world_size) that is >= n. Throws invalid_option if cp_world_size or
/// alignment is below 1 (stricter than the original, which treats them as 1),
/// invalid_argument if n < 0, and overflow if the result exceeds int32.
std::int64_t padded_size(std::int64_t n, std::int64_t cp_world_size = 1, bool pad_for_cuda_graphs = false,
                         std::int64_t alignment = 1);

namespace detail {
/// padded_size with the names its errors give the row count and the alignment.
std::int64_t padded_size(std::int64_t n, std::int64_t cp_world_size, bool pad_for_cuda_graphs, std::int64_t alignment,
                         const char* n_field, const char* alignment_field);
}  // namespace detail

}  // namespace seqpack::reference

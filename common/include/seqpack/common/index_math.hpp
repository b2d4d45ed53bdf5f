// Index arithmetic shared by the reference and the GPU implementation.
//
// Small, pure functions on row counts that compile for host and device. They
// hold no algorithm under test: each is a one-line rule of the spec that every
// implementation must agree on character for character.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define SEQPACK_HOST_DEVICE __host__ __device__
#else
#define SEQPACK_HOST_DEVICE
#endif

namespace seqpack::common {

/// Largest value an int32 offset, length or padded size may take.
inline constexpr std::int64_t kInt32Max = 2147483647;

/// The CUDA-graph bucket for a stream of `n` rows (n >= 0): 128 up to 2048
/// rows, then 256, 512, 1024 up to 4096, 8192, 16384, and 2048 beyond.
SEQPACK_HOST_DEVICE constexpr std::int64_t cuda_graph_bucket(std::int64_t n) {
  return n <= 2048 ? 128 : n <= 4096 ? 256 : n <= 8192 ? 512 : n <= 16384 ? 1024 : 2048;
}

/// Greatest common divisor of two positive values.
SEQPACK_HOST_DEVICE constexpr std::int64_t gcd(std::int64_t a, std::int64_t b) {
  while (b != 0) {
    const std::int64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/// Real rows of a stream with `num_real` real rows (padding last) that fall in
/// rank `rank`'s contiguous shard of `shard_len` rows. All arguments >= 0.
SEQPACK_HOST_DEVICE constexpr std::int64_t num_local_real_tokens(std::int64_t num_real, std::int64_t rank,
                                                                 std::int64_t shard_len) {
  const std::int64_t left = num_real - rank * shard_len;
  return left <= 0 ? 0 : (left < shard_len ? left : shard_len);
}

}  // namespace seqpack::common

// Padded stream lengths.
#include "seqpack/reference/padding.hpp"

#include <string>

#include "seqpack/common/index_math.hpp"
#include "seqpack/reference/errors.hpp"

namespace seqpack::reference {
namespace {

using common::kInt32Max;

// lcm of two values in [1, kInt32Max]; 0 stands for "past int32".
std::int64_t lcm_or_zero(std::int64_t a, std::int64_t b) {
  if (a == 0 || b == 0) return 0;
  const std::int64_t step = a / common::gcd(a, b);
  if (step > kInt32Max / b) return 0;
  return step * b;
}

}  // namespace

std::int64_t padded_size(std::int64_t n, std::int64_t cp_world_size, bool pad_for_cuda_graphs, std::int64_t alignment) {
  return detail::padded_size(n, cp_world_size, pad_for_cuda_graphs, alignment, "n", "alignment");
}

std::int64_t detail::padded_size(std::int64_t n, std::int64_t cp_world_size, bool pad_for_cuda_graphs,
                                 std::int64_t alignment, const char* n_field, const char* alignment_field) {
  // Stricter than _get_padded_size, which reads values below 1 as "no constraint".
  if (cp_world_size < 1) {
    throw Error(Errc::invalid_option, "cp_world_size", "must be >= 1, got " + std::to_string(cp_world_size));
  }
  if (alignment < 1) {
    throw Error(Errc::invalid_option, alignment_field, "must be >= 1, got " + std::to_string(alignment));
  }
  if (n < 0) throw Error(Errc::invalid_argument, n_field, "row count must be >= 0, got " + std::to_string(n));
  if (n > kInt32Max) {
    throw Error(Errc::overflow, n_field, "row count " + std::to_string(n) + " does not fit int32");
  }

  std::int64_t step = alignment > kInt32Max ? 0 : alignment;
  if (pad_for_cuda_graphs) step = lcm_or_zero(step, common::cuda_graph_bucket(n));
  if (cp_world_size > 1) step = lcm_or_zero(step, cp_world_size > kInt32Max ? 0 : cp_world_size);
  if (n == 0) return 0;  // zero is a multiple of anything, however large
  if (step == 0) {
    // Named after the value that is past int32 on its own, if one is.
    const bool cp_alone = cp_world_size > kInt32Max && alignment <= kInt32Max;
    const bool options = std::string(alignment_field).rfind("options.", 0) == 0;
    throw Error(Errc::overflow, cp_alone ? (options ? "options.cp_world_size" : "cp_world_size") : alignment_field,
                "the combined alignment of alignment=" + std::to_string(alignment) +
                    ", cp_world_size=" + std::to_string(cp_world_size) + " and the CUDA-graph bucket exceeds int32");
  }
  const std::int64_t padded = (n + step - 1) / step * step;
  if (padded > kInt32Max) {
    throw Error(Errc::overflow, n_field,
                std::to_string(n) + " rows pad to " + std::to_string(padded) + ", which does not fit int32");
  }
  return padded;
}

}  // namespace seqpack::reference

// Padded stream lengths (the spec's _get_padded_size), with the int32 limits
// of reference/README.md. Mirrors reference/src/padding.cpp; written for the
// gpu, which checks its own lengths.
#include "detail.cuh"

namespace seqpack::gpu {
inline namespace SEQPACK_GPU_BACKEND {
namespace detail {
namespace {

// lcm(a, b) of two steps in [1, int32 max], or nothing when it passes int32.
// Both fit 31 bits, so a / gcd * b fits int64 before the comparison.
std::optional<std::int64_t> combine(std::int64_t a, std::int64_t b) {
  const std::int64_t l = a / common::gcd(a, b) * b;
  if (l > kInt32Max) return std::nullopt;
  return l;
}

}  // namespace

std::int64_t padded_size(std::int64_t n, std::int64_t cp, bool graphs, std::int64_t alignment, const char* n_field,
                         const char* alignment_field) {
  if (n > kInt32Max) fail(ref::Errc::overflow, n_field, std::to_string(n) + " rows is past int32");
  // No rows stay no rows whatever the step, even one past int32 (reference/README.md, item 6).
  if (n == 0) return 0;
  // The step: the alignment, then the CUDA-graph bucket of n, then the cp size
  // when above 1 (the spec folds them in this order with math.lcm).
  std::optional<std::int64_t> step;
  if (alignment <= kInt32Max) step = alignment;
  if (step && graphs) step = combine(*step, common::cuda_graph_bucket(n));
  if (step && cp > 1) step = cp <= kInt32Max ? combine(*step, cp) : std::nullopt;
  if (!step) {
    fail(ref::Errc::overflow, alignment_field,
         "alignment " + std::to_string(alignment) + " with cp_world_size " + std::to_string(cp) +
             (graphs ? " and the CUDA-graph bucket" : "") + " needs a step past int32");
  }
  const std::int64_t rounded = (n + *step - 1) / *step * *step;
  if (rounded > kInt32Max) {
    fail(ref::Errc::overflow, n_field,
         std::to_string(n) + " rows round up to " + std::to_string(rounded) + " (step " + std::to_string(*step) +
             "), past int32");
  }
  return rounded;
}

}  // namespace detail
}  // namespace SEQPACK_GPU_BACKEND
}  // namespace seqpack::gpu

// A central finite-difference check of a hand-written gradient, generic over
// the function: the tests run it on the varlen and flex backwards (and on a
// deliberately wrong one, to show that it fails). Neighbours: varlen.hpp, flex.hpp.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "seqpack/attention/tensor.hpp"

namespace seqpack::attention {

/// A scalar loss of some input tensors.
using LossFn = std::function<double(const std::vector<Tensor>& inputs)>;
/// The claimed gradient of that loss: one tensor per input, same shapes.
using GradientFn = std::function<std::vector<Tensor>(const std::vector<Tensor>& inputs)>;

/// The outcome of check_gradient: the worst element and how many were compared.
struct GradientCheckResult {
  bool ok = true;
  double max_error = 0;      ///< max |analytic - numeric| / max(1, |analytic|, |numeric|)
  std::int64_t checked = 0;  ///< elements compared
  std::string worst;         ///< "input i, element j: analytic a, numeric n" for the worst element
};

/// Compares `gradient(inputs)` with central differences (L(x+h) - L(x-h)) / 2h
/// element by element; ok when every relative error is <= `tolerance`.
/// Throws std::invalid_argument when the gradient's shapes differ from the inputs'.
GradientCheckResult check_gradient(const LossFn& loss, const GradientFn& gradient, std::vector<Tensor> inputs,
                                   double step = 1e-6, double tolerance = 1e-6);

}  // namespace seqpack::attention

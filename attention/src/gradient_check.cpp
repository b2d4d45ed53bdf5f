// Central finite differences against a claimed gradient (gradient_check.hpp).
#include "seqpack/attention/gradient_check.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace seqpack::attention {

GradientCheckResult check_gradient(const LossFn& loss, const GradientFn& gradient, std::vector<Tensor> inputs,
                                   double step, double tolerance) {
  const std::vector<Tensor> analytic = gradient(inputs);
  if (analytic.size() != inputs.size())
    throw std::invalid_argument("gradient returned " + std::to_string(analytic.size()) + " tensors for " +
                                std::to_string(inputs.size()) + " inputs");
  GradientCheckResult result;
  for (std::size_t t = 0; t < inputs.size(); ++t) {
    if (analytic[t].values.size() != inputs[t].values.size())
      throw std::invalid_argument("gradient of input " + std::to_string(t) + " has the wrong size");
    for (std::size_t e = 0; e < inputs[t].values.size(); ++e) {
      const double x = inputs[t].values[e];
      inputs[t].values[e] = x + step;
      const double up = loss(inputs);
      inputs[t].values[e] = x - step;
      const double down = loss(inputs);
      inputs[t].values[e] = x;
      const double numeric = (up - down) / (2 * step);
      const double a = analytic[t].values[e];
      const double error = std::abs(a - numeric) / std::max({1.0, std::abs(a), std::abs(numeric)});
      ++result.checked;
      if (!(error <= result.max_error)) {  // NaN errors count as worst
        result.max_error = std::isnan(error) ? std::numeric_limits<double>::infinity() : error;
        std::ostringstream s;
        s << "input " << t << ", element " << e << ": analytic " << a << ", numeric " << numeric;
        result.worst = s.str();
      }
    }
  }
  result.ok = result.max_error <= tolerance;
  return result;
}

}  // namespace seqpack::attention

// Value types shared by the attention models: a [rows, heads, dim] double
// tensor, cumulative sequence lengths of either index width, the NaN patterns
// the oracle poisons with, and a splitmix64 filler that gives the same values
// on every platform. The emulators are in varlen.hpp and flex.hpp.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

namespace seqpack::attention {

/// The most elements one Tensor may hold (2^31): the limit is checked before
/// anything is allocated, so a size read from untrusted input cannot exhaust memory.
inline constexpr std::int64_t kMaxTensorElements = std::int64_t{1} << 31;

/// A dense row-major tensor of shape [rows, heads, dim] in double precision.
struct Tensor {
  std::int64_t rows = 0;
  std::int64_t heads = 0;
  std::int64_t dim = 0;
  std::vector<double> values;  ///< rows * heads * dim values, row-major

  Tensor() = default;
  /// A tensor filled with `fill`; throws std::invalid_argument on a negative
  /// extent or more than kMaxTensorElements elements (checked before allocating).
  Tensor(std::int64_t rows, std::int64_t heads, std::int64_t dim, double fill = 0.0);

  /// Values per row (heads * dim).
  std::int64_t row_size() const noexcept { return heads * dim; }
  /// First value of row `r` (0 <= r < rows).
  double* row(std::int64_t r) noexcept { return values.data() + r * row_size(); }
  const double* row(std::int64_t r) const noexcept { return values.data() + r * row_size(); }
  /// First value of row `r`, head `h`.
  double* at(std::int64_t r, std::int64_t h) noexcept { return row(r) + h * dim; }
  const double* at(std::int64_t r, std::int64_t h) const noexcept { return row(r) + h * dim; }
};

/// Cumulative sequence lengths (`cu_seqlens_*`), given as int32 (what
/// FlashAttention takes) or int64; kept as int64.
class CuSeqlens {
 public:
  CuSeqlens() = default;
  CuSeqlens(const std::vector<std::int32_t>& values);  // NOLINT(google-explicit-constructor): as the kernel's argument
  CuSeqlens(std::vector<std::int64_t> values);         // NOLINT(google-explicit-constructor)
  CuSeqlens(std::initializer_list<std::int64_t> values);
  const std::vector<std::int64_t>& values() const noexcept { return values_; }
  /// Number of segments (entries - 1; 0 for an empty vector).
  std::int64_t segments() const noexcept { return values_.empty() ? 0 : static_cast<std::int64_t>(values_.size()) - 1; }

 private:
  std::vector<std::int64_t> values_;
};

/// The quiet NaN the oracle fills every output and gradient buffer with
/// before a call (payload 0xdead): a row that still holds it was not written.
double poison_nan() noexcept;
/// The quiet NaN the emulators write where the kernel's result is
/// unspecified (payload 0xbad), e.g. dk/dv computed from uninitialised
/// accumulators; told apart from poison_nan() by its bytes only.
double unspecified_nan() noexcept;
/// Whether `a` and `b` have the same 8 bytes (NaN payloads and -0.0 count).
bool same_bits(double a, double b) noexcept;

/// splitmix64: the next value of the sequence seeded by `state`, which it advances.
std::uint64_t splitmix64(std::uint64_t& state) noexcept;
/// A value in [-1, 1) that depends only on the arguments (a hash through
/// splitmix64), the same on every platform.
double hashed_value(std::uint64_t seed, std::uint64_t a, std::uint64_t b, std::uint64_t c) noexcept;
/// Fills `t` with hashed_value(seed, row, index within row, 0).
void fill_hashed(Tensor& t, std::uint64_t seed);

}  // namespace seqpack::attention

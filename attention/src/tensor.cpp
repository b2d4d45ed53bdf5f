// Tensor, CuSeqlens, the NaN patterns and the deterministic filler
// (tensor.hpp). The emulators that use them are varlen.cpp and flex.cpp.
#include "seqpack/attention/tensor.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

namespace seqpack::attention {

Tensor::Tensor(std::int64_t rows_, std::int64_t heads_, std::int64_t dim_, double fill)
    : rows(rows_), heads(heads_), dim(dim_) {
  if (rows < 0 || heads < 0 || dim < 0)
    throw std::invalid_argument("tensor shape [" + std::to_string(rows) + ", " + std::to_string(heads) + ", " +
                                std::to_string(dim) + "] has a negative extent");
  // Multiply step by step so that no product can overflow before the check.
  if (heads != 0 && dim > kMaxTensorElements / heads)
    throw std::invalid_argument("tensor shape: heads * dim past the element limit");
  const std::int64_t per_row = heads * dim;
  if (per_row != 0 && rows > kMaxTensorElements / per_row)
    throw std::invalid_argument("tensor shape: rows = " + std::to_string(rows) + " past the element limit of " +
                                std::to_string(kMaxTensorElements));
  values.assign(static_cast<std::size_t>(rows * per_row), fill);
}

CuSeqlens::CuSeqlens(const std::vector<std::int32_t>& values) : values_(values.begin(), values.end()) {}
CuSeqlens::CuSeqlens(std::vector<std::int64_t> values) : values_(std::move(values)) {}
CuSeqlens::CuSeqlens(std::initializer_list<std::int64_t> values) : values_(values) {}

namespace {
double from_bits(std::uint64_t bits) noexcept {
  double d = 0;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}
}  // namespace

double poison_nan() noexcept { return from_bits(0x7ff800000000deadull); }
double unspecified_nan() noexcept { return from_bits(0x7ff8000000000badull); }

bool same_bits(double a, double b) noexcept { return std::memcmp(&a, &b, sizeof a) == 0; }

std::uint64_t splitmix64(std::uint64_t& state) noexcept {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double hashed_value(std::uint64_t seed, std::uint64_t a, std::uint64_t b, std::uint64_t c) noexcept {
  std::uint64_t state = seed;
  std::uint64_t h = splitmix64(state);
  state ^= a * 0xd1b54a32d192ed03ull;
  h ^= splitmix64(state);
  state ^= b * 0xabc98388fb8fac03ull;
  h ^= splitmix64(state);
  state ^= c * 0x8cb92ba72f3d8dd7ull;
  h ^= splitmix64(state);
  // 53 random bits into [0, 1), then onto [-1, 1): exact in binary64.
  return static_cast<double>(h >> 11) * 0x1.0p-52 - 1.0;
}

void fill_hashed(Tensor& t, std::uint64_t seed) {
  const std::int64_t per_row = t.row_size();
  for (std::int64_t r = 0; r < t.rows; ++r)
    for (std::int64_t i = 0; i < per_row; ++i)
      t.row(r)[i] = hashed_value(seed, static_cast<std::uint64_t>(r), static_cast<std::uint64_t>(i), 0);
}

}  // namespace seqpack::attention

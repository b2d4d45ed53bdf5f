// The truth's structure and the identity analysis (consumer_internal.hpp): each
// real row's output and gradients are compared, by the identities of the rows
// they depend on, with what the consumer means. A row depends on exactly its
// query, the keys it sees (in order) and, for a key, the queries that see it:
// equal dependencies give equal bits (every kernel sums a segment in order),
// different ones a changed row.
#include <algorithm>
#include <string>

#include "consumer_internal.hpp"

namespace seqpack::attention::detail {

namespace {

std::int64_t split_of(const I64& cu, std::int64_t pos) {
  return static_cast<std::int64_t>(std::upper_bound(cu.begin(), cu.end(), pos) - cu.begin()) - 1;
}

}  // namespace

Truth::Truth(const PackMeta& m) {
  if (const std::string problem = check_pack_meta(m); !problem.empty()) {
    error_ = problem;
    return;
  }
  const std::int64_t n = m.sample_offsets.back();
  if (n < 0 || m.sample_offsets.front() != 0) {
    error_ = "sample_offsets does not start at 0";
    return;
  }
  for (std::size_t s = 1; s < m.sample_offsets.size(); ++s)
    if (m.sample_offsets[s] < m.sample_offsets[s - 1]) {
      error_ = "sample_offsets descends";
      return;
    }
  const std::int64_t nc = static_cast<std::int64_t>(m.causal_indices.size());
  const std::int64_t nf = static_cast<std::int64_t>(m.full_indices.size());
  if (nc + nf != n || m.causal_seq_offsets.empty() || m.full_only_seq_offsets.empty() ||
      m.causal_seq_offsets.back() != nc || m.full_only_seq_offsets.back() != nf) {
    error_ = "the streams' indices and offsets do not cover the packed rows";
    return;
  }
  sample_offsets_ = m.sample_offsets;
  sample_.assign(static_cast<std::size_t>(n), -1);
  split_.assign(static_cast<std::size_t>(n), -1);
  place_.assign(static_cast<std::size_t>(n), 0);
  causal_.assign(static_cast<std::size_t>(n), false);
  const std::int64_t samples = m.num_samples();
  for (std::int64_t s = 0; s < samples; ++s)
    for (std::int64_t p = m.sample_offsets[static_cast<std::size_t>(s)];
         p < m.sample_offsets[static_cast<std::size_t>(s) + 1]; ++p)
      sample_[static_cast<std::size_t>(p)] = s;
  sample_causal_.assign(static_cast<std::size_t>(samples), {});
  sample_full_.assign(static_cast<std::size_t>(samples), {});
  const auto build = [&](const I64& indices, const I64& cu, bool causal, std::vector<Rle>& splits,
                         std::vector<Rle>& per_sample) {
    splits.assign(cu.size() - 1, {});
    for (std::size_t i = 0; i < indices.size(); ++i) {
      const std::int64_t p = indices[i];
      if (p < 0 || p >= n || causal_[static_cast<std::size_t>(p)] || split_[static_cast<std::size_t>(p)] >= 0) {
        error_ = "the streams' indices are not a partition of the packed rows";
        return;
      }
      const std::int64_t j = split_of(cu, static_cast<std::int64_t>(i));
      causal_[static_cast<std::size_t>(p)] = causal;
      split_[static_cast<std::size_t>(p)] = j;
      place_[static_cast<std::size_t>(p)] = static_cast<std::int64_t>(i) - cu[static_cast<std::size_t>(j)];
      push_id(splits[static_cast<std::size_t>(j)], p);
      push_id(per_sample[static_cast<std::size_t>(sample_[static_cast<std::size_t>(p)])], p);
    }
  };
  build(m.causal_indices, m.causal_seq_offsets, true, causal_splits_, sample_causal_);
  if (error_.empty()) build(m.full_indices, m.full_only_seq_offsets, false, full_splits_, sample_full_);
}

std::int64_t Truth::sample(std::int64_t p) const noexcept {
  return p >= 0 && p < rows() ? sample_[static_cast<std::size_t>(p)] : -1;
}

bool Truth::causal(std::int64_t p) const noexcept {
  return p >= 0 && p < rows() && causal_[static_cast<std::size_t>(p)];
}

Rle Truth::keys(Intent intent, std::int64_t p, bool& defined) const {
  defined = p >= 0 && p < rows();
  if (!defined) return {};
  const auto at = static_cast<std::size_t>(p);
  const bool is_causal = causal_[at];
  const auto s = static_cast<std::size_t>(sample_[at]);
  const auto j = static_cast<std::size_t>(split_[at]);
  defined = intent == Intent::causal_self ? is_causal : !is_causal;
  if (!defined) return {};
  switch (intent) {
    case Intent::causal_self:
      return slice(causal_splits_[j], 0, place_[at] + 1);
    case Intent::gen_self:
      return full_splits_[j];
    case Intent::gen_to_und:
      return sample_causal_[s];
    case Intent::gen_to_all:
      return {Run{sample_offsets_[s], sample_offsets_[s + 1] - sample_offsets_[s]}};
    case Intent::gen_fused: {
      Rle out = sample_causal_[s];
      for (const Run& r : sample_full_[s]) push_run(out, r);
      return out;
    }
  }
  return {};
}

Rle Truth::queries(Intent intent, std::int64_t p) const {
  if (p < 0 || p >= rows()) return {};
  const auto at = static_cast<std::size_t>(p);
  const bool is_causal = causal_[at];
  const auto s = static_cast<std::size_t>(sample_[at]);
  const auto j = static_cast<std::size_t>(split_[at]);
  switch (intent) {
    case Intent::causal_self:
      return is_causal ? slice(causal_splits_[j], place_[at], length(causal_splits_[j]) - place_[at]) : Rle{};
    case Intent::gen_self:
      return is_causal ? Rle{} : full_splits_[j];
    case Intent::gen_to_und:
      return is_causal ? sample_full_[s] : Rle{};
    case Intent::gen_to_all:
    case Intent::gen_fused:
      return sample_full_[s];
  }
  return {};
}

}  // namespace seqpack::attention::detail

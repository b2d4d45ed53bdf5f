// The consequence family of the catalogue (issue 27): the reference's pack run
// through every attention pass it feeds (seqpack::attention: the varlen
// emulator, the block-sparse routes and the passes derived in
// attention/PASSES.md), with every output and gradient buffer poisoned with
// NaN first. These check the spec against its purpose, not a port against the
// spec: a fault the reference shares with the original shows here. The other
// families are in the catalogue_*.cpp files beside this one.
#include <string>

#include "catalogue_internal.hpp"
#include "seqpack/attention/consequences.hpp"

namespace seqpack::properties::detail {

// The samples that own the causal splits and the full splits, in stream
// order. A split belongs to the sample whose rows it takes; an empty split at
// a sample's end belongs to that sample while it lacks a split of that mode
// (a text-only sample's empty full split is its own, not the next sample's),
// else it opens the next sample.
std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>> split_owners(const Subject& s) {
  const auto& L = s.c().layout;
  std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>> owners;
  std::int64_t sample = 0, left = L.sample_lens.empty() ? 0 : L.sample_lens[0];
  bool has_causal = false, has_full = false;
  for (std::size_t j = 0; j < L.split_lens.size() && j < L.attn_modes.size(); ++j) {
    const bool causal = L.attn_modes[j] == "causal";
    while (left == 0 && sample + 1 < static_cast<std::int64_t>(L.sample_lens.size()) &&
           (L.split_lens[j] > 0 || (causal ? has_causal : has_full))) {
      left = L.sample_lens[static_cast<std::size_t>(++sample)];
      has_causal = has_full = false;
    }
    (causal ? owners.first : owners.second).push_back(sample);
    (causal ? has_causal : has_full) = true;
    left -= L.split_lens[j];
  }
  return owners;
}

namespace {

namespace at = seqpack::attention;

std::string where(const at::PassReport& p) { return std::string(at::pass_name(p.kind)) + ": "; }

std::string rows_of(const std::vector<at::BufferRows>& buffers) {
  std::string text;
  for (const auto& b : buffers) text += (text.empty() ? "" : "; ") + b.buffer + " rows " + at::format_ranges(b.rows);
  return text;
}

// The three findings about the original that these properties made (findings
// 1 to 3 of reference/README.md, "Findings of the consequence oracle"; the
// consumer judge's audit made the others). Each is matched
// narrowly, by the layout class the finding names and by the rows or pass it
// affects, so that any other failure of the same property still fails; the
// tests Findings.* (tests/properties/finding_test.cpp) pin each one, so a
// change of the reference that fixes or widens them is seen.

// The real rows of the stream a buffer of `p` indexes (queries for output and
// dq, keys for dk and dv): padding rows come after them.
std::int64_t real_rows(const Subject& s, const at::PassReport& p, const std::string& buffer) {
  const auto& m = *s.pack().meta;
  const bool queries = buffer == "output" || buffer == "dq";
  switch (p.kind) {
    case at::PassKind::und_causal:
      return m.num_causal_tokens;
    case at::PassKind::gen_to_und:
      return queries ? m.num_full_tokens : m.num_causal_tokens;
    case at::PassKind::gen_full:
      return m.num_full_tokens;
    case at::PassKind::dense_full:  // gen queries, interleaved keys
      return queries ? m.num_full_tokens : m.num_causal_tokens + m.num_full_tokens;
    default:
      return m.num_causal_tokens + m.num_full_tokens;
  }
}

// Finding 1: a pack with no pad segment because its layout does not pair
// (full-only, or unequal split counts: NOTES 4.4) that is padded anyway
// (alignment, cp or graphs) leaves its padding rows unwritten. True when every
// unwritten row of `p` is a padding row of such a pack.
bool unpaired_padding(const Subject& s, const at::PassReport& p) {
  if (s.pack().pad_segment || p.unwritten.empty()) return false;
  const auto [causal, full] = split_owners(s);
  if (causal.size() == full.size() && !causal.empty()) return false;
  for (const auto& b : p.unwritten) {
    for (const auto& r : b.rows) {
      if (r.first < real_rows(s, p, b.buffer)) return false;
    }
  }
  return true;
}

// Finding 2: a layout whose streams have different split counts (beyond the
// packer's layouts) gives the generation-to-understanding pass unequal
// segment counts, and one whose full splits are not one per sample gives the
// dense pass (GEN segment i against sample i's keys) unequal counts: the
// kernel's shape check refuses the call.
bool unpaired_gen_to_und(const Subject& s, const at::PassReport& p) {
  const auto [causal, full] = split_owners(s);
  if (p.kind == at::PassKind::dense_full)
    return !s.pack().pad_segment && static_cast<std::int64_t>(full.size()) != s.pack().meta->num_samples();
  return p.kind == at::PassKind::gen_to_und && causal.size() != full.size();
}

// Finding 3: equal split counts whose i-th causal and i-th full splits belong
// to different samples (beyond the packer's layouts): the segment-for-segment
// generation-to-understanding pass lets a sample's gen rows see another's und
// rows; likewise a dense pass whose i-th full split is not sample i's.
bool crossed_gen_to_und(const Subject& s, const at::PassReport& p) {
  const auto [causal, full] = split_owners(s);
  if (p.kind == at::PassKind::dense_full) {
    // The original's assertion (~488-494) counts full splits against samples,
    // not their owners: a pad segment does not prevent this one.
    for (std::size_t i = 0; i < full.size(); ++i)
      if (full[i] != static_cast<std::int64_t>(i)) return true;
    return false;
  }
  return p.kind == at::PassKind::gen_to_und && causal.size() == full.size() && causal != full;
}

}  // namespace

const attention::Report& consequences_of(const Subject& s) { return s.consequences(); }

bool consequence_finding(const Subject& s, const at::PassReport& p) {
  return unpaired_padding(s, p) || unpaired_gen_to_und(s, p);
}

void consequence_coverage(const Subject& s) {
  const at::Report& r = consequences_of(s);
  REQUIRE(r.refusal.empty(), "the pack cannot be read by its consumers: " << r.refusal);
  for (const auto& p : r.passes) {
    if (consequence_finding(s, p)) continue;
    REQUIRE(p.refusal.empty(), where(p) << "refused: " << p.refusal);
    REQUIRE(p.unwritten.empty(), where(p) << "left NaN after forward and backward: " << rows_of(p.unwritten));
  }
}

void consequence_padding_changes_nothing(const Subject& s) {
  for (const auto& p : consequences_of(s).passes) {
    REQUIRE(p.changed.empty(), where(p) << "real rows differ from the unpadded run: " << rows_of(p.changed));
  }
}

void consequence_weight_gradients(const Subject& s) {
  for (const auto& p : consequences_of(s).passes) {
    if (unpaired_padding(s, p)) continue;  // finding 1: NaN from the unwritten padding rows
    for (const auto& w : p.weight_gradients) {
      REQUIRE(w.finite, where(p) << "the projection weight gradient " << w.name << " is not finite");
      REQUIRE(w.equals_unpadded,
              where(p) << "the projection weight gradient " << w.name << " differs from the unpadded one");
    }
  }
}

void consequence_lengths_suffice(const Subject& s) {
  for (const auto& p : consequences_of(s).passes) {
    REQUIRE(p.max_violations.empty(), where(p) << p.max_violations.front());
  }
}

void consequence_pairing(const Subject& s) {
  for (const auto& p : consequences_of(s).passes) {
    if (unpaired_gen_to_und(s, p)) continue;  // finding 2
    REQUIRE(p.paired, where(p) << p.q_segments << " query segments against " << p.k_segments << " key segments");
  }
}

void consequence_no_cross_sample(const Subject& s) {
  for (const auto& p : consequences_of(s).passes) {
    if (crossed_gen_to_und(s, p)) continue;  // finding 3
    REQUIRE(!p.cross, where(p) << p.cross_rows << " real query rows attend across samples; first: row "
                               << p.cross->q_row << " of sample " << p.cross->q_sample << " sees key row "
                               << p.cross->k_row << " of sample " << p.cross->k_sample);
  }
}

void consequence_plain_offsets_without_pad_segment(const Subject& s) {
  const at::Report& r = consequences_of(s);
  const auto [causal, full] = split_owners(s);
  if (!s.pack().pad_segment && (causal.empty() || causal.size() != full.size())) return;  // finding 1
  // Findings 2 and 3 on the dense pass: full splits not one per sample.
  bool own = static_cast<std::int64_t>(full.size()) == s.pack().meta->num_samples();
  for (std::size_t i = 0; own && i < full.size(); ++i) own = full[i] == static_cast<std::int64_t>(i);
  if (!s.pack().pad_segment && !own) return;
  REQUIRE(r.plain_offsets_match, "a pack without a pad segment: the plain offsets do not give the same results");
}

}  // namespace seqpack::properties::detail

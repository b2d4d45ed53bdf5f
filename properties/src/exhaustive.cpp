// The bounded-exhaustive enumeration (exhaustive.hpp): a scope's layouts
// sorted by size, each crossed with every option value of the scope, then
// planted with every single fault of each error class.
#include "seqpack/properties/exhaustive.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <tuple>
#include <unordered_set>

#include "faults.hpp"
#include "seqpack/properties/spec.hpp"
#include "seqpack/protocol/limits.hpp"

namespace seqpack::properties {

namespace {

namespace ref = seqpack::reference;
using I64 = std::vector<std::int64_t>;
using Kind = detail::Fault;

constexpr std::int64_t kPastInt32 = std::int64_t{1} << 31;

// One sample's splits: (causal?, length) each.
using Sample = std::vector<std::pair<bool, std::int64_t>>;

// Every sample of 1..max_splits splits, each of either mode (or of the
// given shapes only), lengths 0..max_len.
std::vector<Sample> samples_of(const std::vector<std::vector<bool>>& shapes, std::int64_t max_len) {
  std::vector<Sample> out;
  for (const std::vector<bool>& shape : shapes) {
    I64 lens(shape.size(), 0);
    for (;;) {
      Sample s;
      for (std::size_t j = 0; j < shape.size(); ++j) s.emplace_back(shape[j], lens[j]);
      out.push_back(std::move(s));
      std::size_t k = 0;
      while (k < lens.size() && ++lens[k] > max_len) lens[k++] = 0;
      if (k == lens.size()) break;
    }
  }
  return out;
}

std::vector<std::vector<bool>> all_shapes(std::int64_t max_splits) {
  std::vector<std::vector<bool>> out;
  for (std::int64_t n = 1; n <= max_splits; ++n)
    for (std::int64_t bits = 0; bits < (std::int64_t{1} << n); ++bits) {
      std::vector<bool> shape;
      for (std::int64_t j = 0; j < n; ++j) shape.push_back(((bits >> j) & 1) != 0);
      out.push_back(shape);
    }
  return out;
}

// Every batch of 1..max_samples samples drawn from `choices`.
void batches_of(const std::vector<Sample>& choices, std::int64_t max_samples, std::vector<std::vector<Sample>>& out) {
  if (choices.empty()) return;
  for (std::int64_t n = 1; n <= max_samples; ++n) {
    std::vector<std::size_t> pick(static_cast<std::size_t>(n), 0);
    for (;;) {
      std::vector<Sample> batch;
      for (const std::size_t c : pick) batch.push_back(choices[c]);
      out.push_back(std::move(batch));
      std::size_t k = 0;
      while (k < pick.size() && ++pick[k] >= choices.size()) pick[k++] = 0;
      if (k == pick.size()) break;
    }
  }
}

ref::Layout layout_of(const std::vector<Sample>& batch) {
  ref::Layout l;
  for (const Sample& s : batch) {
    std::int64_t total = 0;
    for (const auto& [causal, len] : s) {
      l.split_lens.push_back(len);
      l.attn_modes.emplace_back(causal ? "causal" : "full");
      total += len;
    }
    l.sample_lens.push_back(total);
  }
  l.und_token_indexes = ref::packer_und_tokens(l);
  return l;
}

// A layout as a short string. Two batches can be one layout: a layout gives
// each sample the splits its rows cover, so where an empty split sits at a
// sample's edge, [x] [0 z] and [x 0] [z] are the same layout.
std::string key_of(const ref::Layout& l) {
  std::string k;
  for (const std::int64_t s : l.sample_lens) k += std::to_string(s) + ",";
  k += ";";
  for (std::size_t j = 0; j < l.split_lens.size(); ++j)
    k += (l.attn_modes[j] == "causal" ? "c" : "f") + std::to_string(l.split_lens[j]) + ",";
  return k;
}

std::int64_t sum(const I64& v) {
  std::int64_t s = 0;
  for (const std::int64_t x : v) s += x;
  return s;
}

// The position of every full row of a valid layout.
I64 full_rows_of(const ref::Layout& l) {
  I64 out;
  std::int64_t at = 0;
  for (std::size_t j = 0; j < l.split_lens.size(); ++j) {
    for (std::int64_t r = 0; r < l.split_lens[j]; ++r, ++at)
      if (l.attn_modes[j] == "full") out.push_back(at);
  }
  return out;
}

// Whether packed position `b` falls strictly inside a split (no split starts there).
bool inside_a_split(const ref::Layout& l, std::int64_t b) {
  std::int64_t start = 0;
  for (const std::int64_t len : l.split_lens) {
    if (start < b && b < start + len) return true;
    start += len;
  }
  return false;
}

// A fault to plant: which, where, and the value planted.
struct Planted {
  Kind kind;
  std::int64_t at = 0;
  std::int64_t value = 0;
};

std::vector<Planted> faults_of(const ref::Layout& l, std::int64_t rows, bool first_layout) {
  std::vector<Planted> f;
  for (std::int64_t field = 0; field < 3; ++field)
    for (const std::int64_t v : {0, -1}) f.push_back({Kind::option, field, v});
  for (std::int64_t m = 0; m < 4; ++m) f.push_back({Kind::negative_mark, m, -1});
  f.push_back({Kind::empty, 0, 0});
  if (first_layout) f.push_back({Kind::empty, 1, 0});
  f.push_back({Kind::mode_count, 0, 0});
  f.push_back({Kind::mode_count, 1, 0});
  const auto splits = static_cast<std::int64_t>(l.split_lens.size());
  for (std::int64_t j = 0; j < splits; ++j) f.push_back({Kind::negative, j, -1});
  for (std::int64_t j = 0; j < static_cast<std::int64_t>(l.sample_lens.size()); ++j)
    f.push_back({Kind::negative_sample, j, -1});
  for (std::int64_t j = 0; j < splits; ++j) f.push_back({Kind::unknown_mode, j, 0});
  for (std::int64_t j = 0; j < splits; ++j) f.push_back({Kind::tiling_sum, j, 1});
  std::int64_t boundary = 0;
  for (std::size_t i = 0; i + 1 < l.sample_lens.size(); ++i) {
    boundary += l.sample_lens[i];
    if (l.sample_lens[i] >= 1 && inside_a_split(l, boundary - 1))
      f.push_back({Kind::tiling_boundary, static_cast<std::int64_t>(i), 0});
  }
  f.push_back({Kind::und_range, 0, -1});
  f.push_back({Kind::und_range, 0, rows});
  if (!l.und_token_indexes.empty()) f.push_back({Kind::und_repeat, 0, 0});
  const I64 full = full_rows_of(l);
  for (const std::int64_t r : full) f.push_back({Kind::und_in_full, 0, r});
  f.push_back({Kind::length, 0, 1});
  if (rows >= 1) f.push_back({Kind::length, 0, -1});
  if (rows - static_cast<std::int64_t>(full.size()) > 0) f.push_back({Kind::overflow_alignment, 0, kPastInt32});
  if (!full.empty()) {
    f.push_back({Kind::overflow_alignment, 1, kPastInt32});
    f.push_back({Kind::overflow_lcm, 0, 0});
  }
  f.push_back({Kind::overflow_mark, 0, kPastInt32});
  return f;
}

// NOTES.md 4.4, 4.5 and 4.9, restated: a pad segment is due when both
// streams have the same, non-zero number of splits (with
// pad_segment_only_when_padded: and a stream is padded anyway, or graphs are
// on), and a due segment needs as many full splits as samples.
bool pairing_fails(const Case& c) {
  std::int64_t causal_splits = 0, full_splits = 0, causal_rows = 0, full_rows = 0;
  for (std::size_t j = 0; j < c.layout.split_lens.size(); ++j) {
    const bool causal = c.layout.attn_modes[j] == "causal";
    (causal ? causal_splits : full_splits) += 1;
    (causal ? causal_rows : full_rows) += c.layout.split_lens[j];
  }
  bool due = causal_splits == full_splits && causal_splits > 0;
  const ref::Options& o = c.options;
  if (due && o.pad_segment_only_when_padded) {
    due = o.pad_for_cuda_graphs ||
          spec_padded(causal_rows, o.cp_world_size, false, o.causal_seq_alignment) != causal_rows ||
          spec_padded(full_rows, o.cp_world_size, false, o.full_seq_alignment) != full_rows;
  }
  return due && static_cast<std::int64_t>(c.layout.sample_lens.size()) != full_splits;
}

// A case's inputs as a short string: two planted cases with the same inputs
// are one case (a fault can erase what told two layouts apart: a mode made
// unknown, the last mode dropped, the sample lengths cleared).
std::string inputs_key(const Case& c) {
  std::string k;
  const auto list = [&k](const I64& v) {
    for (const std::int64_t x : v) k += std::to_string(x) + ",";
    k += ";";
  };
  list(c.layout.sample_lens);
  list(c.layout.split_lens);
  for (const std::string& m : c.layout.attn_modes) k += m + ",";
  k += ";";
  list(c.layout.und_token_indexes);
  const ref::Options& o = c.options;
  list({o.cp_world_size, o.causal_seq_alignment, o.full_seq_alignment, o.pad_for_cuda_graphs, o.is_image_batch,
        o.pad_segment_only_when_padded, c.marks.image_causal, c.marks.image_full, c.marks.video_causal,
        c.marks.video_full, c.rows, static_cast<std::int64_t>(c.row_bytes)});
  return k;
}

}  // namespace

const std::vector<Scope>& scopes() {
  static const std::vector<Scope> all = [] {
    std::vector<Scope> s(3);
    // tiny: CI's scope, about 40 s in process on 2 cores (docs/exhaustive.md).
    s[0].name = "tiny";
    s[0].max_samples = 2;
    s[0].max_len = 1;
    s[0].beyond_splits = 2;
    s[0].beyond_len = 1;
    s[0].beyond_samples = 2;
    s[0].alignments = {1, 2};
    s[0].cp_sizes = {1, 2};
    s[0].large_mark = 8;
    // small: a few minutes; splits of up to 3 rows, alignment 4 and cp 3.
    s[1].name = "small";
    s[1].max_samples = 2;
    s[1].max_len = 3;
    s[1].beyond_splits = 2;
    s[1].beyond_len = 1;
    s[1].beyond_samples = 2;
    s[1].alignments = {1, 2, 4};
    s[1].cp_sizes = {1, 2, 3};
    s[1].large_mark = 16;
    // medium: the overnight job's, within an hour on 2 cores; three samples,
    // split lengths to 2 beyond the packer (a row can move inside a split:
    // tiling_boundary), and an alignment that is not a power of two (the
    // powers of two are tiny's and small's).
    s[2].name = "medium";
    s[2].max_samples = 3;
    s[2].max_len = 3;
    s[2].beyond_splits = 2;
    s[2].beyond_len = 2;
    s[2].beyond_samples = 2;
    s[2].alignments = {1, 3};
    s[2].cp_sizes = {1, 2, 3};
    s[2].large_mark = 16;
    return s;
  }();
  return all;
}

const Scope& scope_named(const std::string& name) {
  std::string known;
  for (const Scope& s : scopes()) {
    if (s.name == name) return s;
    known += (known.empty() ? "" : ", ") + s.name;
  }
  throw std::invalid_argument("--scope: no scope \"" + protocol::printable(name, 60) + "\" (the scopes: " + known +
                              ")");
}

Enumeration::Enumeration(Scope scope) : scope_(std::move(scope)) {
  std::vector<std::vector<Sample>> packer, beyond;
  batches_of(samples_of({{true, false}}, scope_.max_len), scope_.max_samples, packer);
  batches_of(samples_of({{false}}, scope_.max_len), scope_.max_samples, packer);
  if (scope_.beyond_splits > 0)
    batches_of(samples_of(all_shapes(scope_.beyond_splits), scope_.beyond_len), scope_.beyond_samples, beyond);
  std::set<std::string> seen;
  for (const bool is_beyond : {false, true}) {
    for (const auto& batch : is_beyond ? beyond : packer) {
      Layout l;
      l.layout = layout_of(batch);
      if (!seen.insert(key_of(l.layout)).second) continue;  // a layout made already
      l.rows = sum(l.layout.sample_lens);
      l.packer = !is_beyond;
      l.und_listings = 1 + (scope_.und_reversed && l.layout.und_token_indexes.size() >= 2 ? 1 : 0);
      layouts_.push_back(std::move(l));
    }
  }
  // In order of size: rows, then splits, then samples, then the packer's first.
  std::stable_sort(layouts_.begin(), layouts_.end(), [](const Layout& a, const Layout& b) {
    return std::make_tuple(a.rows, a.layout.split_lens.size(), a.layout.sample_lens.size(), !a.packer) <
           std::make_tuple(b.rows, b.layout.split_lens.size(), b.layout.sample_lens.size(), !b.packer);
  });
  const auto n_align = static_cast<std::int64_t>(scope_.alignments.size());
  crossings_ = n_align * n_align * static_cast<std::int64_t>(scope_.cp_sizes.size()) * kGraphStates * 2 *
               static_cast<std::int64_t>(scope_.row_bytes.size());
  std::unordered_set<std::string> planted;
  for (std::size_t i = 0; i < layouts_.size(); ++i) {
    Layout& l = layouts_[i];
    if (l.packer) ++packer_layouts_;
    if (scope_.invalid) {
      for (const Planted& p : faults_of(l.layout, l.rows, i == 0)) {
        const Fault f{static_cast<std::uint8_t>(p.kind), p.at, p.value};
        if (planted.insert(inputs_key(planted_case(l, f))).second) l.faults.push_back(f);
      }
    }
    first_.push_back(total_);
    total_ += crossings_ * l.und_listings + static_cast<std::int64_t>(l.faults.size());
  }
}

Case Enumeration::at(std::int64_t i) const {
  if (i < 0 || i >= total_) throw std::out_of_range("exhaustive case " + std::to_string(i));
  const auto it = std::upper_bound(first_.begin(), first_.end(), i);
  const Layout& l = layouts_[static_cast<std::size_t>(it - first_.begin() - 1)];
  const std::int64_t k = i - *(it - 1);
  Case c = k < crossings_ * l.und_listings
               ? valid_case(l, k)
               : planted_case(l, l.faults[static_cast<std::size_t>(k - crossings_ * l.und_listings)]);
  c.data_seed = static_cast<std::uint64_t>(i);
  return c;
}

bool Enumeration::packer_layout(std::int64_t i) const {
  if (i < 0 || i >= total_) throw std::out_of_range("exhaustive case " + std::to_string(i));
  return layouts_[static_cast<std::size_t>(std::upper_bound(first_.begin(), first_.end(), i) - first_.begin() - 1)]
      .packer;
}

Case Enumeration::valid_case(const Layout& l, std::int64_t k) const {
  Case c;
  c.layout = l.layout;
  c.rows = l.rows;
  const auto digit = [&k](std::size_t n) {
    const auto d = static_cast<std::size_t>(k % static_cast<std::int64_t>(n));
    k /= static_cast<std::int64_t>(n);
    return d;
  };
  c.options.causal_seq_alignment = scope_.alignments[digit(scope_.alignments.size())];
  c.options.full_seq_alignment = scope_.alignments[digit(scope_.alignments.size())];
  c.options.cp_world_size = scope_.cp_sizes[digit(scope_.cp_sizes.size())];
  const std::size_t graphs = digit(kGraphStates);
  c.options.pad_segment_only_when_padded = digit(2) == 1;
  c.row_bytes = scope_.row_bytes[digit(scope_.row_bytes.size())];
  if (digit(static_cast<std::size_t>(l.und_listings)) == 1)
    std::reverse(c.layout.und_token_indexes.begin(), c.layout.und_token_indexes.end());
  const std::int64_t m = scope_.large_mark;
  switch (graphs) {
    case 1:  // off, after a large batch: the marks stay
      c.marks = {m, m, m, m};
      break;
    case 2:
      c.options.pad_for_cuda_graphs = true;
      break;
    case 3:
      c.options.pad_for_cuda_graphs = c.options.is_image_batch = true;
      break;
    case 4:
      c.options.pad_for_cuda_graphs = true;
      c.marks.video_causal = c.marks.video_full = m;
      break;
    case 5:
      c.options.pad_for_cuda_graphs = c.options.is_image_batch = true;
      c.marks.image_causal = c.marks.image_full = m;
      break;
    case 6:
      c.options.pad_for_cuda_graphs = c.options.is_image_batch = true;
      c.marks.video_causal = c.marks.video_full = m;
      break;
    default:
      break;
  }
  if (pairing_fails(c)) {
    c.expect_error = "pad_segment_pairing";
    c.fault = "pairing";
  }
  return c;
}

Case Enumeration::planted_case(const Layout& l, const Fault& f) const {
  Case c;
  c.layout = l.layout;
  c.rows = l.rows;
  c.row_bytes = scope_.row_bytes.front();
  ref::Layout& L = c.layout;
  const auto at = static_cast<std::size_t>(f.at);
  const auto kind = static_cast<Kind>(f.kind);
  switch (kind) {
    case Kind::option:
      (f.at == 0   ? c.options.cp_world_size
       : f.at == 1 ? c.options.causal_seq_alignment
                   : c.options.full_seq_alignment) = f.value;
      break;
    case Kind::negative_mark: {
      std::int64_t* marks[] = {&c.marks.image_causal, &c.marks.image_full, &c.marks.video_causal, &c.marks.video_full};
      *marks[at] = f.value;
      break;
    }
    case Kind::empty:
      L.sample_lens.clear();
      if (f.at == 1) L = {};
      c.rows = 0;
      break;
    case Kind::mode_count:
      if (f.at == 0)
        L.attn_modes.emplace_back("full");
      else
        L.attn_modes.pop_back();
      break;
    case Kind::negative:
      L.split_lens[at] = f.value;
      break;
    case Kind::negative_sample:
      L.sample_lens[at] = f.value;
      break;
    case Kind::unknown_mode:
      L.attn_modes[at] = "bogus";
      break;
    case Kind::tiling_sum:
      L.split_lens[at] += f.value;
      break;
    case Kind::tiling_boundary:
      L.sample_lens[at] -= 1;
      L.sample_lens[at + 1] += 1;
      break;
    case Kind::und_range:
      L.und_token_indexes.push_back(f.value);
      break;
    case Kind::und_repeat:
      L.und_token_indexes.push_back(L.und_token_indexes.front());
      break;
    case Kind::und_in_full:
      L.und_token_indexes.push_back(f.value);
      break;
    case Kind::length:
      c.rows += f.value;
      break;
    case Kind::overflow_alignment:
      (f.at == 0 ? c.options.causal_seq_alignment : c.options.full_seq_alignment) = f.value;
      break;
    case Kind::overflow_lcm:
      c.options.cp_world_size = 65521;
      c.options.full_seq_alignment = 65537;
      break;
    case Kind::overflow_mark:
      c.options.pad_for_cuda_graphs = true;
      c.marks.video_full = f.value;
      break;
    case Kind::overflow_interleaved:  // the pad segment's faults arise in the crossings
    case Kind::pairing:
    case Kind::pairing_layout:
      throw std::logic_error(std::string("the enumerator plants no ") + detail::fault_name(kind) + " fault");
  }
  c.expect_error = detail::class_of(kind);
  c.fault = detail::fault_name(kind);
  return c;
}

std::string case_class(const Case& c) { return c.expect_error.empty() ? "valid" : c.expect_error; }

}  // namespace seqpack::properties

// The fuzz input format (fuzz/README.md): a structured form that builds
// packer-like layouts from the bytes and plants at most one fault of a known
// class, and a raw form that reads every field as it is.
#include "seqpack/fuzz/decode.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <numeric>

#include "seqpack/properties/catalogue.hpp"
#include "seqpack/properties/spec.hpp"
#include "seqpack/reference/reference.hpp"

namespace seqpack::fuzz {

namespace ref = seqpack::reference;
using protocol::Case;

std::uint64_t ByteReader::varint() {
  std::uint64_t v = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    const std::uint8_t b = byte();
    if (shift < 64) v |= static_cast<std::uint64_t>(b & 0x7F) << shift;
    if ((b & 0x80) == 0) break;
  }
  return v;
}

std::int64_t ByteReader::svarint() {
  const std::uint64_t z = varint();
  return static_cast<std::int64_t>(z >> 1) ^ -static_cast<std::int64_t>(z & 1);
}

std::int64_t ByteReader::in_range(std::int64_t lo, std::int64_t hi) {
  const auto span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo) + 1;
  std::uint64_t v = byte();
  if (span > 256) v = v << 8 | byte();
  return lo + static_cast<std::int64_t>(span == 0 ? v : v % span);
}

std::uint64_t ByteReader::u64() {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = v << 8 | byte();
  return v;
}

namespace {

template <typename T, std::size_t N>
T pick(ByteReader& r, const T (&table)[N]) {
  return table[r.byte() % N];
}

// Lengths with a fair share of zeros and the values around 128-row steps
// (the 2048-row bucket edges are the long streams' business).
std::int64_t short_len(ByteReader& r, std::int64_t max, bool steps = true) {
  const std::uint8_t b = r.byte();
  if (b < 40) return 0;
  if (b < 56 && steps) return pick(r, {127, 128, 129, 255, 256, 257});
  return 1 + r.in_range(0, max - 1);
}

std::int64_t alignment(ByteReader& r, std::int64_t cp) {
  const std::uint8_t b = r.byte() % 10;
  if (b < 4) return 1;
  if (b < 8) return pick(r, {2, 3, 4, 7, 8, 16, 64, 96, 128, 129, 256, 1000});
  return cp * r.in_range(1, 4);
}

// A mark as an earlier call leaves it: a padded length of another batch, of
// at most half the budget's rows.
std::int64_t earlier_mark(ByteReader& r, const Budget& budget) {
  if (r.byte() % 3 == 0) return 0;
  const std::int64_t n = r.in_range(1, budget.rows / 2), cp = r.in_range(1, 8);
  const std::int64_t a = pick(r, {1, 2, 7, 64, 128});
  return properties::spec_padded(n, cp, true, a);
}

// A long stream's length: on or next to a CUDA-graph bucket edge that the
// budget holds (each edge with its padded stream and room for the other).
std::int64_t long_stream_len(ByteReader& r, const Budget& budget) {
  static constexpr std::int64_t kEdges[] = {2048, 4096, 8192, 16384};
  std::int64_t fit[4];
  std::size_t n = 0;
  for (const std::int64_t e : kEdges) {
    if (e * 3 / 2 <= budget.rows) fit[n++] = e;  // room for the padding and the other stream
  }
  const std::uint8_t b = r.byte();
  if (n == 0) return budget.rows / 2 + r.in_range(-2, 2);  // no edge fits: long for this budget
  // Past the last tier edge too, where the large budget allows it.
  if (budget.rows >= 4 * 16384 && b % 8 == 7) return 16385 + r.in_range(0, 8000);
  return fit[b % n] + r.in_range(-2, 2);
}

std::int64_t total(const std::vector<std::int64_t>& v) { return std::accumulate(v.begin(), v.end(), std::int64_t{0}); }

// A valid layout: the packer's [causal, full] pairs or full-only samples, or
// samples of one full split and up to two causal splits in any order.
Case structured(ByteReader& r, const Budget& budget) {
  Case c;
  const std::uint8_t shape = r.byte() % 8;
  const bool pairs = shape < 6;
  const bool unusual = shape == 7;
  c.options.cp_world_size = r.byte() % 2 == 0 ? 1 : r.in_range(2, 16);
  c.options.causal_seq_alignment = alignment(r, c.options.cp_world_size);
  c.options.full_seq_alignment = r.flag() ? c.options.causal_seq_alignment : alignment(r, c.options.cp_world_size);
  c.options.pad_for_cuda_graphs = r.byte() % 3 == 0;
  c.options.is_image_batch = r.flag();
  c.options.pad_segment_only_when_padded = pairs && r.byte() % 3 == 0;
  const std::uint8_t count = r.byte();
  const std::size_t samples = count < 170 ? 2 + count % 7 : count < 230 ? 1 : 64 + count % 17;
  // One input in 32: a long stream whose total lands on a bucket edge. An
  // exhausted reader (zeros) gives a short case.
  const bool long_stream = r.byte() % 32 == 31;
  const std::int64_t long_total = long_stream ? long_stream_len(r, budget) : 0;
  const bool long_causal = long_stream && pairs && r.byte() % 4 == 3;
  // Short splits stay short in total: many samples get shorter maxima (the
  // large budget keeps 12 causal and 40 full rows a sample).
  const auto per_sample = [&](std::int64_t share, std::int64_t most) {
    return std::clamp<std::int64_t>(budget.rows / share / static_cast<std::int64_t>(samples), 2, most);
  };
  // (fast budget: up to 8 samples keep 12 and 40 rows; 64-80 samples get 6
  // and 12, and no 128-row steps)
  const bool steps = samples <= 8 || budget.rows > kFastBudget.rows;
  const std::int64_t causal_max = per_sample(8, 12), full_max = per_sample(4, 40);
  for (std::size_t s = 0; s < samples; ++s) {
    if (unusual) {
      const int causal_splits = static_cast<int>(r.byte() % 3);
      const int full_at = static_cast<int>(r.byte() % (causal_splits + 1));
      std::int64_t len = 0;
      for (int k = 0; k <= causal_splits; ++k) {
        const bool full = k == full_at;
        const std::int64_t l = short_len(r, full ? 20 : 6, steps);
        c.layout.attn_modes.push_back(full ? "full" : "causal");
        c.layout.split_lens.push_back(l);
        len += l;
      }
      c.layout.sample_lens.push_back(len);
      continue;
    }
    // The long stream's total, spread over the samples to the row.
    const auto n = static_cast<std::int64_t>(samples), k = static_cast<std::int64_t>(s);
    const std::int64_t share = long_total / n + (k < long_total % n ? 1 : 0);
    const std::int64_t causal = long_causal ? share : short_len(r, causal_max, steps);
    const std::int64_t full = long_stream && !long_causal ? share : short_len(r, full_max, steps);
    if (pairs) {
      c.layout.attn_modes.insert(c.layout.attn_modes.end(), {"causal", "full"});
      c.layout.split_lens.insert(c.layout.split_lens.end(), {causal, full});
      c.layout.sample_lens.push_back(causal + full);
    } else {
      c.layout.attn_modes.push_back("full");
      c.layout.split_lens.push_back(full);
      c.layout.sample_lens.push_back(full);
    }
  }
  protocol::list_und_tokens(c);
  if (unusual && r.flag() && !c.layout.und_token_indexes.empty()) c.layout.und_token_indexes.pop_back();
  if (r.byte() % 5 < 2) {
    c.marks = {earlier_mark(r, budget), earlier_mark(r, budget), earlier_mark(r, budget), earlier_mark(r, budget)};
  }
  c.rows = total(c.layout.sample_lens);
  c.row_bytes = pick(r, {std::size_t{1}, std::size_t{2}, std::size_t{4}, std::size_t{8}, std::size_t{16},
                         std::size_t{3}, std::size_t{12}});
  c.data_seed = r.u64();
  return c;
}

// At most one fault, of a known class (as the strict generator plants them).
void plant(ByteReader& r, Case& c) {
  auto& L = c.layout;
  const std::uint8_t which = r.byte();
  const auto at = [&r](std::size_t n) {
    return static_cast<std::size_t>(r.in_range(0, static_cast<std::int64_t>(n) - 1));
  };
  switch (which % 20) {  // 0 and 15-19: none, so that an exhausted reader gives a valid case
    case 14: {
      const std::int64_t bad =
          pick(r, {std::int64_t{0}, std::int64_t{-1}, std::int64_t{-7}, std::numeric_limits<std::int64_t>::min()});
      const std::uint8_t field = r.byte() % 3;
      (field == 0   ? c.options.cp_world_size
       : field == 1 ? c.options.full_seq_alignment
                    : c.options.causal_seq_alignment) = bad;
      c.fault = "option";
      c.expect_error = "invalid_option";
      return;
    }
    case 1:
      L.sample_lens.clear();
      if (r.flag()) L = {};
      c.rows = 0;
      c.fault = "empty";
      c.expect_error = "empty_batch";
      return;
    case 2:
      if (r.flag() || L.attn_modes.empty())
        L.attn_modes.push_back("full");
      else
        L.attn_modes.pop_back();
      c.fault = "mode_count";
      c.expect_error = "invalid_layout";
      return;
    case 3:
      L.split_lens[at(L.split_lens.size())] = -r.in_range(1, 5);
      c.fault = "negative_length";
      c.expect_error = "invalid_layout";
      return;
    case 4:
      L.attn_modes[at(L.attn_modes.size())] = pick(r, {"sliding", "Causal", "", "full "});
      c.fault = "unknown_mode";
      c.expect_error = "invalid_layout";
      return;
    case 5:
      L.split_lens[at(L.split_lens.size())] += 1;
      protocol::list_und_tokens(c);
      c.fault = "tiling_sum";
      c.expect_error = "invalid_layout";
      return;
    case 6:
      L.sample_lens.insert(L.sample_lens.begin(), {2, 2});
      L.split_lens.insert(L.split_lens.begin(), {1, 2, 1});
      L.attn_modes.insert(L.attn_modes.begin(), {"causal", "full", "full"});
      protocol::list_und_tokens(c);
      c.rows += 4;
      c.fault = "tiling_boundary";
      c.expect_error = "invalid_layout";
      return;
    case 7:
      L.und_token_indexes.push_back(
          pick(r, {std::int64_t{-1}, c.rows, c.rows + 5, std::numeric_limits<std::int64_t>::max()}));
      c.fault = "und_out_of_range";
      c.expect_error = "invalid_layout";
      return;
    case 8:
      if (L.und_token_indexes.empty())
        L.und_token_indexes.push_back(c.rows);
      else
        L.und_token_indexes.push_back(L.und_token_indexes[at(L.und_token_indexes.size())]);
      c.fault = "und_repeated";
      c.expect_error = "invalid_layout";
      return;
    case 9:
      L.sample_lens.push_back(3);
      L.split_lens.insert(L.split_lens.end(), {1, 2});
      L.attn_modes.insert(L.attn_modes.end(), {"causal", "full"});
      protocol::list_und_tokens(c);
      L.und_token_indexes.push_back(c.rows + 1);
      c.rows += 3;
      c.fault = "und_in_full";
      c.expect_error = "und_token_in_full_split";
      return;
    case 10:
      c.rows += r.flag() ? 1 : -1;
      if (c.rows < 0) c.rows = 1;
      c.fault = "length";
      c.expect_error = "length_mismatch";
      return;
    case 11:
      L.sample_lens.push_back(1);
      L.split_lens.push_back(1);
      L.attn_modes.push_back("full");
      c.rows += 1;
      c.options.full_seq_alignment =
          pick(r, {std::int64_t{2147483648LL}, std::int64_t{1} << 40, std::numeric_limits<std::int64_t>::max()});
      c.fault = "overflow_alignment";
      c.expect_error = "overflow";
      return;
    case 12:
      c.options.pad_for_cuda_graphs = true;
      c.marks.image_full = c.marks.video_full =
          pick(r, {std::int64_t{2147483648LL}, std::numeric_limits<std::int64_t>::max()});
      c.fault = "overflow_mark";
      c.expect_error = "overflow";
      return;
    case 13: {
      const int pairs = 2 + r.byte() % 3;
      L = {};
      std::int64_t len = 0;
      for (int k = 0; k < pairs; ++k) {
        const std::int64_t a = short_len(r, 5), b = short_len(r, 5);
        L.split_lens.insert(L.split_lens.end(), {a, b});
        L.attn_modes.insert(L.attn_modes.end(), {"causal", "full"});
        len += a + b;
      }
      L.sample_lens.push_back(len);
      protocol::list_und_tokens(c);
      c.rows = len;
      c.options.pad_segment_only_when_padded = false;
      c.options.causal_seq_alignment = c.options.full_seq_alignment = 1;
      c.options.cp_world_size = r.in_range(1, 3);
      c.marks = {};
      c.fault = "pairing";
      c.expect_error = "pad_segment_pairing";
      return;
    }
    default:
      return;  // valid
  }
}

// The sum, held at int64's limits instead of overflowing.
std::int64_t saturating_sum(const std::vector<std::int64_t>& v) {
  std::int64_t sum = 0;
  for (const std::int64_t x : v) {
    if (__builtin_add_overflow(sum, x, &sum))
      sum = x > 0 ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min();
  }
  return sum;
}

// Every field as it is; sizes are bounded by the input's length.
Case raw(ByteReader& r, const Budget& budget) {
  Case c;
  c.options.cp_world_size = r.svarint();
  c.options.causal_seq_alignment = r.svarint();
  c.options.full_seq_alignment = r.svarint();
  const std::uint8_t flags = r.byte();
  c.options.pad_for_cuda_graphs = flags & 1;
  c.options.is_image_batch = flags & 2;
  c.options.pad_segment_only_when_padded = flags & 4;
  c.marks = {r.svarint(), r.svarint(), r.svarint(), r.svarint()};
  c.row_bytes = 1 + static_cast<std::size_t>(r.varint() % 64);
  c.data_seed = r.u64();
  const std::uint64_t samples = r.varint();
  for (std::uint64_t s = 0; s < samples && !r.empty(); ++s) c.layout.sample_lens.push_back(r.svarint());
  const std::uint64_t splits = r.varint();
  for (std::uint64_t j = 0; j < splits && !r.empty(); ++j) c.layout.split_lens.push_back(r.svarint());
  const std::uint64_t modes = r.varint();
  for (std::uint64_t j = 0; j < modes && !r.empty(); ++j) {
    const std::uint8_t mode = r.byte();
    c.layout.attn_modes.push_back(mode == 0 ? "causal" : mode == 1 ? "full" : mode == 2 ? "" : "causal ");
  }
  const std::uint64_t und = r.varint();
  if (und == 0) {
    // The usual case: every causal position, in order (when there are few
    // enough positions to list).
    std::int64_t positions = 0;
    for (const std::int64_t l : c.layout.split_lens)
      positions += std::min<std::int64_t>(std::max<std::int64_t>(l, 0), budget.rows + 1);
    if (positions <= budget.rows && c.layout.attn_modes.size() == c.layout.split_lens.size())
      protocol::list_und_tokens(c);
  } else {
    for (std::uint64_t k = 1; k < und && !r.empty(); ++k) c.layout.und_token_indexes.push_back(r.svarint());
  }
  const std::int64_t sum = saturating_sum(c.layout.sample_lens);
  const std::int64_t delta = r.svarint();
  c.rows = delta == 0 ? sum : delta;  // 0: the sum of sample_lens; else the row count itself
  return c;
}

void put_varint(std::vector<std::uint8_t>& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<std::uint8_t>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<std::uint8_t>(v));
}

void put_svarint(std::vector<std::uint8_t>& out, std::int64_t v) {
  put_varint(out, (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63));
}

}  // namespace

Case decode_case(const std::uint8_t* data, std::size_t size, const Budget& budget) {
  ByteReader r(data, size);
  if (r.byte() & 1) return raw(r, budget);
  Case c = structured(r, budget);
  plant(r, c);
  return c;
}

std::vector<std::uint8_t> encode_raw(const Case& c) {
  std::vector<std::uint8_t> out{1};
  put_svarint(out, c.options.cp_world_size);
  put_svarint(out, c.options.causal_seq_alignment);
  put_svarint(out, c.options.full_seq_alignment);
  out.push_back(static_cast<std::uint8_t>((c.options.pad_for_cuda_graphs ? 1 : 0) | (c.options.is_image_batch ? 2 : 0) |
                                          (c.options.pad_segment_only_when_padded ? 4 : 0)));
  for (const std::int64_t m : {c.marks.image_causal, c.marks.image_full, c.marks.video_causal, c.marks.video_full}) {
    put_svarint(out, m);
  }
  put_varint(out, (c.row_bytes - 1) % 64);
  for (int i = 7; i >= 0; --i) out.push_back(static_cast<std::uint8_t>(c.data_seed >> (8 * i)));
  put_varint(out, c.layout.sample_lens.size());
  for (const std::int64_t s : c.layout.sample_lens) put_svarint(out, s);
  put_varint(out, c.layout.split_lens.size());
  for (const std::int64_t l : c.layout.split_lens) put_svarint(out, l);
  put_varint(out, c.layout.attn_modes.size());
  for (const std::string& m : c.layout.attn_modes)
    out.push_back(m == "causal" ? 0 : m == "full" ? 1 : m.empty() ? 2 : 3);
  put_varint(out, c.layout.und_token_indexes.size() + 1);
  for (const std::int64_t u : c.layout.und_token_indexes) put_svarint(out, u);
  const std::int64_t sum = saturating_sum(c.layout.sample_lens);  // as raw() sums
  put_svarint(out, c.rows == sum ? 0 : c.rows);  // 0 stands for the sum (so a 0-row mismatch is not representable)
  return out;
}

bool small_enough(const Case& c, const Budget& budget) {
  const auto width = static_cast<std::int64_t>(c.row_bytes);
  if (c.rows < 0 || c.rows > budget.rows || c.rows > budget.bytes / width) return false;
  if (c.options.cp_world_size > 64) return false;  // the targets visit every rank
  try {
    ref::validate_options(c.options, c.marks);
    ref::validate_layout(c.layout);
  } catch (const ref::Error&) {
    return true;  // rejected before any row is allocated
  }
  std::int64_t sum = 0;
  for (const std::int64_t s : c.layout.sample_lens) {
    if (s > budget.rows || (sum += s) > budget.rows) return false;
  }
  if (sum != c.rows) return true;  // a length_mismatch, found before anything is allocated
  // The padded streams as the catalogue restates them, from the split lengths
  // alone (no metadata is built for a case within the budget).
  const auto [causal, full] = properties::expected_stream_lengths(c);
  const std::int64_t limit = std::numeric_limits<std::int32_t>::max();
  if (causal <= limit && full <= limit && causal + full <= budget.rows &&
      c.rows + causal + full <= budget.bytes / width) {
    return true;
  }
  // Past the budget: kept when the reference's planning refuses the case
  // (overflow, pad_segment_pairing, ...), which it does before allocating any
  // row; the metadata this takes is within the budget (the rows are).
  try {
    ref::plan_pack(ref::prepare_metadata(c.layout), c.rows, c.options, c.marks);
  } catch (const ref::Error&) {
    return true;
  }
  return false;
}

void report(const std::string& what, const Case& c) {
  std::fprintf(stderr, "\nseqpack-fuzz: %s\ncase: %s\n", what.c_str(), protocol::to_json(c, "fuzz").c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace seqpack::fuzz

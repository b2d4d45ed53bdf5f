// Explained diffs: how the reference derives a stream's length from a case,
// restated with the property suite's arithmetic (properties/spec.hpp), so
// that a port author sees which rule gave the expected value.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <sstream>

#include "seqpack/conformance/verdict.hpp"
#include "seqpack/properties/spec.hpp"

namespace seqpack::conformance {

// The runner speaks the protocol's vocabulary (seqpack/protocol/).
using namespace seqpack::protocol;  // NOLINT(google-build-using-namespace)
namespace {

namespace sp = seqpack::properties;

std::string num(std::int64_t v) { return v >= sp::kPastInt64 ? std::string("past int64") : std::to_string(v); }

// Whether a differing field is a length, an offset or a mark.
bool is_shape_field(const std::string& path, const std::string& kind) {
  if (kind == "length") return true;
  for (const char* k : {"offsets", "max_", "graph_bounds", "num_", "pad_segment", "has_pad_segment", "padded"}) {
    if (path.find(k) != std::string::npos) return true;
  }
  return false;
}

// A row's name in a view (PROTOCOL.md, "Views" and "Foreign rows"), read:
// padding, a packed row, or row k of a foreign source and the call it feeds.
std::string row_name(std::int64_t v) {
  constexpr std::int64_t kSource = std::int64_t{1} << 26;
  if (v == -1) return "padding";
  if (v >= 0 && v < kSource) return "packed row " + std::to_string(v);
  if (v < 0 || v >= 8 * kSource) return "no row (not a name the protocol gives)";
  static const char* const kWho[] = {"",
                                     "set_und_seq's input",
                                     "set_gen_seq's input",
                                     "set_all_seq's input",
                                     "from_all_seq's input",
                                     "the causal / und input of from_mode_splits and from_und_gen_splits",
                                     "the full / gen input of from_mode_splits and from_und_gen_splits",
                                     "from_all_seq's input on a CP shard"};
  return "row " + std::to_string(v % kSource) + " of " + kWho[v / kSource] + " (source " + std::to_string(v / kSource) +
         ")";
}

// Reads "expected A, port B" of two integers; false for any other text.
bool two_values(const std::string& rest, std::int64_t* want, std::int64_t* got) {
  std::int64_t a = 0, b = 0;
  char tail = 0;
  if (std::sscanf(rest.c_str(), "expected %" SCNd64 ", port %" SCNd64 "%c", &a, &b, &tail) != 2) return false;
  *want = a;
  *got = b;
  return true;
}

// For a row of a view that calls setters or derives packs: which call wrote
// the expected row and which one the port's, and what the view did in order.
std::string explain_rows(const std::string& path, const std::string& rest, const std::string& indent) {
  if (path.rfind("views.", 0) != 0 || path.find("rows[") == std::string::npos) return "";
  std::int64_t want = 0, got = 0;
  if (!two_values(rest, &want, &got)) return "";
  std::ostringstream out;
  out << indent << "the rows by name (PROTOCOL.md \"Views\", \"Foreign rows\"):\n"
      << indent << "  written, and read by the reference: " << want << " = " << row_name(want) << "\n"
      << indent << "  read from the port: " << got << " = " << row_name(got) << "\n";
  if (path.rfind("views.setters.after_set_und_gen.", 0) == 0) {
    out << indent << "  the calls: set_und_seq (source 1), then set_gen_seq (source 2), then this summary\n";
  } else if (path.rfind("views.setters.after_set_all.", 0) == 0) {
    out << indent
        << "  the calls: set_und_seq (source 1), set_gen_seq (source 2), then set_all_seq (source 3), then this "
           "summary: set_all_seq writes the real rows, padding rows keep sources 1 and 2\n";
  }
  return out.str();
}

// Each rank's contiguous shard of a padded stream of `length` rows whose
// first `real` rows are real (NOTES.md section 8).
void explain_shards(std::ostream& out, const std::string& indent, std::int64_t cp, const std::int64_t length[2],
                    const std::int64_t real[2]) {
  if (cp < 2 || cp > 64 || length[0] % cp != 0 || length[1] % cp != 0) return;
  out << indent << "  CP shards, " << cp << " ranks, contiguous slices of each padded stream:\n";
  for (std::int64_t r = 0; r < cp; ++r) {
    out << indent << "    rank " << r << ":";
    for (const int s : {0, 1}) {
      const std::int64_t per = length[s] / cp, from = r * per, to = from + per;
      const std::int64_t reals = std::max<std::int64_t>(0, std::min(to, real[s]) - from);
      out << (s == 0 ? " causal" : "; full") << " rows " << from << " to " << to << " (" << reals << " real, "
          << per - reals << " padding)";
    }
    out << "\n";
  }
}

}  // namespace

std::string explain_difference(const Case& c, const std::string& diff, const std::string& indent) {
  std::string path = diff.substr(0, diff.find(": "));
  if (path.rfind("session step ", 0) == 0) return "";  // a session's steps carry marks over: see the case itself
  std::string rows =
      diff.find(": ") == std::string::npos ? "" : explain_rows(path, diff.substr(diff.find(": ") + 2), indent);
  const bool cp_view = c.options.cp_world_size > 1 && path.find("cp_") != std::string::npos;
  if (!is_shape_field(path, difference_kind(diff)) && !cp_view) return rows;
  const auto& L = c.layout;
  const auto& o = c.options;
  if (o.cp_world_size < 1 || o.causal_seq_alignment < 1 || o.full_seq_alignment < 1) return rows;
  // Real tokens and split counts per stream (the full stream: every mode but causal).
  std::int64_t tokens[2] = {0, 0};
  std::int64_t splits[2] = {0, 0};
  for (std::size_t j = 0; j < std::min(L.split_lens.size(), L.attn_modes.size()); ++j) {
    const int s = L.attn_modes[j] == "causal" ? 0 : 1;
    tokens[s] += std::max<std::int64_t>(0, L.split_lens[j]);
    ++splits[s];
  }
  // The pad segment (NOTES.md section 4, steps 4 to 6).
  const std::int64_t align[2] = {o.causal_seq_alignment, o.full_seq_alignment};
  bool segment = splits[0] == splits[1] && splits[0] > 0;
  std::string segment_why;
  if (!segment) {
    segment_why = splits[0] == 0 && splits[1] == 0 ? "no splits"
                  : splits[0] == splits[1]         ? "no splits"
                                           : std::to_string(splits[0]) + " causal and " + std::to_string(splits[1]) +
                                                 " full splits do not pair";
  } else {
    segment_why = std::to_string(splits[0]) + " causal and " + std::to_string(splits[1]) + " full splits pair";
    if (o.pad_segment_only_when_padded) {
      const bool padded = o.pad_for_cuda_graphs ||
                          sp::spec_padded(tokens[0], o.cp_world_size, false, align[0]) != tokens[0] ||
                          sp::spec_padded(tokens[1], o.cp_world_size, false, align[1]) != tokens[1];
      if (!padded) {
        segment = false;
        segment_why += ", but pad_segment_only_when_padded and neither stream is padded";
      } else {
        segment_why += o.pad_for_cuda_graphs ? " (pad_segment_only_when_padded: graphs pad)"
                                             : " (pad_segment_only_when_padded: a stream is padded)";
      }
    }
  }
  const std::int64_t reserve = segment ? 1 : 0;
  std::ostringstream out;
  out << indent << "how the reference derives the streams (NOTES.md sections 3 and 4):\n";
  out << indent << "  pad segment: " << (segment ? "yes" : "no") << " (" << segment_why << ")\n";
  std::int64_t length[2] = {0, 0};
  const std::int64_t mark_before[2] = {o.is_image_batch ? c.marks.image_causal : c.marks.video_causal,
                                       o.is_image_batch ? c.marks.image_full : c.marks.video_full};
  for (const int s : {0, 1}) {
    const std::int64_t need = tokens[s] + reserve;
    const std::int64_t effective = sp::spec_lcm(align[s], o.cp_world_size);
    out << indent << "  " << (s == 0 ? "causal" : "full") << " stream: " << tokens[s] << " real tokens";
    if (reserve) out << " + 1 pad segment row = " << need;
    out << "; effective alignment lcm(" << (s == 0 ? "causal" : "full") << "_seq_alignment " << align[s] << ", cp "
        << o.cp_world_size << ") = " << num(effective);
    std::int64_t step = effective;
    if (o.pad_for_cuda_graphs) {
      const std::int64_t bucket = sp::spec_bucket(need);
      step = sp::spec_step(need, o.cp_world_size, true, align[s]);
      out << "; CUDA-graph bucket " << bucket << " for " << need << " rows, step lcm(" << num(effective) << ", "
          << bucket << ") = " << num(step);
    }
    const std::int64_t padded = sp::spec_padded(need, o.cp_world_size, o.pad_for_cuda_graphs, align[s]);
    out << "; padded to " << num(padded) << (padded == need ? " (already a multiple)" : "");
    length[s] = padded;
    if (o.pad_for_cuda_graphs) {
      const std::int64_t mark = std::max(mark_before[s], padded);
      out << "; high-water mark (" << (o.is_image_batch ? "image " : "video ") << (s == 0 ? "causal" : "full") << ") "
          << mark_before[s] << " -> " << num(mark) << (mark_before[s] > padded ? " (the mark wins)" : "");
      length[s] = mark;
    }
    out << "; length " << num(length[s]) << "\n";
  }
  if (segment && length[0] < sp::kPastInt64 && length[1] < sp::kPastInt64) {
    out << indent << "  all_seq_padded and sample_offsets end at causal + full: " << length[0] << " + " << length[1]
        << " = " << length[0] + length[1] << "\n";
  }
  if (length[0] < sp::kPastInt64 && length[1] < sp::kPastInt64)
    explain_shards(out, indent, o.cp_world_size, length, tokens);
  return out.str() + rows;
}

}  // namespace seqpack::conformance

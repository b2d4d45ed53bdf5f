// Readable text for cases and packs (render.hpp).
#include "seqpack/protocol/render.hpp"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "seqpack/protocol/limits.hpp"
#include "seqpack/protocol/protocol.hpp"

namespace seqpack::protocol {
namespace {

namespace ref = seqpack::reference;

template <typename T>
std::string list(const std::vector<T>& values, std::size_t limit = 24) {
  std::string s = "[";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i == limit && values.size() > limit + 4) {
      s += " ... (" + std::to_string(values.size() - limit - 1) + " more) " + std::to_string(values.back());
      break;
    }
    s += (i ? " " : "") + std::to_string(values[i]);
  }
  return s + "]";
}

std::string stream_rows(const ref::Rows& rows) {
  std::vector<std::string> cells;
  for (std::size_t r = 0; r < rows.rows(); ++r) {
    std::uint32_t tag = 0;
    if (rows.row_bytes() >= sizeof tag) std::memcpy(&tag, rows.row(r), sizeof tag);
    cells.push_back(tag == 0 ? "." : std::to_string(tag - 1));
  }
  std::string s = "[";
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (i == 24 && cells.size() > 28) {
      s += " ... (" + std::to_string(cells.size() - 25) + " more) " + cells.back();
      break;
    }
    s += (i ? " " : "") + cells[i];
  }
  return s + "]";
}

}  // namespace

void print_case(std::ostream& out, const ref::Layout& layout, const ref::Options& o) {
  std::string modes;
  for (const auto& m : layout.attn_modes) modes += (modes.empty() ? "" : " ") + m.substr(0, 1);
  out << "  layout   samples " << list(layout.sample_lens) << "  splits " << list(layout.split_lens) << "  modes ["
      << modes << "]\n"
      << "  options  cp=" << o.cp_world_size << " causal_align=" << o.causal_seq_alignment
      << " full_align=" << o.full_seq_alignment << " graphs=" << (o.pad_for_cuda_graphs ? "on" : "off")
      << (o.pad_for_cuda_graphs ? (o.is_image_batch ? " (image)" : " (video)") : "")
      << " pad_segment_only_when_padded=" << (o.pad_segment_only_when_padded ? "yes" : "no") << "\n";
}

void print_pack(std::ostream& out, const ref::Pack& pack) {
  const ref::Metadata& m = *pack.meta;
  out << "  causal   " << pack.causal_seq.rows() << " rows (" << m.num_causal_tokens << " real) "
      << stream_rows(pack.causal_seq) << "\n"
      << "           sample ids " << list(pack.causal_sample_ids) << "  offsets " << list(m.causal_seq_offsets)
      << "  max " << m.max_causal_len << "\n"
      << "  full     " << pack.full_only_seq.rows() << " rows (" << m.num_full_tokens << " real) "
      << stream_rows(pack.full_only_seq) << "\n"
      << "           sample ids " << list(pack.full_only_sample_ids) << "  offsets " << list(m.full_only_seq_offsets)
      << "  max " << m.max_full_len << "\n"
      << "  samples  offsets " << list(m.sample_offsets) << "  max " << m.max_sample_len << "\n";
  if (pack.pad_segment) {
    const ref::PadSegment& p = *pack.pad_segment;
    out << "  pad seg  causal " << list(p.causal_seq_offsets) << " max " << p.max_causal_len << " | full "
        << list(p.full_only_seq_offsets) << " max " << p.max_full_len << " | samples " << list(p.sample_offsets)
        << " max " << p.max_sample_len << "\n";
  } else {
    out << "  pad seg  none\n";
  }
}

ref::Rows numbered_rows(std::int64_t n) {
  ref::Rows rows(static_cast<std::size_t>(n), 4);
  for (std::size_t r = 0; r < rows.rows(); ++r) {
    const auto v = static_cast<std::uint32_t>(r + 1);
    std::memcpy(rows.row(r), &v, 4);
  }
  return rows;
}

void render_case_body(std::ostream& out, const Case& c) {
  print_case(out, c.layout, c.options);
  if (c.options.pad_for_cuda_graphs) {
    out << "  marks    image " << c.marks.image_causal << "/" << c.marks.image_full << "  video "
        << c.marks.video_causal << "/" << c.marks.video_full << " (causal/full, before the call)\n";
  }
  try {
    // The size is decided before anything per token is built.
    const CaseShape planned = plan_case(c);
    if (const auto big = too_large(c, planned, oracle_row_limit(), c.row_bytes)) {
      out << "  error    too_large: " << *big << "\n";
      return;
    }
    ref::validate_options(c.options, c.marks);
    ref::validate_layout(c.layout);
    const ref::Metadata meta = ref::prepare_metadata(c.layout);
    const ref::PackShape shape = ref::plan_pack(meta, c.rows, c.options, c.marks);
    if (shape.causal_len + shape.full_len > kRenderRows || c.rows > kRenderRows) {
      out << "  pack     " << shape.causal_len << " causal and " << shape.full_len
          << " full rows: too large to render (the limit is " << kRenderRows << " rows)\n";
      return;
    }
    ref::GraphMarks marks = c.marks;
    const ref::Pack pack = ref::build_pack(numbered_rows(c.rows), c.layout, c.options, marks);
    print_pack(out, pack);
  } catch (const ref::Error& e) {
    const std::string cls = ref::to_string(e.code()), what = e.what();
    out << "  error    " << (what.rfind(cls + ":", 0) == 0 ? what : cls + ": " + what) << "\n";
  } catch (const std::bad_alloc&) {
    out << "  error    too large to render\n";
  }
}

}  // namespace seqpack::protocol

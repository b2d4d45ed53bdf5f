// Case data, building, and the JSON case files.
#include "seqpack/properties/case.hpp"

#include <nlohmann/json.hpp>

#include <cstring>
#include <stdexcept>

#include "seqpack/reference/pack.hpp"

namespace seqpack::properties {
namespace {

using nlohmann::json;

void plant(std::byte* row, std::size_t width, std::size_t r) {
  const std::uint64_t nan64 = 0x7ff80000deadbeefull, neg_zero64 = 0x8000000000000000ull;
  const std::uint32_t nan32 = 0x7fc0beefu, snan32 = 0x7f800001u, neg_zero32 = 0x80000000u;
  const std::uint16_t nan16 = 0x7e01, neg_zero16 = 0x8000;
  switch (r % 5) {
    case 0:
      if (width >= 8) std::memcpy(row, &nan64, 8);
      else if (width >= 4) std::memcpy(row, &nan32, 4);
      else if (width >= 2) std::memcpy(row, &nan16, 2);
      break;
    case 1:
      if (width >= 8) std::memcpy(row, &neg_zero64, 8);
      else if (width >= 4) std::memcpy(row, &neg_zero32, 4);
      else if (width >= 2) std::memcpy(row, &neg_zero16, 2);
      break;
    case 2:
      if (width >= 4) std::memcpy(row, &snan32, 4);
      break;
    default:
      break;
  }
}

template <typename T>
T get(const json& j, const char* key, const char* where) {
  if (!j.contains(key)) throw std::runtime_error(std::string("case: missing field ") + where + "." + key);
  try {
    return j.at(key).get<T>();
  } catch (const json::exception& e) {
    throw std::runtime_error(std::string("case: field ") + where + "." + key + ": " + e.what());
  }
}

template <typename T>
T get_or(const json& j, const char* key, T fallback, const char* where) {
  return j.contains(key) ? get<T>(j, key, where) : fallback;
}

}  // namespace

reference::Rows case_rows(const Case& c) {
  reference::Rows rows(static_cast<std::size_t>(c.rows < 0 ? 0 : c.rows), c.row_bytes);
  std::uint64_t s = c.data_seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
  for (std::size_t i = 0; i < rows.size_bytes(); ++i) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    rows.data()[i] = static_cast<std::byte>(s >> 24);
  }
  for (std::size_t r = 0; r < rows.rows(); ++r) plant(rows.row(r), rows.row_bytes(), r);
  return rows;
}

reference::Pack build_case(const Case& c, reference::GraphMarks* marks_after) {
  reference::GraphMarks marks = c.marks;
  reference::Pack pack = reference::build_pack(case_rows(c), c.layout, c.options, marks);
  if (marks_after) *marks_after = marks;
  return pack;
}

std::string to_json(const Case& c, const std::string& id) {
  const auto& o = c.options;
  json j = {
      {"type", "case"},
      {"id", id},
      {"layout",
       {{"sample_lens", c.layout.sample_lens},
        {"split_lens", c.layout.split_lens},
        {"attn_modes", c.layout.attn_modes},
        {"und_token_indexes", c.layout.und_token_indexes}}},
      {"rows", c.rows},
      {"options",
       {{"cp_world_size", o.cp_world_size},
        {"pad_for_cuda_graphs", o.pad_for_cuda_graphs},
        {"is_image_batch", o.is_image_batch},
        {"full_seq_alignment", o.full_seq_alignment},
        {"causal_seq_alignment", o.causal_seq_alignment},
        {"pad_segment_only_when_padded", o.pad_segment_only_when_padded}}},
      {"graph_bounds",
       {{"image", {c.marks.image_causal, c.marks.image_full}}, {"video", {c.marks.video_causal, c.marks.video_full}}}},
      {"row_bytes", c.row_bytes},
      {"data_seed", c.data_seed},
  };
  if (!c.expect_error.empty()) j["expect_error"] = c.expect_error;
  return j.dump();
}

Case case_from_json(const std::string& text) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw std::runtime_error(std::string("case: not JSON: ") + e.what());
  }
  if (!j.is_object()) throw std::runtime_error("case: not a JSON object");
  Case c;
  const json layout = get<json>(j, "layout", "case");
  c.layout.sample_lens = get<std::vector<std::int64_t>>(layout, "sample_lens", "layout");
  c.layout.split_lens = get<std::vector<std::int64_t>>(layout, "split_lens", "layout");
  c.layout.attn_modes = get<std::vector<std::string>>(layout, "attn_modes", "layout");
  c.layout.und_token_indexes = get<std::vector<std::int64_t>>(layout, "und_token_indexes", "layout");
  c.rows = get<std::int64_t>(j, "rows", "case");
  const json options = get_or<json>(j, "options", json::object(), "case");
  c.options.cp_world_size = get_or<std::int64_t>(options, "cp_world_size", 1, "options");
  c.options.pad_for_cuda_graphs = get_or<bool>(options, "pad_for_cuda_graphs", false, "options");
  c.options.is_image_batch = get_or<bool>(options, "is_image_batch", false, "options");
  c.options.full_seq_alignment = get_or<std::int64_t>(options, "full_seq_alignment", 1, "options");
  c.options.causal_seq_alignment = get_or<std::int64_t>(options, "causal_seq_alignment", 1, "options");
  c.options.pad_segment_only_when_padded = get_or<bool>(options, "pad_segment_only_when_padded", false, "options");
  if (j.contains("graph_bounds")) {
    const json g = get<json>(j, "graph_bounds", "case");
    const auto image = get<std::vector<std::int64_t>>(g, "image", "graph_bounds");
    const auto video = get<std::vector<std::int64_t>>(g, "video", "graph_bounds");
    if (image.size() != 2 || video.size() != 2) throw std::runtime_error("case: graph_bounds needs [causal, full] pairs");
    c.marks = {image[0], image[1], video[0], video[1]};
  }
  c.row_bytes = get_or<std::size_t>(j, "row_bytes", 4, "case");
  c.data_seed = get_or<std::uint64_t>(j, "data_seed", 0, "case");
  c.expect_error = get_or<std::string>(j, "expect_error", "", "case");
  return c;
}

}  // namespace seqpack::properties

// The `seqpack._core` extension: the reference (reference/) and the protocol's
// oracle and comparison (conformance/) over NumPy arrays of bytes. It holds no
// logic of its own: rows cross as uint8 arrays [rows, row_bytes] and the
// Python package (python/seqpack/) turns them back into the caller's dtype,
// shape and array type. The only translation unit that includes pybind11.
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "seqpack/conformance/verdict.hpp"
#include "seqpack/protocol/case.hpp"
#include "seqpack/protocol/consequence.hpp"
#include "seqpack/protocol/protocol.hpp"
#include "seqpack/reference/reference.hpp"

namespace py = pybind11;
namespace ref = seqpack::reference;
namespace conf = seqpack::protocol;

namespace {

using Bytes = py::array_t<std::uint8_t, py::array::c_style | py::array::forcecast>;

[[noreturn]] void bad_argument(const std::string& field, const std::string& detail) {
  throw ref::Error(ref::Errc::invalid_argument, field, detail);
}

// A [rows, row_bytes] uint8 array as Rows (a copy).
ref::Rows to_rows(const Bytes& a, const char* field) {
  if (a.ndim() != 2)
    bad_argument(field,
                 "expected a 2-D uint8 array [rows, row_bytes], got " + std::to_string(a.ndim()) + " dimensions");
  const auto rows = static_cast<std::size_t>(a.shape(0)), width = static_cast<std::size_t>(a.shape(1));
  ref::Rows out(rows, width);
  if (out.size_bytes() != 0) std::memcpy(out.data(), a.data(), out.size_bytes());
  return out;
}

py::array_t<std::uint8_t> from_rows(const ref::Rows& r) {
  py::array_t<std::uint8_t> out({static_cast<py::ssize_t>(r.rows()), static_cast<py::ssize_t>(r.row_bytes())});
  if (r.size_bytes() != 0) std::memcpy(out.mutable_data(), r.data(), r.size_bytes());
  return out;
}

template <typename T>
py::array_t<T> array_of(const std::vector<T>& v) {
  py::array_t<T> out(static_cast<py::ssize_t>(v.size()));
  if (!v.empty()) std::memcpy(out.mutable_data(), v.data(), v.size() * sizeof(T));
  return out;
}

ref::PositionIds to_ids(const py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>& a) {
  ref::PositionIds ids;
  if (a.ndim() == 1) {
    ids.len = static_cast<std::size_t>(a.shape(0));
  } else if (a.ndim() == 2) {
    ids.two_dimensional = true;
    ids.axes = static_cast<std::size_t>(a.shape(0));
    ids.len = static_cast<std::size_t>(a.shape(1));
  } else {
    bad_argument("position_ids", "expected 1 or 2 dimensions, got " + std::to_string(a.ndim()));
  }
  ids.values.assign(a.data(), a.data() + a.size());
  return ids;
}

py::array_t<std::int64_t> from_ids(const ref::PositionIds& ids) {
  std::vector<py::ssize_t> shape;
  if (ids.two_dimensional) shape.push_back(static_cast<py::ssize_t>(ids.axes));
  shape.push_back(static_cast<py::ssize_t>(ids.len));
  py::array_t<std::int64_t> out(shape);
  if (!ids.values.empty()) std::memcpy(out.mutable_data(), ids.values.data(), ids.values.size() * sizeof(std::int64_t));
  return out;
}

// Refuses, before anything is allocated, a pack of more than `rows` padded
// rows or 2^34 bytes: a user's marks or alignments can ask for billions.
void check_size(std::int64_t rows, std::size_t row_bytes, const char* field) {
  const std::int64_t limit = conf::oracle_row_limit();
  constexpr std::int64_t kMaxBytes = std::int64_t{1} << 34;
  if (rows > limit || (row_bytes != 0 && rows > kMaxBytes / static_cast<std::int64_t>(row_bytes))) {
    throw ref::Error(ref::Errc::invalid_argument, field,
                     std::to_string(rows) + " rows of " + std::to_string(row_bytes) +
                         " bytes exceed the binding's limit of " + std::to_string(limit) +
                         " rows and 2^34 bytes (seqpack.set_row_limit)");
  }
}

ref::Pack build(const Bytes& packed, const ref::Layout& layout, const ref::Options& options, ref::GraphMarks& marks,
                const std::shared_ptr<ref::Metadata>& prepared) {
  const ref::Rows rows = to_rows(packed, "packed");
  // The plan decides every length without allocating; a refused input goes to
  // build_pack, which reports it in the protocol's order of checks.
  ref::PackShape shape;
  try {
    ref::validate_options(options, marks);
    if (prepared && !prepared->matches_layout(layout)) throw ref::Error(ref::Errc::metadata_mismatch, "", "");
    shape = ref::plan_pack(prepared ? *prepared : ref::prepare_metadata(layout), static_cast<std::int64_t>(rows.rows()),
                           options, marks);
  } catch (const ref::Error&) {
    return ref::build_pack(rows, layout, options, marks, prepared);
  }
  check_size(shape.causal_len + shape.full_len, rows.row_bytes(), "rows");
  return ref::build_pack(rows, layout, options, marks, prepared);
}

std::string marks_repr(const ref::GraphMarks& m) {
  return "GraphMarks(image_causal=" + std::to_string(m.image_causal) + ", image_full=" + std::to_string(m.image_full) +
         ", video_causal=" + std::to_string(m.video_causal) + ", video_full=" + std::to_string(m.video_full) + ")";
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "seqpack's reference and oracle (C++), over uint8 row arrays; use the seqpack package, not this module";

  // Every reference::Error becomes the seqpack.errors class of its error class.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ref::Error& e) {
      py::object errors = py::module_::import("seqpack.errors");
      py::object exc = errors.attr("from_reference")(ref::to_string(e.code()), e.field(), std::string(e.what()));
      PyErr_SetObject(exc.get_type().ptr(), exc.ptr());
    }
  });

  py::class_<ref::Layout>(m, "Layout")
      .def(py::init([](std::vector<std::int64_t> sample_lens, std::vector<std::int64_t> split_lens,
                       std::vector<std::string> attn_modes, std::vector<std::int64_t> und_token_indexes) {
             return ref::Layout{std::move(sample_lens), std::move(split_lens), std::move(attn_modes),
                                std::move(und_token_indexes)};
           }),
           py::arg("sample_lens"), py::arg("split_lens"), py::arg("attn_modes"), py::arg("und_token_indexes"))
      .def_readwrite("sample_lens", &ref::Layout::sample_lens)
      .def_readwrite("split_lens", &ref::Layout::split_lens)
      .def_readwrite("attn_modes", &ref::Layout::attn_modes)
      .def_readwrite("und_token_indexes", &ref::Layout::und_token_indexes);
  m.def("packer_und_tokens", &ref::packer_und_tokens, py::arg("layout"));

  py::class_<ref::Options>(m, "Options")
      .def(py::init([](std::int64_t cp, bool graphs, bool image, std::int64_t full_a, std::int64_t causal_a,
                       bool only_when_padded) {
             return ref::Options{cp, graphs, image, full_a, causal_a, only_when_padded};
           }),
           py::arg("cp_world_size") = 1, py::arg("pad_for_cuda_graphs") = false, py::arg("is_image_batch") = false,
           py::arg("full_seq_alignment") = 1, py::arg("causal_seq_alignment") = 1,
           py::arg("pad_segment_only_when_padded") = false)
      .def_readwrite("cp_world_size", &ref::Options::cp_world_size)
      .def_readwrite("pad_for_cuda_graphs", &ref::Options::pad_for_cuda_graphs)
      .def_readwrite("is_image_batch", &ref::Options::is_image_batch)
      .def_readwrite("full_seq_alignment", &ref::Options::full_seq_alignment)
      .def_readwrite("causal_seq_alignment", &ref::Options::causal_seq_alignment)
      .def_readwrite("pad_segment_only_when_padded", &ref::Options::pad_segment_only_when_padded);

  py::class_<ref::GraphMarks>(m, "GraphMarks")
      .def(py::init([](std::int64_t ic, std::int64_t iff, std::int64_t vc, std::int64_t vf) {
             return ref::GraphMarks{ic, iff, vc, vf};
           }),
           py::arg("image_causal") = 0, py::arg("image_full") = 0, py::arg("video_causal") = 0,
           py::arg("video_full") = 0)
      .def_readwrite("image_causal", &ref::GraphMarks::image_causal)
      .def_readwrite("image_full", &ref::GraphMarks::image_full)
      .def_readwrite("video_causal", &ref::GraphMarks::video_causal)
      .def_readwrite("video_full", &ref::GraphMarks::video_full)
      .def("copy", [](const ref::GraphMarks& g) { return g; })
      .def("__eq__", [](const ref::GraphMarks& a, const ref::GraphMarks& b) { return a == b; })
      .def("__repr__", &marks_repr);

  py::class_<ref::Metadata, std::shared_ptr<ref::Metadata>>(m, "Metadata")
      .def_readonly("sample_lens", &ref::Metadata::sample_lens)
      .def_readonly("split_lens", &ref::Metadata::split_lens)
      .def_property_readonly("attn_modes",
                             [](const ref::Metadata& d) {
                               std::vector<std::string> out;
                               for (const auto mode : d.attn_modes) out.emplace_back(ref::to_string(mode));
                               return out;
                             })
      .def_property_readonly("sample_offsets", [](const ref::Metadata& d) { return array_of(d.sample_offsets); })
      .def_readonly("max_sample_len", &ref::Metadata::max_sample_len)
      .def_readonly("max_causal_len", &ref::Metadata::max_causal_len)
      .def_readonly("max_full_len", &ref::Metadata::max_full_len)
      .def_property_readonly("causal_indices", [](const ref::Metadata& d) { return array_of(d.causal_indices); })
      .def_property_readonly("full_indices", [](const ref::Metadata& d) { return array_of(d.full_indices); })
      .def_property_readonly("causal_seq_offsets",
                             [](const ref::Metadata& d) { return array_of(d.causal_seq_offsets); })
      .def_property_readonly("full_only_seq_offsets",
                             [](const ref::Metadata& d) { return array_of(d.full_only_seq_offsets); })
      .def_property_readonly("causal_sample_ids", [](const ref::Metadata& d) { return array_of(d.causal_sample_ids); })
      .def_property_readonly("full_only_sample_ids",
                             [](const ref::Metadata& d) { return array_of(d.full_only_sample_ids); })
      .def_readonly("num_causal_tokens", &ref::Metadata::num_causal_tokens)
      .def_readonly("num_full_tokens", &ref::Metadata::num_full_tokens)
      .def_property_readonly("num_samples", &ref::Metadata::num_samples)
      .def_property_readonly("num_tokens", &ref::Metadata::num_tokens)
      .def("matches_layout", &ref::Metadata::matches_layout, py::arg("layout"));

  py::class_<ref::PadSegment>(m, "PadSegment")
      .def_property_readonly("causal_seq_offsets",
                             [](const ref::PadSegment& s) { return array_of(s.causal_seq_offsets); })
      .def_readonly("max_causal_len", &ref::PadSegment::max_causal_len)
      .def_property_readonly("full_only_seq_offsets",
                             [](const ref::PadSegment& s) { return array_of(s.full_only_seq_offsets); })
      .def_readonly("max_full_len", &ref::PadSegment::max_full_len)
      .def_property_readonly("sample_offsets", [](const ref::PadSegment& s) { return array_of(s.sample_offsets); })
      .def_readonly("max_sample_len", &ref::PadSegment::max_sample_len);

  py::class_<ref::Pack>(m, "Pack")
      .def_property_readonly("meta", [](const ref::Pack& p) { return std::const_pointer_cast<ref::Metadata>(p.meta); })
      .def_readonly("max_num_tokens", &ref::Pack::max_num_tokens)
      .def_property_readonly("causal_seq", [](const ref::Pack& p) { return from_rows(p.causal_seq); })
      .def_property_readonly("full_only_seq", [](const ref::Pack& p) { return from_rows(p.full_only_seq); })
      .def_property_readonly("causal_sample_ids", [](const ref::Pack& p) { return array_of(p.causal_sample_ids); })
      .def_property_readonly("full_only_sample_ids",
                             [](const ref::Pack& p) { return array_of(p.full_only_sample_ids); })
      .def_readonly("pad_segment", &ref::Pack::pad_segment)
      .def_readonly("is_sharded", &ref::Pack::is_sharded)
      .def_readonly("num_causal_tokens_local", &ref::Pack::num_causal_tokens_local)
      .def_readonly("num_full_tokens_local", &ref::Pack::num_full_tokens_local);

  m.def("padded_size", &ref::padded_size, py::arg("n"), py::arg("cp_world_size") = 1,
        py::arg("pad_for_cuda_graphs") = false, py::arg("alignment") = 1);
  m.def("validate_options", &ref::validate_options, py::arg("options"), py::arg("marks") = ref::GraphMarks{});
  m.def("validate_layout", &ref::validate_layout, py::arg("layout"));
  m.def(
      "prepare_metadata",
      [](const ref::Layout& l) { return std::make_shared<ref::Metadata>(ref::prepare_metadata(l)); },
      py::arg("layout"));
  m.def(
      "plan_pack",
      [](const ref::Metadata& meta, std::int64_t rows, const ref::Options& o, const ref::GraphMarks& marks) {
        const ref::PackShape s = ref::plan_pack(meta, rows, o, marks);
        return py::make_tuple(s.causal_len, s.full_len, s.pad_segment, s.marks_after);
      },
      py::arg("meta"), py::arg("rows"), py::arg("options"), py::arg("marks"));
  m.def("build_pack", &build, py::arg("packed"), py::arg("layout"), py::arg("options"), py::arg("marks"),
        py::arg("prepared") = nullptr);

  m.def("set_und_seq", [](ref::Pack& p, const Bytes& v) { ref::set_und_seq(p, to_rows(v, "value")); });
  m.def("set_gen_seq", [](ref::Pack& p, const Bytes& v) { ref::set_gen_seq(p, to_rows(v, "value")); });
  m.def("get_causal_seq_padded", [](const ref::Pack& p) {
    const auto v = ref::get_causal_seq_padded(p);
    return py::make_tuple(from_rows(v.seq), array_of(v.offsets), v.max_len);
  });
  m.def("get_full_only_seq_padded", [](const ref::Pack& p) {
    const auto v = ref::get_full_only_seq_padded(p);
    return py::make_tuple(from_rows(v.seq), array_of(v.offsets), v.max_len);
  });
  m.def("has_pad_segment", &ref::has_pad_segment);
  m.def("get_all_seq", [](const ref::Pack& p) { return from_rows(ref::get_all_seq(p)); });
  m.def("get_all_seq_padded", [](const ref::Pack& p) {
    const auto v = ref::get_all_seq_padded(p);
    return py::make_tuple(from_rows(v.seq), array_of(v.offsets), v.max_len);
  });
  m.def("set_all_seq", [](ref::Pack& p, const Bytes& v) { ref::set_all_seq(p, to_rows(v, "value")); });
  m.def(
      "from_mode_splits",
      [](const Bytes& c, const Bytes& f, const ref::Pack& source, std::optional<bool> is_sharded) {
        return ref::from_mode_splits(to_rows(c, "causal_seq"), to_rows(f, "full_only_seq"), source, is_sharded);
      },
      py::arg("causal_seq"), py::arg("full_only_seq"), py::arg("source"), py::arg("is_sharded") = py::none());
  m.def("from_und_gen_splits", [](const Bytes& u, const Bytes& g, const ref::Pack& source) {
    return ref::from_und_gen_splits(to_rows(u, "und_seq"), to_rows(g, "gen_seq"), source);
  });
  m.def(
      "zeros_like",
      [](const ref::Pack& source, std::optional<std::size_t> row_bytes) {
        if (row_bytes) {
          check_size(static_cast<std::int64_t>(source.causal_seq.rows() + source.full_only_seq.rows()), *row_bytes,
                     "row_bytes");
        }
        return ref::zeros_like(source, row_bytes);
      },
      py::arg("source"), py::arg("row_bytes") = py::none());
  m.def("from_all_seq", [](const Bytes& packed, const ref::Pack& source) {
    return ref::from_all_seq(to_rows(packed, "packed"), source);
  });
  m.def("get_num_real_tokens", &ref::get_num_real_tokens);
  m.def("num_local_real_tokens", &ref::num_local_real_tokens, py::arg("num_real"), py::arg("rank"),
        py::arg("shard_len"));
  m.def("get_und_position_ids", [](const py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>& ids,
                                   const ref::Pack& p) { return from_ids(ref::get_und_position_ids(to_ids(ids), p)); });
  m.def("get_gen_position_ids", [](const py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>& ids,
                                   const ref::Pack& p) { return from_ids(ref::get_gen_position_ids(to_ids(ids), p)); });
  m.def("shard_pack", &ref::shard_pack, py::arg("pack"), py::arg("rank"), py::arg("world_size"));
  m.def("shard_pack_all", &ref::shard_pack_all, py::arg("pack"), py::arg("world_size"));
  m.def("gather_shards", &ref::gather_shards, py::arg("shards"));
  m.def(
      "shard_position_ids",
      [](const py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>& ids, const ref::Pack& p,
         std::int64_t rank,
         std::int64_t world) { return from_ids(ref::shard_position_ids(to_ids(ids), p, rank, world)); },
      py::arg("position_ids"), py::arg("pack"), py::arg("rank"), py::arg("world_size"));
  m.def(
      "set_row_limit", [](std::int64_t rows) { conf::set_oracle_row_limit(rows); }, py::arg("rows"));
  m.def("row_limit", &conf::oracle_row_limit);

  // --- the protocol: cases, the oracle's result lines, the runner's diff ------
  py::class_<conf::Case>(m, "Case")
      .def(py::init<>())
      .def_readwrite("layout", &conf::Case::layout)
      .def_readwrite("options", &conf::Case::options)
      .def_readwrite("marks", &conf::Case::marks)
      .def_readwrite("rows", &conf::Case::rows)
      .def_readwrite("row_bytes", &conf::Case::row_bytes)
      .def_readwrite("data_seed", &conf::Case::data_seed)
      .def_readwrite("expect_error", &conf::Case::expect_error)
      .def_readwrite("fault", &conf::Case::fault)
      .def(
          "to_json", [](const conf::Case& c, const std::string& id) { return conf::to_json(c, id); },
          py::arg("id") = "case")
      .def_static("from_json", &conf::case_from_json, py::arg("text"))
      .def_property_readonly("category", &conf::category)
      .def("list_und_tokens", &conf::list_und_tokens)
      .def("case_rows", [](const conf::Case& c) {
        check_size(c.rows, c.row_bytes, "rows");
        return from_rows(conf::case_rows(c));
      });
  m.def(
      "result_line",
      [](const conf::Case& c, const std::string& id, const std::vector<std::string>& views) {
        return conf::result_line(c, id, views);
      },
      py::arg("case"), py::arg("id"), py::arg("views"));
  m.def(
      "request_line",
      [](const conf::Case& c, const std::string& id, const std::vector<std::string>& views) {
        return conf::request_line(c, id, views);
      },
      py::arg("case"), py::arg("id"), py::arg("views"));
  m.def(
      "first_difference",
      [](const std::string& expected, const std::string& actual, const std::vector<std::string>& views) {
        return conf::first_difference(expected, actual, views);
      },
      py::arg("expected"), py::arg("actual"), py::arg("views"));
  m.def(
      "views_for",
      [](const conf::Case& c, const std::vector<std::string>& declared) { return conf::views_for(c, declared); },
      py::arg("case"), py::arg("declared"));
  m.def(
      "consequence",
      [](const conf::Case& c, const std::string& expected, const std::string& actual) {
        const auto v = conf::consequence_of(c, {}, expected, actual);
        return std::make_pair(std::string(seqpack::attention::to_string(v.severity)), v.line);
      },
      py::arg("case"), py::arg("expected"), py::arg("actual"),
      "(severity, line): what the module's pack does to attention against the reference's (seqpack conform's "
      "consequence line)");
  m.def(
      "explain",
      [](const conf::Case& c, const std::string& diff) {
        return seqpack::conformance::explain_difference(c, diff, "  ");
      },
      py::arg("case"), py::arg("diff"),
      "seqpack conform's derivation block for a first difference (how the reference derives a differing length, "
      "offset or mark; CP shards; rows by name), or \"\"");
  m.def("oracle_views", &conf::oracle_views);
  m.def("handle_line", &conf::handle_line, py::arg("line"));
}

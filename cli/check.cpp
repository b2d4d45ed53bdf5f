// `seqpack check` over the worked examples.
#include "check.hpp"

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "print.hpp"
#include "seqpack/conformance/runner.hpp"

#include <sstream>

namespace seqpack::cli {
namespace {

namespace ref = seqpack::reference;

struct Example {
  std::string name;
  std::string what;
  ref::Layout layout;
  ref::Options options;
};

ref::Layout layout_of(std::vector<std::int64_t> samples, std::vector<std::string> modes,
                      std::vector<std::int64_t> splits) {
  ref::Layout layout{std::move(samples), std::move(splits), std::move(modes), {}};
  std::int64_t pos = 0;
  for (std::size_t j = 0; j < layout.split_lens.size(); ++j) {
    if (layout.attn_modes[j] == "causal") {
      for (std::int64_t i = 0; i < layout.split_lens[j]; ++i) layout.und_token_indexes.push_back(pos + i);
    }
    pos += layout.split_lens[j];
  }
  return layout;
}

ref::Options opts(std::int64_t cp, std::int64_t causal_align, std::int64_t full_align, bool only_when_padded = false) {
  ref::Options o;
  o.cp_world_size = cp;
  o.causal_seq_alignment = causal_align;
  o.full_seq_alignment = full_align;
  o.pad_segment_only_when_padded = only_when_padded;
  return o;
}

std::vector<Example> examples() {
  const std::vector<std::string> pairs{"causal", "full", "causal", "full"};
  return {
      {"E1", "two samples, both streams aligned to 4", layout_of({2, 2}, pairs, {1, 1, 1, 1}), opts(1, 4, 4)},
      {"E2", "two samples, alignment 128", layout_of({112, 160}, pairs, {12, 100, 20, 140}), opts(1, 128, 128)},
      {"E3", "as E2 with alignment 1", layout_of({112, 160}, pairs, {12, 100, 20, 140}), opts(1, 1, 1)},
      {"E3b", "as E3, pad segment only when padded", layout_of({112, 160}, pairs, {12, 100, 20, 140}),
       opts(1, 1, 1, true)},
      {"E4", "full-only pack", layout_of({100}, {"full"}, {100}), opts(1, 1, 1)},
      {"E5", "full-only pack under cp 2", layout_of({5, 2}, {"full", "full"}, {5, 2}), opts(2, 1, 1)},
      {"E6a", "cp 2, alignments 2", layout_of({8, 9}, pairs, {3, 5, 2, 7}), opts(2, 2, 2)},
      {"E6b", "cp 2, empty causal splits", layout_of({5, 7}, pairs, {0, 5, 0, 7}), opts(2, 2, 2)},
      {"E6c", "cp 2, empty full splits", layout_of({3, 2}, pairs, {3, 0, 2, 0}), opts(2, 2, 2)},
      {"E7", "one sample with two pairs: pairing fails", layout_of({4}, pairs, {1, 1, 1, 1}), opts(1, 1, 1)},
  };
}

ref::Rows numbered(std::size_t n) {
  ref::Rows rows(n, 8);
  for (std::size_t r = 0; r < n; ++r) {
    const auto tag = static_cast<std::uint32_t>(r + 1);
    std::memcpy(rows.row(r), &tag, sizeof tag);
    std::memcpy(rows.row(r) + 4, &tag, sizeof tag);
  }
  return rows;
}

// Self-checks that need no expected values: round trips and CP identity.
int self_check(std::ostream& out, const ref::Pack& pack, const ref::Rows& input, std::int64_t cp) {
  int failed = 0;
  const auto check = [&](const char* name, const std::function<bool()>& ok) {
    bool passed = false;
    try {
      passed = ok();
    } catch (const ref::Error& e) {
      out << "    (" << e.what() << ")\n";
    }
    out << "  check    " << (passed ? "ok    " : "FAILED") << " " << name << "\n";
    failed += passed ? 0 : 1;
  };
  check("get_all_seq returns the input bit for bit", [&] { return ref::get_all_seq(pack) == input; });
  check("from_all_seq(get_all_seq) rebuilds both streams", [&] {
    const ref::Pack again = ref::from_all_seq(ref::get_all_seq(pack), pack);
    return again.causal_seq == pack.causal_seq && again.full_only_seq == pack.full_only_seq;
  });
  if (cp > 1) {
    check("gathering every rank's shard gives the pack back", [&] {
      const ref::Pack whole = ref::gather_shards(ref::shard_pack_all(pack, cp));
      return whole.causal_seq == pack.causal_seq && whole.full_only_seq == pack.full_only_seq &&
             whole.causal_sample_ids == pack.causal_sample_ids &&
             whole.full_only_sample_ids == pack.full_only_sample_ids;
    });
    for (std::int64_t r = 0; r < cp; ++r) {
      const auto [c, f] = ref::get_num_real_tokens(ref::shard_pack(pack, r, cp));
      out << "  rank " << r << "   local real rows: causal " << c << ", full " << f << "\n";
    }
  }
  return failed;
}

}  // namespace

int run_examples(std::ostream& out, const std::string& only) {
  int failed = 0;
  int ran = 0;
  for (const Example& ex : examples()) {
    if (!only.empty() && ex.name != only) continue;
    ++ran;
    out << ex.name << ": " << ex.what << "\n";
    print_case(out, ex.layout, ex.options);
    std::size_t rows = 0;
    for (const std::int64_t s : ex.layout.sample_lens) rows += static_cast<std::size_t>(s);
    const ref::Rows input = numbered(rows);
    ref::GraphMarks marks;
    try {
      const ref::Pack pack = ref::build_pack(input, ex.layout, ex.options, marks);
      print_pack(out, pack);
      failed += self_check(out, pack, input, ex.options.cp_world_size);
    } catch (const ref::Error& e) {
      out << "  error    " << e.what() << "\n";
    }
    out << "\n";
  }
  if (ran == 0) {
    out << "no example is named '" << only << "'\n";
    return 1;
  }
  out << "check: " << ran << " examples, " << failed << " failed self-checks\n";
  return failed;
}

int run_check(std::ostream& out, const CheckOptions& options) {
  int failed = run_examples(out, options.only);
  if (!options.only.empty()) return failed;
  // Conformance of every port the build has, both profiles, golden vectors first.
  struct PortEntry {
    std::string name, command;
  };
  std::vector<PortEntry> ports = {{"reference oracle", "'" + options.self + "' oracle"},
                                  {"gpu implementation, thrust cpp backend", "'" SEQPACK_GPU_PORT_CPP "'"},
                                  {"gpu implementation, thrust omp backend", "'" SEQPACK_GPU_PORT_OMP "'"}};
#ifdef SEQPACK_TORCH_PORT
  ports.push_back({"LibTorch binding, CPU tensors", "'" SEQPACK_TORCH_PORT "'"});
#endif
  for (const auto& port : ports) {
    for (const auto profile : {properties::Profile::packer, properties::Profile::strict}) {
      conformance::ConformOptions co;
      co.port = port.command;
      co.profile = profile;
      co.cases = options.time_s > 0 ? 0 : options.cases;
      co.time_s = options.time_s;
      co.seed = options.seed;
      co.vectors_dir = profile == properties::Profile::packer ? SEQPACK_VECTORS_DIR : "";
      out << "\nconformance: " << port.name << ", " << (profile == properties::Profile::packer ? "packer" : "strict")
          << " profile\n";
      std::ostringstream err;
      const int rc = conformance::run_conform(co, out, err);
      out << err.str();
      failed += rc == 0 ? 0 : 1;
    }
  }
  out << "\ncheck: " << (failed == 0 ? "all passed" : std::to_string(failed) + " failed") << "\n";
  return failed;
}

}  // namespace seqpack::cli

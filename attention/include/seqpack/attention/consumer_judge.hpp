// The consumer judge: what a pack does to a consumer (consumer.hpp), branch by
// branch, judged against the intended math rather than against the same
// kernels on the unpadded pack (a fault the kernels share with the spec would
// not show in such a difference). Two analyses, both O(rows) on sane packs:
//  - identity: each real row's output and gradients depend on exactly the
//    rows the consumer means (its own sample's, in order), else the row is
//    changed, crosses samples, or is left unwritten;
//  - poison (layer.hpp): what unwritten rows hold travels through one layer
//    of the consumer as it runs (norms, projections with or without bias,
//    RoPE, o_proj, the residual, the masked MLP), twice: once as NaN, once as
//    finite garbage; a gradient hit by finite garbage is silent, one hit by
//    NaN only is loud.
// CONSUMERS.md derives the branches; README.md gives the severities' order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "seqpack/attention/consequences.hpp"
#include "seqpack/attention/consumer.hpp"

namespace seqpack::attention {

/// One consequence a consumer would see.
struct Finding {
  Severity severity = Severity::metadata_only;
  std::string branch;  ///< "three_way"; "" for the whole pack
  std::string call;    ///< "full_ca"; "layer", "mlp", "moe" for the layer's; "" for the branch
  std::string kind;    ///< "refused", "unwritten", "changed", "gradient", "mask", "sample-ids", "not-judged"
  std::string key;     ///< compares findings across packs (no row numbers where only the class matters)
  std::string text;    ///< one clause
  std::vector<std::string> gradients;  ///< the layer's: every parameter whose gradient the garbage reaches
};

/// What a pack does to one consumer.
struct ConsumerReport {
  ConsumerOptions options;
  std::vector<Finding> findings;
  Severity severity = Severity::metadata_only;
  std::string line;  ///< "consequence [cosmos-5eee9ed on fa3, three_way]: ..."
};

/// The judge's limits on untrusted input, checked before it allocates: a pack
/// past them is not judged (Severity::not_judged), never called harmless.
struct JudgeLimits {
  std::int64_t max_rows = std::int64_t{1} << 22;  ///< rows of a stream, a key buffer or the truth's pack
  std::int64_t max_steps = 20'000'000;            ///< run comparisons in one branch
};

/// Judges `pack` under `options` against the intent that `truth` (the
/// reference's answer for the same case) defines. Deterministic; never throws.
ConsumerReport judge_consumer(const ConsumerInput& pack, const ConsumerInput& truth, const ConsumerOptions& options,
                              const JudgeLimits& limits = {});

/// The port's findings that the reference's own pack does not have (by key),
/// the worst first; metadata-only, "none beyond the reference's own", when
/// there are none.
Verdict compare_consumer(const ConsumerInput& port, const ConsumerInput& reference, const ConsumerOptions& options,
                         const JudgeLimits& limits = {});

/// A multi-line rendering of a report, one finding per line.
std::string format_consumer_report(const ConsumerReport& report);

}  // namespace seqpack::attention

// RapidCheck generators for cases.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <rapidcheck.h>

#include "seqpack/properties/case.hpp"

namespace seqpack::properties {

/// How RapidCheck prints a case: its JSON case line.
inline void showValue(const Case& c, std::ostream& os) { os << to_json(c); }

/// Cases of the packer's layouts (NOTES.md section 2), reaching the edges of
/// the catalogue on purpose: a fixed share on, one below and one above the
/// bucket's tier boundaries, its steps and the multiples of the effective
/// alignment (powers of two and not, cp 1 to 16, image and video); streams
/// already aligned (up to the 2048 tier, cp > 1); odd and large alignments,
/// marks left by earlier calls, empty splits and samples, 1 and 64+ samples,
/// long streams, every row width; and a small share of valid layouts beyond
/// the packer's (zero or two full splits in a sample, see gen_strict_case).
rc::Gen<Case> gen_packer_case();

/// Anything: packer cases, unusual valid layouts (any number of causal and
/// zero to two full splits per sample, empty samples, layouts that break the
/// pad segment's pairing where none is due), and planted faults of each
/// PROTOCOL.md error class (expect_error names it), alone or several at once
/// (the expected class is then the first in PROTOCOL.md's order).
rc::Gen<Case> gen_strict_case();

rc::Gen<Case> gen_case(Profile profile);

/// The valid cases of a profile (strict: packer and unusual valid layouts).
rc::Gen<Case> gen_valid_case(Profile profile);

/// The rows each stream needs before rounding (NOTES.md 4.4-4.6): its tokens,
/// plus the pad segment's reserved row where a segment is due. Invalid layouts
/// read what pairs up; first the causal stream, then the full one.
std::pair<std::int64_t, std::int64_t> stream_needs(const Case& c);

/// The orders in which a generated case lists its und indexes (the spec
/// takes them as a set): ascending, reversed, or the odd positions of the
/// ascending list first, then the even ones.
enum class UndOrder { ascending, reversed, odd_first };

/// `ascending` (sorted) listed in `order`.
std::vector<std::int64_t> und_in_order(std::vector<std::int64_t> ascending, UndOrder order);

/// The order in which `und` lists `ascending`, if it is one of UndOrder's.
std::optional<UndOrder> und_order_of(const std::vector<std::int64_t>& und, const std::vector<std::int64_t>& ascending);

/// The edge classes a case belongs to (for RC_TAG and the distribution check).
std::vector<std::string> classify(const Case& c);

/// A class that a profile's random run must reach, and the least share of the
/// run's cases it must hold.
struct RequiredClass {
  std::string name;
  double min_share;
};

/// The classes a default run of a profile must reach.
const std::vector<RequiredClass>& required_classes(Profile profile);

}  // namespace seqpack::properties

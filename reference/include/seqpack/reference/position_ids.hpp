// Position ids of each stream (the original's get_und/gen_position_ids).
#pragma once

#include "seqpack/reference/errors.hpp"
#include "seqpack/reference/types.hpp"

namespace seqpack::reference {

/// The ids of the causal rows, gathered along the last axis: [len] -> [num_causal],
/// [axes, len] -> [axes, num_causal]. `ids.len` must equal the pack's token count
/// (invalid_argument); sharded_pack on a sharded pack.
PositionIds get_und_position_ids(const PositionIds& ids, const Pack& pack);
/// As get_und_position_ids, for the full rows.
PositionIds get_gen_position_ids(const PositionIds& ids, const Pack& pack);
/// What get_und_position_ids / get_gen_position_ids would throw (errors.hpp, Refusal).
Refusal get_und_position_ids_refusal(const PositionIds& ids, const Pack& pack);
Refusal get_gen_position_ids_refusal(const PositionIds& ids, const Pack& pack);

}  // namespace seqpack::reference

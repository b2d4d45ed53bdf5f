// The whole reference API.
#pragma once

#include "seqpack/reference/context_parallel.hpp"
#include "seqpack/reference/errors.hpp"
#include "seqpack/reference/metadata.hpp"
#include "seqpack/reference/pack.hpp"
#include "seqpack/reference/padding.hpp"
#include "seqpack/reference/position_ids.hpp"
#include "seqpack/reference/types.hpp"
#include "seqpack/reference/views.hpp"

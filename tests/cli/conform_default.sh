#!/usr/bin/env bash
# `seqpack conform --port P` with no other option is the one verdict of
# PROTOCOL.md: this build's golden vectors (sessions included), then packer
# and strict random cases. Fails if any of the three is missing from the run.
#   conform_default.sh SEQPACK
set -euo pipefail
seqpack=$1
out=$("$seqpack" conform --port "'$seqpack' oracle" --cases 64)
echo "$out"
grep -Eq '^conform: [0-9]+ cases \(([1-9][0-9]{2,}) vectors\)' <<<"$out" || { echo "FAIL: no golden vectors replayed"; exit 1; }
grep -Eq ' session=[1-9]' <<<"$out" || { echo "FAIL: no sessions"; exit 1; }
# 64 random cases per profile: both profiles ran when 128 cases follow the vectors.
read -r total vectors < <(sed -nE 's/^conform: ([0-9]+) cases \(([0-9]+) vectors\).*/\1 \2/p' <<<"$out")
(( total - vectors == 128 )) || { echo "FAIL: $((total - vectors)) random cases, not 64 of each profile"; exit 1; }
echo "conform_default: vectors, sessions, packer and strict cases all ran"

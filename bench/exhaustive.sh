#!/usr/bin/env bash
# Bounded-exhaustive checking's speed (docs/exhaustive.md): cases per second
# of one scope in process and over the protocol, for the reference and for
# the original module through its Python adapter, and the time of each scope
# in process. One thread or port each, so that the rates compare; each rate
# is over the same cases of the scope, and the baseline is the reference's
# catalogue-free protocol rate in the same run (the ratios).
#   bench/exhaustive.sh [SEQPACK] [SCOPE] [--scopes]
# With --scopes it also times every scope in process on every core (tiny,
# small, and medium: about an hour on 2 cores).
set -euo pipefail
seqpack=${1:-build/default/cli/seqpack}
scope=${2:-tiny}
here=$(cd "$(dirname "$0")/.." && pwd)
original=$("$seqpack" paths original 2>/dev/null || true)
adapter=$here/ports/python/seqpack_port.py
known=$here/ports/python/original.known_failures

cases=$("$seqpack" exhaustive --list | awk -v s="$scope" '$1 == s { print $NF }')
rate() {  # NAME CASES SECONDS
  awk -v n="$1" -v c="$2" -v s="$3" 'BEGIN { printf "%-52s %9d cases %8.1f s %8.0f cases/s\n", n, c, s, c / s }'
}
seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

echo "scope $scope: $cases cases"
t0=$(date +%s.%N)
"$seqpack" conform --exhaustive "$scope" --no-vectors --jobs 1 --port "$seqpack oracle" > /dev/null
t1=$(date +%s.%N)
base=$(seconds "$t0" "$t1")
rate "reference over the protocol (seqpack oracle)" "$cases" "$base"
engines="reference gpu-cpp gpu-omp"
"$seqpack" exhaustive --engine torch --limit 1 > /dev/null 2>&1 && engines+=" torch"
for engine in $engines; do
  t0=$(date +%s.%N)
  "$seqpack" exhaustive --scope "$scope" --engine "$engine" --jobs 1 > /dev/null
  t1=$(date +%s.%N)
  s=$(seconds "$t0" "$t1")
  label="in process: $engine"
  [[ $engine == reference ]] && label="in process: the catalogue on the reference"
  [[ $engine != reference ]] && label="$label against the reference, every view"
  rate "$label" "$cases" "$s"
  awk -v s="$s" -v b="$base" 'BEGIN { printf "  %.2fx the protocol run'"'"'s time\n", s / b }'
done
if [[ -f "$original" ]] && /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  # A tenth of the scope (every tenth case): the adapter answers a few
  # hundred cases a second.
  t0=$(date +%s.%N)
  out=$("$seqpack" conform --exhaustive "$scope" --shard 0/10 --no-vectors --jobs 1 --known-failures "$known" \
    --port "/usr/bin/python3 '$adapter' '$original'" | grep '^conform:')
  t1=$(date +%s.%N)
  n=$(sed -E 's/^conform: ([0-9]+) cases.*/\1/' <<< "$out")
  s=$(seconds "$t0" "$t1")
  rate "the original through its adapter (shard 0/10)" "$n" "$s"
  awk -v s="$s" -v n="$n" -v b="$base" -v c="$cases" 'BEGIN { printf "  %.0fx the reference'"'"'s time per case\n", (s / n) / (b / c) }'
else
  echo "the original through its adapter: skipped (no original module, or /usr/bin/python3 has no torch)"
fi
if [[ "${3:-}" == --scopes ]]; then
  for s in $("$seqpack" exhaustive --list | awk 'NR > 1 { print $1 }'); do
    t0=$(date +%s.%N)
    "$seqpack" exhaustive --scope "$s" > /dev/null
    t1=$(date +%s.%N)
    n=$("$seqpack" exhaustive --list | awk -v x="$s" '$1 == x { print $NF }')
    rate "scope $s in process, every engine, $(nproc) cores" "$n" "$(seconds "$t0" "$t1")"
  done
fi

#!/usr/bin/env bash
# The runner's throughput against `seqpack oracle`, as a ratio to the
# oracle's own answering cost in the same run (issue 14's speed target:
# 10,000 packer-profile cases/s on the 2-core machine).
#   bench/conform_throughput.sh [SEQPACK] [CASES] [BASELINE_SEQPACK]
# 1. `seqpack conform --profile packer --no-vectors --cases N` against the
#    oracle, whose requests are copied to a file on the way (tee);
# 2. the oracle alone answering that file (hello first), output discarded.
# Prints cases/s of each and the ratio conform time / oracle time: the
# runner's own cost (generation, expected results, encoding, pipe,
# comparison) is (ratio - 1) times the oracle's.
# With BASELINE_SEQPACK (another build, e.g. of an earlier commit), both
# steps run for it too, in the same run and on its own requests, and the
# speed-ups of this build over it are printed.
set -euo pipefail
seqpack=${1:-build/default/cli/seqpack}
cases=${2:-20000}
baseline=${3:-}
work=$(mktemp -d /tmp/seqpack-bench-XXXXXX)
trap 'rm -rf "$work"' EXIT

# measure NAME BINARY: sets conform_s and oracle_s
measure() {
  local name=$1 bin=$2 t0 t1 t2 t3 lines jobs=()
  # One port: N ports' tees would each write the one requests file (a
  # baseline built before --jobs runs one anyway).
  if "$bin" conform --help | grep -q -- --jobs; then jobs=(--jobs 1); fi
  t0=$(date +%s.%N)
  "$bin" conform --profile packer --no-vectors --cases "$cases" "${jobs[@]}" \
    --port "tee '$work/$name.jsonl' | '$bin' oracle" > "$work/$name.txt"
  t1=$(date +%s.%N)
  grep '^conform:' "$work/$name.txt"
  lines=$(wc -l < "$work/$name.jsonl")
  t2=$(date +%s.%N)
  "$bin" oracle < "$work/$name.jsonl" > /dev/null
  t3=$(date +%s.%N)
  conform_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
  oracle_s=$(awk -v a="$t2" -v b="$t3" 'BEGIN { printf "%.3f", b - a }')
  awk -v n="$name" -v c="$cases" -v l="$lines" -v cs="$conform_s" -v os="$oracle_s" 'BEGIN {
    printf "%s conform: %d cases in %.2f s = %.0f cases/s\n", n, c, cs, c / cs;
    printf "%s oracle alone: %d request lines in %.2f s = %.0f lines/s\n", n, l, os, l / os;
    printf "%s ratio conform / oracle: %.2f\n", n, cs / os }'
}

measure this "$seqpack"
if [ -n "$baseline" ]; then
  this_conform=$conform_s this_oracle=$oracle_s
  measure baseline "$baseline"
  awk -v a="$this_conform" -v b="$conform_s" -v x="$this_oracle" -v y="$oracle_s" 'BEGIN {
    printf "speed-up over the baseline: conform %.2fx, oracle alone %.2fx\n", b / a, y / x }'
fi
